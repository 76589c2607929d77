package translate

import (
	"time"
)

// EncodeResponse implements Codec. It writes the Interaction object a
// create call answers with: the output steps only (POST does not echo the
// input, as GET of a stored interaction would), the status the stop reason
// implies (requires_action when the model called functions), and usage.
// Consecutive text parts share one model_output step; every thinking part
// is a thought step, every call a function_call step.
func (interactionsCodec) EncodeResponse(resp *Response, req *Request) ([]byte, error) {
	model := resp.Model
	if req != nil && req.Model != "" {
		model = req.Model
	}
	stop := resp.StopReason
	if stop == StopEndTurn && resp.HasToolCalls() {
		stop = StopToolUse
	}
	now := time.Now().UTC().Format(time.RFC3339)
	b := make([]byte, 0, 256+geminiPartsSize(resp.Parts)+len(resp.Refusal))
	b = append(b, `{"id":`...)
	b = appendJSONString(b, interactionsNewID())
	b = append(b, `,"object":"interaction","status":`...)
	b = appendJSONString(b, interactionsStatus(stop))
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"created":`...)
	b = appendJSONString(b, now)
	b = append(b, `,"updated":`...)
	b = appendJSONString(b, now)
	b = append(b, `,"steps":[`...)
	inText := false // a model_output step is open
	closeText := func() {
		if inText {
			b = append(b, "]}"...)
			inText = false
		}
	}
	for i := range resp.Parts {
		p := &resp.Parts[i]
		switch p.Type {
		case PartText:
			if !inText {
				b = appendJSONComma(b)
				b = append(b, `{"type":"model_output","content":[`...)
				inText = true
			} else {
				b = append(b, ',')
			}
			b = append(b, `{"type":"text","text":`...)
			b = appendJSONString(b, p.Text)
			b = append(b, '}')
		case PartThinking, PartRedactedThinking:
			closeText()
			b = appendJSONComma(b)
			b = interactionsAppendThought(b, p)
		case PartServerToolCall, PartServerToolResult:
			if p.Server == nil {
				continue
			}
			closeText()
			b = appendJSONComma(b)
			b = interactionsAppendServerToolStep(b, p)
		case PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			closeText()
			b = appendJSONComma(b)
			b = append(b, `{"type":"function_call","id":`...)
			b = appendJSONString(b, p.ToolCall.ID)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, p.ToolCall.Name)
			b = append(b, `,"arguments":`...)
			b = geminiAppendArgs(b, p.ToolCall.Arguments)
			b = append(b, '}')
		}
	}
	closeText()
	if resp.Refusal != "" {
		b = appendJSONComma(b)
		b = append(b, `{"type":"model_output","content":[{"type":"text","text":`...)
		b = appendJSONString(b, resp.Refusal)
		b = append(b, "}]}"...)
	}
	b = append(b, `],"usage":`...)
	b = interactionsAppendUsage(b, &resp.Usage)
	return append(b, '}'), nil
}

// interactionsAppendThought appends the thought step of a thinking or
// redacted thinking part: its signature, and its text as the summary.
func interactionsAppendThought(b []byte, p *Part) []byte {
	b = append(b, `{"type":"thought"`...)
	if sig := interactionsSignature(p); sig != "" {
		b = append(b, `,"signature":`...)
		b = appendJSONString(b, sig)
	}
	if p.Type == PartThinking && p.Text != "" {
		b = append(b, `,"summary":[{"type":"text","text":`...)
		b = appendJSONString(b, p.Text)
		b = append(b, "}]"...)
	}
	return append(b, '}')
}

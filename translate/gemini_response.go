package translate

import "github.com/tidwall/gjson"

// DecodeResponse implements Codec. It reads a GenerateContentResponse
// through the stream decoder, so a whole answer and a streamed one mean the
// same thing. A streamed JSON array ([{...},{...}], what
// streamGenerateContent returns without alt=sse) is accepted too and read
// chunk by chunk. An answer without a finishReason is taken as complete.
func (geminiCodec) DecodeResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream response: " + oaiSnippetN(body, 200)}
	}
	root := gjson.ParseBytes(body)
	var d geminiStreamDecoder
	var acc Accumulator
	var events []Event
	feed := func(chunk gjson.Result) bool {
		if !chunk.IsObject() {
			events = d.em.Fail(events[:0], &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream response: " + oaiSnippetN([]byte(chunk.Raw), 200)})
		} else {
			events = d.chunk(events[:0], chunk)
		}
		for i := range events {
			acc.Add(&events[i])
		}
		return !d.em.Done()
	}
	if root.IsArray() {
		root.ForEach(func(_, c gjson.Result) bool { return feed(c) })
	} else {
		feed(root)
	}
	if !d.em.Done() {
		events = d.em.Stop(events[:0], StopEndTurn, "", nil)
		for i := range events {
			acc.Add(&events[i])
		}
	}
	resp, err := acc.Result()
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// EncodeResponse implements Codec. It writes one GenerateContentResponse
// with a single candidate.
func (geminiCodec) EncodeResponse(resp *Response, req *Request) ([]byte, error) {
	model := resp.Model
	if req != nil && req.Model != "" {
		model = req.Model
	}
	b := make([]byte, 0, 256+geminiPartsSize(resp.Parts))
	b = append(b, `{"candidates":[{"content":{"role":"model","parts":[`...)
	var grounding geminiGroundingOut
	textAt := 0 // where the part's text starts in the answer's, for citations
	for i := range resp.Parts {
		p := &resp.Parts[i]
		if p.Type == PartServerToolCall || p.Type == PartServerToolResult {
			grounding.add(p.Type, p.Server) // on the candidate, below
			continue
		}
		if p.Type == PartText {
			for j := range p.Citations {
				grounding.cite(&p.Citations[j], p.Text, textAt)
			}
			textAt += len(p.Text)
		}
		n := len(b)
		b = appendJSONComma(b)
		switch p.Type {
		case PartText:
			b = append(b, `{"text":`...)
			b = appendJSONString(b, p.Text)
			b = append(b, '}')
		case PartThinking:
			sig := geminiSignatureOrEmpty(p.Signature)
			if p.Text == "" && sig == "" {
				b = b[:n]
				continue
			}
			b = append(b, `{"text":`...)
			b = appendJSONString(b, p.Text)
			b = append(b, `,"thought":true`...)
			if sig != "" {
				b = append(b, `,"thoughtSignature":`...)
				b = appendJSONString(b, sig)
			}
			b = append(b, '}')
		case PartToolCall:
			if p.ToolCall == nil {
				b = b[:n]
				continue
			}
			b = geminiAppendFunctionCallPart(b, p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.Arguments)
		default:
			b = b[:n] // redacted thinking: nothing a Gemini client can hold
		}
	}
	if resp.Refusal != "" {
		b = appendJSONComma(b)
		b = append(b, `{"text":`...)
		b = appendJSONString(b, resp.Refusal)
		b = append(b, '}')
	}
	b = append(b, `]},"finishReason":`...)
	b = appendJSONString(b, geminiFinishReason(resp.StopReason))
	b = append(b, `,"index":0`...)
	b = grounding.append(b)
	b = append(b, `}],"usageMetadata":`...)
	b = geminiAppendUsage(b, &resp.Usage)
	b = append(b, `,"modelVersion":`...)
	b = appendJSONString(b, model)
	if resp.ID != "" {
		b = append(b, `,"responseId":`...)
		b = appendJSONString(b, resp.ID)
	}
	return append(b, '}'), nil
}

func geminiPartsSize(parts []Part) int {
	n := 0
	for i := range parts {
		p := &parts[i]
		n += 32 + len(p.Text) + len(p.Signature)
		if p.ToolCall != nil {
			n += 64 + len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
		}
	}
	return n
}

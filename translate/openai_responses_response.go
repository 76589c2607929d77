package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// DecodeResponse implements Codec. It reads a Responses response object:
// the output items in order (reasoning becomes thinking, messages text,
// function and custom tool calls tool calls), the status as the stop reason
// and the usage. A failed response is an error.
func (openAIResponsesCodec) DecodeResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream response: " + oaiSnippetN(body, 200)}
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.IsObject() && !root.Get("output").Exists() {
		return nil, oaiErrorFromBody(0, root) // an error body sent with a 2xx status
	}
	status := root.Get("status").Str
	if status == "failed" || status == "cancelled" {
		if e := root.Get("error"); e.IsObject() {
			return nil, respErrorFromObject(e)
		}
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "upstream response " + status}
	}
	resp := &Response{ID: root.Get("id").Str, Model: root.Get("model").Str}
	root.Get("output").ForEach(func(_, it gjson.Result) bool {
		respDecodeOutputItem(resp, it)
		return true
	})
	resp.StopReason = respStopReason(status, root.Get("incomplete_details.reason").Str)
	switch {
	case resp.StopReason == StopEndTurn && resp.HasToolCalls():
		resp.StopReason = StopToolUse
	case resp.StopReason == StopEndTurn && resp.Refusal != "":
		resp.StopReason = StopRefusal
	}
	if u := root.Get("usage"); u.IsObject() {
		resp.Usage = respDecodeUsage(u)
	}
	return resp, nil
}

// respDecodeOutputItem appends the parts of one output item to resp.
func respDecodeOutputItem(resp *Response, it gjson.Result) {
	switch it.Get("type").Str {
	case "message":
		it.Get("content").ForEach(func(_, c gjson.Result) bool {
			switch c.Get("type").Str {
			case "output_text":
				if t := c.Get("text").Str; t != "" {
					resp.Parts = append(resp.Parts, Part{Type: PartText, Text: t, Citations: respCitations(c.Get("annotations"), t)})
				}
			case "refusal":
				resp.Refusal += c.Get("refusal").Str
			}
			return true
		})
	case "reasoning":
		if strings.HasPrefix(it.Get("id").Str, respRedactedPrefix) {
			// louter's own stand-in for a redacted_thinking block.
			if enc := it.Get("encrypted_content").Str; enc != "" {
				resp.Parts = append(resp.Parts, Part{Type: PartRedactedThinking, Signature: enc})
			}
			return
		}
		text := respReasoningText(it)
		sig := respPackSignature(it.Get("id").Str, it.Get("encrypted_content").Str)
		if text != "" || sig != "" {
			resp.Parts = append(resp.Parts, Part{Type: PartThinking, Text: text, Signature: sig})
		}
	case "function_call":
		id := it.Get("call_id").Str
		if id == "" {
			id = oaiNewCallID()
		}
		resp.Parts = append(resp.Parts, oaiToolCallPart(id, it.Get("name").Str, it.Get("arguments")))
	case "custom_tool_call":
		id := it.Get("call_id").Str
		if id == "" {
			id = oaiNewCallID()
		}
		resp.Parts = append(resp.Parts, Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: it.Get("name").Str, Arguments: respCustomArguments(it.Get("input").Str)}})
	case "web_search_call":
		call, result := respServerToolParts(it)
		resp.Parts = append(resp.Parts, call)
		if result != nil {
			resp.Parts = append(resp.Parts, *result)
		}
	}
	// Items of other hosted tools (file_search_call, ...) are OpenAI's
	// own business: louter never asks for those tools.
}

// respReasoningText is a reasoning item's summary, its parts separated by
// blank lines, or else its raw reasoning text.
func respReasoningText(it gjson.Result) string {
	var text strings.Builder
	for _, key := range [...]string{"summary", "content"} {
		it.Get(key).ForEach(func(_, s gjson.Result) bool {
			if t := s.Get("text").Str; t != "" {
				if text.Len() > 0 {
					text.WriteString("\n\n")
				}
				text.WriteString(t)
			}
			return true
		})
		if text.Len() > 0 {
			break
		}
	}
	return text.String()
}

// EncodeResponse implements Codec. It writes a response object for the
// client; req is the client's request (for the model name and to tell
// custom tools).
func (openAIResponsesCodec) EncodeResponse(resp *Response, req *Request) ([]byte, error) {
	size := 512
	for i := range resp.Parts {
		p := &resp.Parts[i]
		size += 128 + len(p.Text) + len(p.Signature)
		if p.ToolCall != nil {
			size += len(p.ToolCall.Arguments)
		}
	}
	out := make([]byte, 0, size)
	for i := 0; i < len(resp.Parts); i++ {
		p := &resp.Parts[i]
		switch p.Type {
		case PartText:
			j := i
			for j+1 < len(resp.Parts) && resp.Parts[j+1].Type == PartText {
				j++
			}
			out = appendJSONComma(out)
			out = respAppendMessageItem(out, respNewMessageID(), "completed", resp.Parts[i:j+1], "")
			i = j
		case PartThinking:
			id, enc, ok := respUnpackSignature(p.Signature)
			if !ok {
				id = respNewReasoningID()
			}
			out = appendJSONComma(out)
			out = respAppendReasoningItem(out, id, p.Text, enc)
		case PartRedactedThinking:
			out = appendJSONComma(out)
			out = respAppendReasoningItem(out, respNewRedactedID(), "", p.Signature)
		case PartServerToolCall, PartServerToolResult:
			out = respAppendServerToolItems(out, resp.Parts, i)
		case PartToolCall:
			tc := p.ToolCall
			if tc == nil {
				continue
			}
			id := tc.ID
			if id == "" {
				id = oaiNewCallID()
			}
			out = appendJSONComma(out)
			if respIsCustom(req, tc.Name) {
				out = respAppendCustomCallItem(out, respNewCustomItemID(), "completed", id, tc.Name, respCustomInput(tc.Arguments))
			} else {
				out = respAppendFunctionCallItem(out, respNewCallItemID(), "completed", id, tc.Name, tc.Arguments)
			}
		}
	}
	if resp.Refusal != "" {
		out = appendJSONComma(out)
		out = respAppendMessageItem(out, respNewMessageID(), "completed", nil, resp.Refusal)
	}
	status, reason := respStatus(resp.StopReason)
	if resp.Refusal != "" && resp.StopReason == StopRefusal {
		// OpenAI's own refusals complete, with the refusal part.
		status, reason = "completed", ""
	}
	obj := respObject{id: resp.ID, status: status, incompleteReason: reason, usage: &resp.Usage, output: out}
	if req != nil {
		obj.model = req.Model
		obj.req = req
	}
	if obj.model == "" {
		obj.model = resp.Model
	}
	if !strings.HasPrefix(obj.id, "resp_") {
		obj.id = respNewResponseID()
	}
	return obj.append(make([]byte, 0, len(out)+768)), nil
}

// respObject is a response object to write: the one non-streaming clients
// get, and the one stream events carry.
type respObject struct {
	id               string
	model            string
	createdAt        int64
	status           string // in_progress, completed, incomplete, failed
	incompleteReason string
	err              *Error
	usage            *Usage // nil: null (until the response is complete)
	output           []byte // the output items, comma-separated
	req              *Request
}

func (o *respObject) append(b []byte) []byte {
	created := o.createdAt
	if created == 0 {
		created = oaiNow().Unix()
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, o.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = appendJSONInt(b, created)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, o.status)
	b = append(b, `,"background":false,"error":`...)
	if o.err != nil {
		err := o.err.forClient(ProtocolOpenAIResponses)
		typ, code := oaiErrorTypeCode(err.Kind)
		if err.Code != "" {
			code = err.Code
		}
		if code == "" {
			code = typ
		}
		b = append(b, `{"code":`...)
		b = appendJSONString(b, code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, err.Message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if o.incompleteReason != "" {
		b = append(b, `{"reason":`...)
		b = appendJSONString(b, o.incompleteReason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":null,"max_output_tokens":`...)
	if o.req != nil && o.req.MaxTokens > 0 {
		b = appendJSONInt(b, int64(o.req.MaxTokens))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, o.model)
	b = append(b, `,"output":[`...)
	b = append(b, o.output...)
	b = append(b, `],"parallel_tool_calls":`...)
	b = appendJSONBool(b, o.req == nil || o.req.ParallelToolCalls == nil || *o.req.ParallelToolCalls)
	b = append(b, `,"previous_response_id":`...)
	if o.req != nil {
		b = appendJSONStringOrNull(b, o.req.PreviousResponseID)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"reasoning":{"effort":`...)
	if o.req != nil && o.req.Reasoning != nil && o.req.Reasoning.Effort != "" {
		b = appendJSONString(b, o.req.Reasoning.Effort)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"summary":`...)
	b = appendJSONStringOrNull(b, respEchoSummary(o.req))
	b = append(b, `},"store":`...)
	b = appendJSONBool(b, o.req != nil && o.req.Stored)
	b = respAppendEcho(b, o.req) // the request's tools and sampling (openai_responses_echo.go)
	b = append(b, `,"usage":`...)
	if o.usage != nil {
		b = respAppendUsage(b, o.usage)
	} else {
		b = append(b, "null"...)
	}
	return append(b, `,"metadata":{}}`...)
}

// respAppendMessageItem appends an assistant message item holding the text
// of parts as one output_text, or a refusal.
func respAppendMessageItem(b []byte, id, status string, parts []Part, refusal string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"message","status":`...)
	b = appendJSONString(b, status)
	b = append(b, `,"role":"assistant","content":[`...)
	if refusal != "" {
		b = append(b, `{"type":"refusal","refusal":`...)
		b = appendJSONString(b, refusal)
		b = append(b, '}')
	} else if len(parts) > 0 {
		b = respAppendOutputText(b, parts)
	}
	return append(b, "]}"...)
}

// respAppendOutputText appends an output_text content part holding the
// text of parts.
func respAppendOutputText(b []byte, parts []Part) []byte {
	b = append(b, `{"type":"output_text","annotations":`...)
	b = respAppendAnnotations(b, parts) // openai_responses_citations.go
	b = append(b, `,"logprobs":[],"text":`...)
	b = oaiAppendTextJoin(b, "", parts, PartText, "")
	return append(b, '}')
}

// respAppendReasoningItem appends a reasoning item with one summary part
// (none without text) and its encrypted content, if any.
func respAppendReasoningItem(b []byte, id, text, enc string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"reasoning","summary":[`...)
	if text != "" {
		b = append(b, `{"type":"summary_text","text":`...)
		b = appendJSONString(b, text)
		b = append(b, '}')
	}
	b = append(b, ']')
	if enc != "" {
		b = append(b, `,"encrypted_content":`...)
		b = appendJSONString(b, enc)
	}
	return append(b, '}')
}

// respAppendFunctionCallItem appends a function_call item.
func respAppendFunctionCallItem(b []byte, id, status, callID, name, args string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"function_call","status":`...)
	b = appendJSONString(b, status)
	b = append(b, `,"arguments":`...)
	if status == "completed" && strings.TrimSpace(args) == "" {
		args = "{}"
	}
	b = appendJSONString(b, args)
	b = append(b, `,"call_id":`...)
	b = appendJSONString(b, callID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	return append(b, '}')
}

// respAppendCustomCallItem appends a custom_tool_call item.
func respAppendCustomCallItem(b []byte, id, status, callID, name, input string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"custom_tool_call","status":`...)
	b = appendJSONString(b, status)
	b = append(b, `,"call_id":`...)
	b = appendJSONString(b, callID)
	b = append(b, `,"input":`...)
	b = appendJSONString(b, input)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	return append(b, '}')
}

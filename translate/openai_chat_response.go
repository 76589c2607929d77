package translate

import "github.com/tidwall/gjson"

// DecodeResponse implements Codec. It reads the first choice of a
// chat.completion: reasoning (in whichever field the server uses) becomes a
// thinking part, then the text, then the tool calls.
func (openAIChatCodec) DecodeResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream response: " + oaiSnippetN(body, 200)}
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return nil, oaiErrorFromBody(0, root)
	}
	choice := root.Get("choices.0")
	if !choice.IsObject() {
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "upstream response has no choices"}
	}
	msg := choice.Get("message")
	resp := &Response{ID: root.Get("id").Str, Model: root.Get("model").Str}
	if r := oaiReasoningText(msg); r != "" {
		resp.Parts = append(resp.Parts, Part{Type: PartThinking, Text: r})
	}
	switch c := msg.Get("content"); {
	case c.Type == gjson.String && c.Str != "":
		resp.Parts = append(resp.Parts, Part{Type: PartText, Text: c.Str})
	case c.IsArray():
		// Some servers answer with content parts.
		c.ForEach(func(_, p gjson.Result) bool {
			if t := p.Get("text"); t.Type == gjson.String && t.Str != "" {
				resp.Parts = append(resp.Parts, Part{Type: PartText, Text: t.Str})
			}
			return true
		})
	}
	if r := msg.Get("refusal"); r.Type == gjson.String {
		resp.Refusal = r.Str
	}
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		id := tc.Get("id").Str
		if id == "" {
			id = oaiNewCallID()
		}
		resp.Parts = append(resp.Parts, oaiToolCallPart(id, tc.Get("function.name").Str, tc.Get("function.arguments")))
		return true
	})
	if fc := msg.Get("function_call"); fc.IsObject() {
		resp.Parts = append(resp.Parts, oaiToolCallPart(oaiNewCallID(), fc.Get("name").Str, fc.Get("arguments")))
	}

	resp.StopReason = oaiStopReason(choice.Get("finish_reason").Str)
	switch {
	case resp.StopReason == StopEndTurn && resp.HasToolCalls():
		// Several servers report "stop" after a tool call.
		resp.StopReason = StopToolUse
	case resp.StopReason == StopEndTurn && resp.Refusal != "":
		// OpenAI ends a refusal with "stop".
		resp.StopReason = StopRefusal
	}
	if u := root.Get("usage"); u.IsObject() {
		resp.Usage = oaiDecodeUsage(u)
	}
	return resp, nil
}

// EncodeResponse implements Codec. It writes a chat.completion for the
// client; req is the client's request (for the model name).
func (openAIChatCodec) EncodeResponse(resp *Response, req *Request) ([]byte, error) {
	texts, thinking, calls, size := 0, 0, 0, 256
	for i := range resp.Parts {
		p := &resp.Parts[i]
		switch p.Type {
		case PartText:
			texts++
		case PartThinking:
			thinking++
		case PartToolCall:
			calls++
			size += 96 + len(p.ToolCall.Arguments)
		}
		// Signatures and redacted thinking travel in tool-call ids
		// (oaiCallIDs), if at all.
		size += len(p.Text) + len(p.Signature)
	}
	id := ownID(resp.ID, oaiCompletionIDPrefix)
	model := resp.Model
	if req != nil && req.Model != "" {
		model = req.Model
	}

	b := make([]byte, 0, size+size/16)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = appendJSONInt(b, oaiNow().Unix())
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if texts > 0 {
		// The text parts of one answer are one text (they were split
		// around tool calls or by the stream), joined without a separator.
		b = oaiAppendTextJoin(b, "", resp.Parts, PartText, "")
	} else {
		b = append(b, "null"...)
	}
	if thinking > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = oaiAppendTextJoin(b, "", resp.Parts, PartThinking, "")
	}
	if calls > 0 {
		ids := oaiCallIDs(resp.Parts) // signed thinking travels in the ids
		b = append(b, `,"tool_calls":[`...)
		first := true
		for i := range resp.Parts {
			p := &resp.Parts[i]
			if p.Type != PartToolCall || p.ToolCall == nil {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			id, ok := ids[i]
			if !ok {
				id = p.ToolCall.ID
			}
			b = oaiAppendToolCall(b, -1, id, p.ToolCall.Name, p.ToolCall.Arguments)
		}
		b = append(b, ']')
	}
	b = append(b, `,"refusal":`...)
	b = appendJSONStringOrNull(b, resp.Refusal)
	b = append(b, `},"logprobs":null,"finish_reason":"`...)
	finish := oaiFinishReason(resp.StopReason)
	if resp.Refusal != "" && resp.StopReason == StopRefusal {
		// OpenAI reports its own refusals with "stop" and the refusal text.
		finish = "stop"
	}
	b = append(b, finish...)
	b = append(b, `"}],"usage":`...)
	b = oaiAppendUsage(b, &resp.Usage)
	return append(b, '}'), nil
}

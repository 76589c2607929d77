package translate

import (
	"strings"
)

// Reasons recorded with Request.Drop by the Responses EncodeRequest.
const (
	respDropCacheControl = "the Responses API has no cache breakpoints (OpenAI caches prompts on its own)"
	respDropForeignSig   = "reasoning from another protocol cannot be sent to a Responses backend"
)

// respMaxCallIDLength is the longest call_id the Responses API accepts.
const respMaxCallIDLength = 64

// EncodeRequest implements Codec. It writes a stateless Responses request
// (store:false, the whole history in input) for a Responses backend, from an
// IR that came from another protocol: Claude Code, Cursor or Gemini CLI on a
// model that is served only through the Responses API.
func (openAIResponsesCodec) EncodeRequest(req *Request) ([]byte, error) {
	e := respRequestEncoder{req: req}
	b := make([]byte, 0, oaiRequestSizeHint(req))
	b = append(b, `{"model":`...)
	b = appendJSONString(b, req.Model)
	if len(req.System) > 0 {
		b = e.appendInstructions(b)
	}
	b = append(b, `,"input":[`...)
	b = e.appendItems(b)
	b = append(b, ']')

	if len(req.Tools) > 0 || len(req.ServerTools) > 0 {
		b = e.appendTools(b)
		if st := req.forcedServerTool(); st != nil {
			b = respAppendServerToolChoice(b, req, st)
		} else if req.ToolChoice != nil {
			b = respAppendToolChoice(b, req.ToolChoice)
		}
		if req.ParallelToolCalls != nil {
			b = append(b, `,"parallel_tool_calls":`...)
			b = appendJSONBool(b, *req.ParallelToolCalls)
		}
	} else if tc := req.ToolChoice; tc != nil && (tc.Mode == ToolChoiceRequired || tc.Mode == ToolChoiceTool) {
		req.Drop("tool_choice", "no tools were given")
	}

	if req.MaxTokens > 0 {
		b = append(b, `,"max_output_tokens":`...)
		b = appendJSONInt(b, int64(req.MaxTokens))
	}
	b = oaiAppendFloatField(b, "temperature", req.Temperature)
	b = oaiAppendFloatField(b, "top_p", req.TopP)
	if req.TopK != nil {
		req.Drop("top_k", "the Responses API has no top_k")
	}
	if req.Seed != nil {
		req.Drop("seed", "the Responses API has no seed")
	}
	if req.PresencePenalty != nil || req.FrequencyPenalty != nil {
		req.Drop("penalties", "the Responses API has no presence or frequency penalty")
	}
	if len(req.StopSequences) > 0 {
		req.Drop("stop_sequences", "the Responses API has no stop sequences")
	}
	reasoning := e.appendReasoning(&b)
	if rf := req.ResponseFormat; rf != nil {
		b = respAppendTextFormat(b, rf)
	}
	if req.User != "" {
		b = append(b, `,"user":`...)
		b = appendJSONString(b, req.User)
	}
	// Stateless: nothing is stored at OpenAI, so the encrypted reasoning
	// comes back with the answer and goes out again with the next turn.
	b = append(b, `,"store":false`...)
	if reasoning || e.reasoningItems > 0 {
		b = append(b, `,"include":["reasoning.encrypted_content"]`...)
	}
	if req.Stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}'), nil
}

// respRequestEncoder holds the state of one EncodeRequest call.
type respRequestEncoder struct {
	req            *Request
	reasoningItems int
	media          []*Part // images and documents of the user turn being written
}

func (e *respRequestEncoder) noteCacheControl(p *Part) {
	if len(p.CacheControl) > 0 {
		e.req.Drop("cache_control", respDropCacheControl)
	}
}

// appendInstructions writes the system prompt's text parts as
// instructions, joined by blank lines.
func (e *respRequestEncoder) appendInstructions(b []byte) []byte {
	for i := range e.req.System {
		p := &e.req.System[i]
		e.noteCacheControl(p)
		if p.Type != PartText {
			e.req.Drop("system."+string(p.Type), "instructions carry text only")
		}
	}
	b = append(b, `,"instructions":`...)
	return oaiAppendTextJoin(b, "", e.req.System, PartText, "\n\n")
}

func (e *respRequestEncoder) appendItems(b []byte) []byte {
	// Server tool blocks another provider made go as text
	// (server_tool_results.go).
	msgs := withServerToolsAsText(e.req.Messages, openAIResponsesCodec{}.KeepsServerTool)
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleSystem:
			b = e.appendSystemMessage(b, m)
		case RoleAssistant:
			b = e.appendAssistant(b, m)
		default:
			b = e.appendUser(b, m)
		}
	}
	return b
}

// appendSystemMessage writes a system message from the middle of the
// conversation as a developer message, the Responses API's name for it.
func (e *respRequestEncoder) appendSystemMessage(b []byte, m *Message) []byte {
	texts := 0
	for i := range m.Parts {
		e.noteCacheControl(&m.Parts[i])
		if m.Parts[i].Type == PartText {
			texts++
		}
	}
	if texts == 0 {
		return b
	}
	b = appendJSONComma(b)
	b = append(b, `{"type":"message","role":"developer","content":[{"type":"input_text","text":`...)
	b = oaiAppendTextJoin(b, "", m.Parts, PartText, "\n\n")
	return append(b, "}]}"...)
}

// appendUser writes a user turn: its tool results as function_call_output
// items first (they must follow the calls), then a user message with the
// rest.
func (e *respRequestEncoder) appendUser(b []byte, m *Message) []byte {
	e.media = e.media[:0]
	for i := range m.Parts {
		p := &m.Parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartToolResult:
			b = e.appendToolOutput(b, p.ToolResult)
		case PartText, PartImage, PartDocument:
			e.media = append(e.media, p)
		default:
			e.req.Drop("messages.user."+string(p.Type), "not valid in a user message")
		}
	}
	if len(e.media) == 0 {
		return b
	}
	b = appendJSONComma(b)
	b = append(b, `{"type":"message","role":"user","content":[`...)
	for _, p := range e.media {
		b = e.appendInputPart(b, p)
	}
	return append(b, "]}"...)
}

// appendToolOutput writes a function_call_output item. A text-only result
// is a string; one with images or documents is a content array.
func (e *respRequestEncoder) appendToolOutput(b []byte, tr *ToolResult) []byte {
	b = appendJSONComma(b)
	b = append(b, `{"type":"function_call_output","call_id":`...)
	b = appendJSONString(b, boundToolID(tr.CallID, respMaxCallIDLength))
	b = append(b, `,"output":`...)
	prefix := ""
	if tr.IsError {
		prefix = "Error: " // no error flag on Responses tool outputs
	}
	rich := false
	for i := range tr.Content {
		e.noteCacheControl(&tr.Content[i])
		if t := tr.Content[i].Type; t == PartImage || t == PartDocument {
			rich = true
		}
	}
	if !rich {
		b = oaiAppendTextJoin(b, prefix, tr.Content, PartText, "\n")
		return append(b, '}')
	}
	b = append(b, '[')
	if prefix != "" {
		b = append(b, `{"type":"input_text","text":"Error:"}`...)
	}
	for i := range tr.Content {
		b = e.appendInputPart(b, &tr.Content[i])
	}
	return append(b, "]}"...)
}

// appendInputPart writes one input content part (input_text, input_image,
// input_file), preceded by a comma when needed; a part that cannot be
// expressed is left out with its reason recorded.
func (e *respRequestEncoder) appendInputPart(b []byte, p *Part) []byte {
	switch p.Type {
	case PartText:
		if p.Text == "" {
			return b
		}
		b = appendJSONComma(b)
		b = append(b, `{"type":"input_text","text":`...)
		b = appendJSONString(b, p.Text)
		return append(b, '}')
	case PartImage:
		m := p.Media
		if m == nil {
			return b
		}
		b = appendJSONComma(b)
		b = append(b, `{"type":"input_image"`...)
		switch {
		case m.Data != "":
			b = append(b, `,"image_url":`...)
			b = oaiAppendDataURL(b, m.MediaType, m.Data)
		case m.URL != "":
			b = append(b, `,"image_url":`...)
			b = appendJSONString(b, m.URL)
		default:
			b = append(b, `,"file_id":`...)
			b = appendJSONString(b, m.FileID)
		}
		detail := m.Detail
		if detail == "" {
			detail = "auto" // required by the API
		}
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, detail)
		return append(b, '}')
	case PartDocument:
		m := p.Media
		if m == nil {
			return b
		}
		b = appendJSONComma(b)
		b = append(b, `{"type":"input_file"`...)
		switch {
		case m.Data != "":
			name := m.Filename
			if name == "" {
				name = m.Title
			}
			if name == "" {
				name = "document"
			}
			b = append(b, `,"filename":`...)
			b = appendJSONString(b, name)
			b = append(b, `,"file_data":`...)
			b = oaiAppendDataURL(b, m.MediaType, m.Data)
		case m.FileID != "":
			b = append(b, `,"file_id":`...)
			b = appendJSONString(b, m.FileID)
		default:
			b = append(b, `,"file_url":`...)
			b = appendJSONString(b, m.URL)
		}
		return append(b, '}')
	}
	e.req.Drop("content."+string(p.Type), "not valid in a user message")
	return b
}

// appendAssistant writes an assistant turn as the items the model made, in
// order: reasoning items, a message for each run of text, function calls.
func (e *respRequestEncoder) appendAssistant(b []byte, m *Message) []byte {
	for i := 0; i < len(m.Parts); i++ {
		p := &m.Parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
			// A run of text parts is one message.
			j := i
			for j+1 < len(m.Parts) && m.Parts[j+1].Type == PartText {
				j++
			}
			b = appendJSONComma(b)
			b = append(b, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`...)
			b = oaiAppendTextJoin(b, "", m.Parts[i:j+1], PartText, "")
			b = append(b, `,"annotations":[]}]}`...)
			i = j
		case PartToolCall:
			tc := p.ToolCall
			if tc == nil {
				continue
			}
			b = appendJSONComma(b)
			b = append(b, `{"type":"function_call","call_id":`...)
			b = appendJSONString(b, boundToolID(tc.ID, respMaxCallIDLength))
			b = append(b, `,"name":`...)
			b = appendJSONString(b, tc.Name)
			b = append(b, `,"arguments":`...)
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			b = appendJSONString(b, args)
			b = append(b, '}')
		case PartThinking:
			b = e.appendReasoningItem(b, p)
		case PartRedactedThinking:
			e.req.Drop("redacted_thinking", respDropForeignSig)
		case PartServerToolCall, PartServerToolResult:
			b = respAppendServerToolItems(b, m.Parts, i)
		default:
			e.req.Drop("messages.assistant."+string(p.Type), "assistant turns carry text, reasoning and tool calls only")
		}
	}
	return b
}

// appendReasoningItem sends back a reasoning item the Responses backend
// made. Only reasoning with the backend's own encrypted content (see
// respPackSignature) can go back: with store:false, OpenAI knows a
// reasoning item only by it.
func (e *respRequestEncoder) appendReasoningItem(b []byte, p *Part) []byte {
	id, enc, ok := respUnpackSignature(p.Signature)
	if !ok {
		if p.Signature == "" {
			e.req.Drop("thinking", "reasoning without encrypted content cannot be sent back to a Responses backend")
		} else {
			e.req.Drop("thinking", respDropForeignSig)
		}
		return b
	}
	e.reasoningItems++
	b = appendJSONComma(b)
	b = append(b, `{"type":"reasoning","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"summary":[`...)
	if p.Text != "" {
		b = append(b, `{"type":"summary_text","text":`...)
		b = appendJSONString(b, p.Text)
		b = append(b, '}')
	}
	b = append(b, `],"encrypted_content":`...)
	b = appendJSONString(b, enc)
	return append(b, '}')
}

// appendTools writes flat function tools. strict is always sent: the
// Responses API makes function tools strict by default, which rejects the
// loose schemas other protocols' clients send.
func (e *respRequestEncoder) appendTools(b []byte) []byte {
	b = append(b, `,"tools":[`...)
	for i := range e.req.Tools {
		t := &e.req.Tools[i]
		if len(t.CacheControl) > 0 {
			e.req.Drop("cache_control", respDropCacheControl)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, t.Name)
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONString(b, t.Description)
		}
		b = append(b, `,"parameters":`...)
		if len(t.Schema) > 0 {
			b = append(b, t.Schema...)
		} else {
			b = append(b, `{"type":"object","properties":{}}`...)
		}
		b = append(b, `,"strict":`...)
		b = appendJSONBool(b, t.Strict != nil && *t.Strict)
		b = append(b, '}')
	}
	for i := range e.req.ServerTools {
		if i > 0 || len(e.req.Tools) > 0 {
			b = append(b, ',')
		}
		b = e.appendServerTool(b, &e.req.ServerTools[i])
	}
	return append(b, ']')
}

func respAppendToolChoice(b []byte, tc *ToolChoice) []byte {
	b = append(b, `,"tool_choice":`...)
	switch tc.Mode {
	case ToolChoiceNone:
		return append(b, `"none"`...)
	case ToolChoiceTool:
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, tc.Name)
		return append(b, '}')
	}
	mode := "auto"
	if tc.Mode == ToolChoiceRequired {
		mode = "required"
	}
	if len(tc.Allowed) == 0 {
		b = append(b, '"')
		b = append(b, mode...)
		return append(b, '"')
	}
	b = append(b, `{"type":"allowed_tools","mode":"`...)
	b = append(b, mode...)
	b = append(b, `","tools":[`...)
	for i, name := range tc.Allowed {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, name)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendReasoning writes the reasoning object and reports whether reasoning
// was asked for. An effort is sent as given (an Anthropic token budget
// becomes one, thinking without a depth asks for medium); a summary is
// always asked for, because clients of the other protocols show the
// model's thinking and have nothing else to show.
func (e *respRequestEncoder) appendReasoning(bp *[]byte) bool {
	r := e.req.Reasoning
	if r == nil || r.Mode == ReasoningDisabled && r.Effort != "none" {
		return false
	}
	effort := r.Effort
	if effort == "" && r.Mode == ReasoningEnabled {
		if r.BudgetTokens > 0 {
			effort = oaiEffortForBudget(r.BudgetTokens)
			e.req.Drop("thinking.budget_tokens", "sent as reasoning effort "+effort)
		} else {
			// Thinking asked for without a depth (Gemini's
			// includeThoughts or dynamic budget): the API's default
			// effort, said out loud so the backend does think.
			effort = "medium"
		}
	}
	b := append(*bp, `,"reasoning":{`...)
	if effort != "" {
		b = append(b, `"effort":`...)
		b = appendJSONString(b, effort)
	}
	if effort != "none" {
		summary := "auto"
		switch r.Display {
		case "concise", "detailed":
			summary = r.Display
		}
		b = appendJSONComma(b)
		b = append(b, `"summary":`...)
		b = appendJSONString(b, summary)
	}
	*bp = append(b, '}')
	return effort != "none"
}

// respAppendTextFormat writes text.format for structured output.
func respAppendTextFormat(b []byte, rf *ResponseFormat) []byte {
	b = append(b, `,"text":{"format":{"type":`...)
	switch rf.Type {
	case "json_schema":
		b = append(b, `"json_schema","name":`...)
		name := rf.Name
		if name == "" {
			name = "response" // required by OpenAI
		}
		b = appendJSONString(b, name)
		if rf.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONString(b, rf.Description)
		}
		if len(rf.Schema) > 0 {
			b = append(b, `,"schema":`...)
			b = append(b, rf.Schema...)
		}
		if rf.Strict != nil {
			b = append(b, `,"strict":`...)
			b = appendJSONBool(b, *rf.Strict)
		}
	case "json_object":
		b = append(b, `"json_object"`...)
	default:
		b = append(b, `"text"`...)
	}
	return append(b, "}}"...)
}

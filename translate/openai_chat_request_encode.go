package translate

import "strings"

// Reasons recorded with Request.Drop by EncodeRequest.
const (
	oaiDropCacheControl = "openai_chat has no cache breakpoints (OpenAI-compatible servers cache prompts on their own)"
	oaiDropThinking     = "reasoning history is not sent to openai_chat backends"
	oaiDropRedacted     = "encrypted reasoning cannot be sent to openai_chat backends"
	oaiDropDialectParam = "dialect drop_params"
)

// EncodeRequest implements Codec. It writes a Chat Completions request for an
// OpenAI-compatible backend (OpenAI, llama-server, vLLM, Ollama) from an IR
// that usually came from another protocol, typically Claude Code's Anthropic
// request. The codec's Dialect, when set, adapts the request to one server:
// the output limit's field, dropped parameters, tool names and ids the
// server accepts, reasoning history, and tools rendered into the prompt.
func (c openAIChatCodec) EncodeRequest(req *Request) ([]byte, error) {
	e := oaiRequestEncoder{req: req, d: c.dialect}
	if c.dialect != nil && c.dialect.ToolsInPrompt {
		e.promptFormat = c.dialect.PromptToolFormat()
		e.promptTools = e.promptToolBlock()
	}
	b := make([]byte, 0, oaiRequestSizeHint(req)+len(e.promptTools))
	b = append(b, `{"model":`...)
	b = appendJSONString(b, req.Model)
	b = append(b, `,"messages":[`...)
	b = e.appendMessages(b)
	b = append(b, ']')

	if len(req.Tools) > 0 {
		// With tools_in_prompt the tools are in the system prompt, and
		// promptToolBlock noted what the prompt cannot enforce.
		if e.promptFormat == "" {
			b = e.appendTools(b)
			if req.ToolChoice != nil {
				b = e.appendToolChoice(b, req.ToolChoice)
			}
			if e.sends("parallel_tool_calls", req.ParallelToolCalls != nil) {
				b = append(b, `,"parallel_tool_calls":`...)
				b = appendJSONBool(b, *req.ParallelToolCalls)
			}
		}
	} else if tc := req.ToolChoice; tc != nil && (tc.Mode == ToolChoiceRequired || tc.Mode == ToolChoiceTool) {
		// OpenAI rejects a tool_choice without tools.
		req.Drop("tool_choice", "no tools were given")
	}

	if req.MaxTokens > 0 {
		// max_completion_tokens is what OpenAI documents (max_tokens is
		// deprecated and refused by reasoning models); older servers only
		// know max_tokens.
		if c.dialect != nil && c.dialect.MaxTokensField == "max_tokens" {
			b = append(b, `,"max_tokens":`...)
		} else {
			b = append(b, `,"max_completion_tokens":`...)
		}
		b = appendJSONInt(b, int64(req.MaxTokens))
	}
	b = e.appendFloatField(b, "temperature", req.Temperature)
	b = e.appendFloatField(b, "top_p", req.TopP)
	if req.TopK != nil {
		req.Drop("top_k", "OpenAI Chat Completions has no top_k")
	}
	if e.sends("seed", req.Seed != nil) {
		b = append(b, `,"seed":`...)
		b = appendJSONInt(b, *req.Seed)
	}
	b = e.appendFloatField(b, "presence_penalty", req.PresencePenalty)
	b = e.appendFloatField(b, "frequency_penalty", req.FrequencyPenalty)
	if e.sends("stop", len(req.StopSequences) > 0) {
		b = append(b, `,"stop":[`...)
		for i, s := range req.StopSequences {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		b = append(b, ']')
	}
	b = e.appendReasoning(b)
	if e.sends("response_format", req.ResponseFormat != nil) {
		b = oaiAppendResponseFormat(b, req.ResponseFormat)
	}
	if e.sends("user", req.User != "") {
		b = append(b, `,"user":`...)
		b = appendJSONString(b, req.User)
	}
	if req.Stream {
		// Usage is always requested: without it an OpenAI stream carries no
		// token counts, and clients of other protocols expect them.
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}'), nil
}

// oaiRequestSizeHint estimates the encoded size so the body is allocated
// once in the common case.
func oaiRequestSizeHint(req *Request) int {
	n := 256
	for i := range req.System {
		n += oaiTextSize(req.System[i].Text, req.System[i].textForm) + 8
	}
	for i := range req.Messages {
		n += 48 + oaiPartsSize(req.Messages[i].Parts)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += 96 + len(t.Name) + oaiTextSize(t.Description, t.descForm) + len(t.Schema)
	}
	return n + n/64 // escapes in what is not spliced
}

// oaiTextSize is the encoded size of a text: exact when its form is
// spliced, with room for escapes otherwise.
func oaiTextSize(s string, f jsonForm) int {
	if f.use(s) {
		return len(f.esc)
	}
	return len(s) + len(s)/16
}

func oaiPartsSize(parts []Part) int {
	n := 0
	for i := range parts {
		p := &parts[i]
		n += 48 + oaiTextSize(p.Text, p.textForm)
		if p.Media != nil {
			n += len(p.Media.Data) + len(p.Media.URL) + len(p.Media.MediaType) + 32
		}
		if p.ToolCall != nil {
			n += 64 + len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
		}
		if p.ToolResult != nil {
			n += 64 + len(p.ToolResult.CallID) + oaiPartsSize(p.ToolResult.Content)
		}
	}
	return n
}

// oaiRequestEncoder holds the state of one EncodeRequest call.
type oaiRequestEncoder struct {
	req     *Request
	d       *Dialect // nil: what OpenAI documents, nothing rewritten
	media   []*Part  // images and documents found in the tool results of one message
	scratch []*Part  // the user parts of one message that are sent

	// With the dialect's tools_in_prompt: the format tool calls are
	// written in, and the tool block that joins the system prompt ("" when
	// no tools are rendered). promptFormat is "" otherwise.
	promptFormat ToolCallFormat
	promptTools  string
}

// sends reports whether a parameter the request carries (present) is sent;
// one the dialect drops is recorded and not sent.
func (e *oaiRequestEncoder) sends(param string, present bool) bool {
	if !present {
		return false
	}
	if e.d.Drops(param) {
		e.req.Drop(param, oaiDropDialectParam)
		return false
	}
	return true
}

// toolName is the name the backend sees for a client tool name, as the
// dialect rewrites it. Without a dialect the name is sent as it is: the
// caller has already shortened names OpenAI would refuse
// (WithBackendToolNames with ToolNaming).
func (e *oaiRequestEncoder) toolName(name string) string {
	if e.d == nil {
		return name
	}
	return e.d.BackendToolName(name)
}

// oaiMaxToolIDLength is the longest tool call id OpenAI Chat accepts
// ("string too long. Expected a string with maximum length 40").
const oaiMaxToolIDLength = 40

// toolID is the id the backend sees for a client tool call id (see
// toolName). Without a dialect, the id is kept unless it is too long.
func (e *oaiRequestEncoder) toolID(id string) string {
	if e.d == nil {
		return boundToolID(id, oaiMaxToolIDLength)
	}
	return e.d.BackendToolID(id)
}

func (e *oaiRequestEncoder) noteCacheControl(p *Part) {
	if len(p.CacheControl) > 0 {
		e.req.Drop("cache_control", oaiDropCacheControl)
	}
}

// oaiAppendMessageStart appends the comma between messages (none before the
// first), the opening brace and the role.
func oaiAppendMessageStart(b []byte, role string) []byte {
	if b[len(b)-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, `{"role":"`...)
	b = append(b, role...)
	return append(b, '"')
}

func (e *oaiRequestEncoder) appendMessages(b []byte) []byte {
	req := e.req
	// The tools rendered for the prompt follow the leading system prompt;
	// without one they join a system message that opens the conversation,
	// or make a system message of their own.
	lead, tools := e.promptTools, ""
	if lead != "" && !oaiHasText(req.System) && len(req.Messages) > 0 &&
		req.Messages[0].Role == RoleSystem && oaiHasText(req.Messages[0].Parts) {
		lead, tools = "", lead
	}
	if len(req.System) > 0 || lead != "" {
		b = e.appendSystem(b, req.System, lead)
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case RoleSystem:
			b = e.appendSystem(b, m.Parts, tools)
			tools = ""
		case RoleAssistant:
			b = e.appendAssistant(b, m)
		default:
			b = e.appendUser(b, m)
		}
	}
	return b
}

// oaiHasText reports whether parts hold a text part.
func oaiHasText(parts []Part) bool {
	for i := range parts {
		if parts[i].Type == PartText {
			return true
		}
	}
	return false
}

// appendSystem appends one system message holding the text parts joined
// with blank lines, then extra (the tools rendered for the prompt) after
// another blank line. Without any text or extra it appends nothing.
func (e *oaiRequestEncoder) appendSystem(b []byte, parts []Part, extra string) []byte {
	texts := 0
	for i := range parts {
		p := &parts[i]
		e.noteCacheControl(p)
		if p.Type == PartText {
			texts++
		} else {
			e.req.Drop("system."+string(p.Type), "system messages carry text only")
		}
	}
	if texts == 0 && extra == "" {
		return b
	}
	b = oaiAppendMessageStart(b, "system")
	b = append(b, `,"content":`...)
	b = oaiAppendTextJoin(b, "", parts, PartText, "\n\n")
	if extra != "" {
		if texts > 0 {
			b = oaiExtendJSONString(b, "\n\n")
		}
		b = oaiExtendJSONString(b, extra)
	}
	return append(b, '}')
}

// oaiAppendTextJoin appends, as one JSON string, prefix followed by the
// text of the parts of type t joined with sep. The texts are spliced or
// escaped straight into b (appendJSONTextContents): a long system prompt
// or tool output is copied once.
func oaiAppendTextJoin(b []byte, prefix string, parts []Part, t PartType, sep string) []byte {
	b = append(b, '"')
	b = appendJSONStringContents(b, prefix)
	first := true
	for i := range parts {
		p := &parts[i]
		if p.Type != t {
			continue
		}
		if !first && sep != "" {
			b = appendJSONStringContents(b, sep)
		}
		first = false
		b = appendJSONTextContents(b, p.Text, p.textForm)
	}
	return append(b, '"')
}

// oaiExtendJSONString appends s, escaped, to the JSON string literal that
// ends b.
func oaiExtendJSONString(b []byte, s string) []byte {
	return oaiExtendJSONText(b, s, jsonForm{})
}

// oaiExtendJSONText appends s (spliced from its form f when it can be) to
// the JSON string literal that ends b.
func oaiExtendJSONText(b []byte, s string, f jsonForm) []byte {
	if s == "" {
		return b
	}
	b = b[:len(b)-1] // reopen the string
	b = appendJSONTextContents(b, s, f)
	return append(b, '"')
}

// appendAssistant appends an assistant turn: its text as content (null when
// it only calls tools) and its tool calls. Reasoning is not sent by default:
// OpenAI rejects it and the servers that accept it differ in the field
// name. A dialect's reasoning_history sends it back on tool-call turns, the
// turns DeepSeek's thinking mode and gpt-oss need it on.
func (e *oaiRequestEncoder) appendAssistant(b []byte, m *Message) []byte {
	keepThinking := e.d != nil && e.d.ReasoningHistory != "" && oaiHasToolCall(m.Parts)
	texts, calls, thoughts := 0, 0, 0
	for i := range m.Parts {
		p := &m.Parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
			texts++
		case PartToolCall:
			calls++
		case PartThinking:
			if keepThinking {
				thoughts++
			} else {
				e.req.Drop("thinking", oaiDropThinking)
			}
		case PartRedactedThinking:
			e.req.Drop("redacted_thinking", oaiDropRedacted)
		default:
			e.req.Drop("messages.assistant."+string(p.Type), "openai_chat assistant messages carry text and tool calls only")
		}
	}
	// The gpt-oss template refuses a tool-call turn with both content and
	// reasoning (llama.cpp#17040) and renders either as the analysis
	// channel, so the text joins the reasoning. Calls written into the
	// text (tools_in_prompt) are not tool_calls and stay content.
	textToReasoning := keepThinking && texts > 0 && e.promptFormat == "" &&
		e.d.ReasoningFormat() == ReasoningFormatHarmony

	b = oaiAppendMessageStart(b, "assistant")
	b = append(b, `,"content":`...)
	switch {
	case calls > 0 && e.promptFormat != "":
		b = e.appendPromptCalls(b, m)
	case texts > 0 && !textToReasoning:
		// The text blocks of one turn are one answer (they were split
		// around tool calls or by the stream), so they join without a
		// separator.
		b = oaiAppendTextJoin(b, "", m.Parts, PartText, "")
	case calls > 0:
		b = append(b, "null"...)
	default:
		b = append(b, `""`...)
	}
	if calls > 0 && e.promptFormat == "" {
		b = append(b, `,"tool_calls":[`...)
		first := true
		for i := range m.Parts {
			p := &m.Parts[i]
			if p.Type != PartToolCall || p.ToolCall == nil {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = oaiAppendToolCall(b, -1, e.toolID(p.ToolCall.ID), e.toolName(p.ToolCall.Name), p.ToolCall.Arguments)
		}
		b = append(b, ']')
	}
	if thoughts > 0 || textToReasoning {
		b = append(b, ',')
		b = appendJSONKey(b, e.d.ReasoningHistory)
		b = oaiAppendTextJoin(b, "", m.Parts, PartThinking, "\n")
		if textToReasoning {
			if thoughts > 0 {
				b = oaiExtendJSONString(b, "\n")
			}
			for i := range m.Parts {
				if p := &m.Parts[i]; p.Type == PartText {
					b = oaiExtendJSONText(b, p.Text, p.textForm)
				}
			}
		}
	}
	return append(b, '}')
}

// oaiHasToolCall reports whether parts hold a tool call.
func oaiHasToolCall(parts []Part) bool {
	for i := range parts {
		if parts[i].Type == PartToolCall && parts[i].ToolCall != nil {
			return true
		}
	}
	return false
}

// oaiAppendToolCall appends a tool call object; index >= 0 adds the
// "index" member that stream deltas carry. Empty arguments become "{}".
func oaiAppendToolCall(b []byte, index int, id, name, args string) []byte {
	b = append(b, '{')
	if index >= 0 {
		b = append(b, `"index":`...)
		b = appendJSONInt(b, int64(index))
		b = append(b, ',')
	}
	b = append(b, `"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"arguments":`...)
	if strings.TrimSpace(args) == "" && index < 0 {
		args = "{}"
	}
	b = appendJSONString(b, args)
	return append(b, "}}"...)
}

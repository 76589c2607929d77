package translate

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// ToolCallFormat is how an OpenAI-compatible backend returns tool calls.
type ToolCallFormat string

// Tool call formats (REFERENCE §6.1, §6.2).
const (
	// ToolCallsAuto reads native tool_calls and, when the request declares
	// tools, also recognises calls the server left in the text: a
	// <tool_call> block holding either format below, and a bare
	// <function=NAME> block when NAME is a declared tool. The empty value
	// means auto.
	ToolCallsAuto ToolCallFormat = "auto"
	// ToolCallsNative reads native tool_calls only; the text is never parsed.
	ToolCallsNative ToolCallFormat = "native"
	// ToolCallsHermes is Hermes / Qwen2.5 / Qwen3 JSON in tags:
	// <tool_call>{"name": …, "arguments": {…}}</tool_call>.
	ToolCallsHermes ToolCallFormat = "hermes"
	// ToolCallsQwen3Coder is Qwen3-Coder XML:
	// <tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>,
	// also without the <tool_call> wrapper. Values are typed by the tool's
	// JSON schema.
	ToolCallsQwen3Coder ToolCallFormat = "qwen3_coder"
)

// ReasoningFormat is how an OpenAI-compatible backend returns reasoning.
type ReasoningFormat string

// Reasoning formats (REFERENCE §2.5, §6.3, §6.4).
const (
	// ReasoningFormatAuto reads the reasoning fields (reasoning_content,
	// reasoning, reasoning_details), a <think>…</think> block that opens the
	// content, and gpt-oss harmony markup that opens the content. The empty
	// value means auto.
	ReasoningFormatAuto ReasoningFormat = "auto"
	// ReasoningFormatFields reads the reasoning fields only.
	ReasoningFormatFields ReasoningFormat = "fields"
	// ReasoningFormatThink treats the content up to </think> as reasoning,
	// whether or not the model wrote the opening <think> (templates that put
	// it in the prompt: DeepSeek-R1, Qwen3.5). A stream with no </think> is
	// all reasoning.
	ReasoningFormatThink ReasoningFormat = "think"
	// ReasoningFormatHarmony parses gpt-oss harmony channels in the content:
	// analysis is reasoning, final is text, commentary to=functions.NAME is
	// a tool call.
	ReasoningFormatHarmony ReasoningFormat = "harmony"
)

// Dialect describes how an OpenAI-compatible server (llama.cpp's
// llama-server, vLLM, Ollama, SGLang, DeepSeek) differs from OpenAI's own
// Chat Completions API. The zero value is the safe default: auto-detection
// of text tool calls and reasoning, max_completion_tokens, tool ids and names
// made valid for OpenAI.
//
// The request side (EncodeRequest of NewOpenAIChatCodec) applies the
// request options; the response side (package dialect's decoder)
// parses what the server left in the text and maps ids and names back.
type Dialect struct {
	// How the backend returns tool calls: "auto" (default), "native",
	// "hermes" or "qwen3_coder".
	ToolCalls ToolCallFormat `json:"tool_calls,omitempty"`

	// How the backend returns reasoning: "auto" (default), "fields",
	// "think" or "harmony".
	Reasoning ReasoningFormat `json:"reasoning,omitempty"`

	// The field in which assistant reasoning from the conversation history
	// is sent back on tool-call turns, for models that need it (DeepSeek
	// thinking mode, gpt-oss, Qwen3 on llama-server): "reasoning_content"
	// or "reasoning". Empty: reasoning history is not sent.
	ReasoningHistory string `json:"reasoning_history,omitempty"`

	// Render tool definitions into the system prompt, and tool calls and
	// results of the history as text, in the format of tool_calls ("auto"
	// renders hermes), for servers without tool support. The response
	// parser reads the calls back from the text.
	ToolsInPrompt bool `json:"tools_in_prompt,omitempty"`

	// The request field for the output limit: "max_completion_tokens"
	// (default; what OpenAI documents) or "max_tokens" (older servers).
	MaxTokensField string `json:"max_tokens_field,omitempty"`

	// Request parameters never sent to this backend, for models that
	// reject them: any of temperature, top_p, seed, presence_penalty,
	// frequency_penalty, stop, reasoning_effort, parallel_tool_calls,
	// response_format, user.
	DropParams []string `json:"drop_params,omitempty"`

	// Send tool call ids as the client wrote them. By default an id with
	// characters outside [a-zA-Z0-9_-], or longer than OpenAI's 40, is
	// rewritten for the backend and restored in the answer.
	KeepToolIDs bool `json:"keep_tool_ids,omitempty"`

	// The longest tool name the backend accepts; longer names, and names
	// with characters outside [a-zA-Z0-9_-], are shortened for the backend
	// and restored in the answer. Default 64 (OpenAI's limit); -1: no limit
	// and no rewriting.
	MaxToolNameLength int `json:"max_tool_name_length,omitempty"`

	// geminiNames applies Gemini's character set to tool names (see
	// ToolNaming); it is never configured.
	geminiNames bool
}

// DialectDropParams lists the parameters Dialect.DropParams may name.
var DialectDropParams = []string{
	"temperature", "top_p", "seed", "presence_penalty", "frequency_penalty",
	"stop", "reasoning_effort", "parallel_tool_calls", "response_format", "user",
}

// Validate reports the first invalid setting.
func (d *Dialect) Validate() error {
	if d == nil {
		return nil
	}
	switch d.ToolCalls {
	case "", ToolCallsAuto, ToolCallsNative, ToolCallsHermes, ToolCallsQwen3Coder:
	default:
		return fmt.Errorf("dialect: unknown tool_calls %q (want auto, native, hermes or qwen3_coder)", d.ToolCalls)
	}
	switch d.Reasoning {
	case "", ReasoningFormatAuto, ReasoningFormatFields, ReasoningFormatThink, ReasoningFormatHarmony:
	default:
		return fmt.Errorf("dialect: unknown reasoning %q (want auto, fields, think or harmony)", d.Reasoning)
	}
	switch d.ReasoningHistory {
	case "", "reasoning_content", "reasoning":
	default:
		return fmt.Errorf("dialect: unknown reasoning_history %q (want reasoning_content or reasoning)", d.ReasoningHistory)
	}
	switch d.MaxTokensField {
	case "", "max_completion_tokens", "max_tokens":
	default:
		return fmt.Errorf("dialect: unknown max_tokens_field %q (want max_completion_tokens or max_tokens)", d.MaxTokensField)
	}
	for _, p := range d.DropParams {
		if !slices.Contains(DialectDropParams, p) {
			return fmt.Errorf("dialect: drop_params: unknown parameter %q (want one of %s)", p, strings.Join(DialectDropParams, ", "))
		}
	}
	if d.ToolsInPrompt && d.ToolCalls == ToolCallsNative {
		return fmt.Errorf("dialect: tools_in_prompt needs tool_calls hermes or qwen3_coder, not native")
	}
	if d.MaxToolNameLength < -1 || (d.MaxToolNameLength > 0 && d.MaxToolNameLength < 16) {
		return fmt.Errorf("dialect: max_tool_name_length %d: want 0 (default 64), -1 (no limit) or at least 16", d.MaxToolNameLength)
	}
	return nil
}

// ToolCallFormat returns the tool call format, "auto" when unset.
func (d *Dialect) ToolCallFormat() ToolCallFormat {
	if d == nil || d.ToolCalls == "" {
		return ToolCallsAuto
	}
	return d.ToolCalls
}

// ReasoningFormat returns the reasoning format, "auto" when unset.
func (d *Dialect) ReasoningFormat() ReasoningFormat {
	if d == nil || d.Reasoning == "" {
		return ReasoningFormatAuto
	}
	return d.Reasoning
}

// PromptToolFormat is the format tools are rendered in with ToolsInPrompt:
// qwen3_coder when so configured, hermes otherwise.
func (d *Dialect) PromptToolFormat() ToolCallFormat {
	if d.ToolCallFormat() == ToolCallsQwen3Coder {
		return ToolCallsQwen3Coder
	}
	return ToolCallsHermes
}

// Drops reports whether the request parameter param is never sent.
func (d *Dialect) Drops(param string) bool {
	return d != nil && slices.Contains(d.DropParams, param)
}

func (d *Dialect) maxToolNameLength() int {
	if d == nil || d.MaxToolNameLength == 0 {
		return 64
	}
	return d.MaxToolNameLength
}

// BackendToolName is the name the backend sees for the client's tool name.
// A valid name is kept; any other is made valid and suffixed with a hash of
// the original, so distinct names stay distinct and the mapping is the same
// for every request of a conversation.
func (d *Dialect) BackendToolName(name string) string {
	limit := d.maxToolNameLength()
	if limit < 0 || (len(name) <= limit && d.validToolName(name)) {
		return name
	}
	const suffix = 9 // "_" + 8 hex digits
	short := sanitizeToolToken(name, limit-suffix)
	if d != nil && d.geminiNames && (short == "" || !geminiNameStart(short[0])) {
		short = "_" + sanitizeToolToken(name, limit-suffix-1)
	}
	return short + "_" + tokenHash(name)
}

// BackendToolID is the id the backend sees for the client's tool call id:
// the id itself when it is made of [a-zA-Z0-9_-] and within OpenAI Chat's
// 40 bytes, a stand-in (toolIDStandIn) otherwise.
func (d *Dialect) BackendToolID(id string) string {
	if (d != nil && d.KeepToolIDs) || id == "" || validToolToken(id) && len(id) <= oaiMaxToolIDLength {
		return id
	}
	return toolIDStandIn(id, oaiMaxToolIDLength)
}

// ClientToolNames maps the backend's tool names back to the client's, for
// the names of req (its tools and the calls of its history) that
// BackendToolName changes. It is nil when none changes.
func (d *Dialect) ClientToolNames(req *Request) map[string]string {
	var m map[string]string
	add := func(name string) {
		if b := d.BackendToolName(name); b != name {
			if m == nil {
				m = map[string]string{}
			}
			m[b] = name
		}
	}
	for i := range req.Tools {
		add(req.Tools[i].Name)
	}
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			if tc := req.Messages[i].Parts[j].ToolCall; tc != nil {
				add(tc.Name)
			}
		}
	}
	return m
}

// ClientToolIDs maps the backend's tool call ids back to the client's, for
// the ids of req's history that BackendToolID changes. It is nil when none
// changes.
func (d *Dialect) ClientToolIDs(req *Request) map[string]string {
	var m map[string]string
	add := func(id string) {
		if b := d.BackendToolID(id); b != id {
			if m == nil {
				m = map[string]string{}
			}
			m[b] = id
		}
	}
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			if p.ToolCall != nil {
				add(p.ToolCall.ID)
			}
			if p.ToolResult != nil {
				add(p.ToolResult.CallID)
			}
		}
	}
	return m
}

// validToolToken reports whether s matches ^[a-zA-Z0-9_-]+$.
func validToolToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !toolTokenByte(s[i]) {
			return false
		}
	}
	return true
}

func toolTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// sanitizeToolToken replaces the bytes outside [a-zA-Z0-9_-] with '_' and
// keeps at most max bytes.
func sanitizeToolToken(s string, max int) string {
	if len(s) > max {
		s = s[:max]
	}
	b := []byte(s)
	for i, c := range b {
		if !toolTokenByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// tokenHash is 8 hex digits of FNV-1a of s.
func tokenHash(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

package translate

import "encoding/json"

// Role is the author of a message.
type Role string

// Message roles. RoleSystem appears inside Messages only when a client puts a
// system message in the middle of the conversation (Claude Code does); the
// leading system prompt lives in Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
)

// PartType says which fields of a Part are meaningful.
type PartType string

// Part types.
const (
	PartText             PartType = "text"               // Text
	PartImage            PartType = "image"              // Media
	PartDocument         PartType = "document"           // Media (PDF, plain text)
	PartToolCall         PartType = "tool_call"          // ToolCall
	PartToolResult       PartType = "tool_result"        // ToolResult
	PartThinking         PartType = "thinking"           // Text, Signature
	PartRedactedThinking PartType = "redacted_thinking"  // Signature holds the opaque data
	PartServerToolCall   PartType = "server_tool_call"   // Server: a search or fetch the backend ran
	PartServerToolResult PartType = "server_tool_result" // Server: what it found
)

// Part is one typed piece of message content.
type Part struct {
	Type PartType

	// Text is the text of a text part or the reasoning of a thinking part.
	Text string

	// Signature is the opaque signature of a thinking part, or the opaque
	// payload of a redacted thinking part. It is carried byte for byte.
	Signature string

	// Media is set for image and document parts.
	Media *Media

	// ToolCall is set for tool call parts.
	ToolCall *ToolCall

	// ToolResult is set for tool result parts.
	ToolResult *ToolResult

	// Server is set for server tool call and result parts
	// (server_tool_results.go). Left out of the JSON form when nil, so
	// the IR dumps of parts without one read as before.
	Server *ServerToolUse `json:",omitempty"`

	// Citations are the pages a text part cites (citations.go).
	Citations []Citation `json:",omitempty"`

	// CacheControl is the raw Anthropic cache_control object, if any. Only
	// protocols that can express it re-emit it.
	CacheControl json.RawMessage
	// textForm is the escaped form Text was decoded from, which encoders
	// splice into their output rather than escape Text again (see
	// jsonForm); zero when there is none. Copying a Part copies it, which is
	// safe: it is used only while Text still holds the text it belongs to.
	textForm jsonForm
}

// Media is an image or a document, either inline (Data, base64) or by
// reference (URL or FileID).
type Media struct {
	MediaType string // e.g. "image/png", "application/pdf", "text/plain"
	Data      string // base64 payload, without any data: URL prefix
	URL       string // http(s) URL
	FileID    string // provider file id
	Filename  string
	Title     string
	Detail    string // OpenAI image detail: auto, low, high
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON text of the arguments object, as the model
	// produced it. It is "{}" for a call without arguments. It may be invalid
	// JSON when a model produced invalid JSON; codecs pass it on rather than
	// lose it.
	Arguments string
	// Signature is the thought signature a Gemini client sent on the
	// call's functionCall part. Only a Gemini backend, the issuer, gets it
	// back; it is not folded into ID, which other backends limit in length.
	// (A Gemini backend's own signatures travel in ID instead, through
	// clients that hand back nothing but the id: see geminiJoinCallID.)
	Signature string
}

// ToolResult is the outcome of a tool call, sent back by the client.
type ToolResult struct {
	CallID  string
	Name    string // the tool's name when the protocol carries it (Gemini needs it)
	Content []Part // text and image parts
	IsError bool
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments, kept as the raw bytes the
	// client sent. Empty means no schema was given.
	Schema       json.RawMessage
	Strict       *bool
	CacheControl json.RawMessage
	// Custom marks an OpenAI Responses freeform ("custom") tool, such as
	// Codex's apply_patch. Backends see it as a function with one string
	// argument, "input" (Schema says so); the Responses codec turns calls
	// of it back into custom_tool_call items carrying that string.
	Custom bool
	// descForm is the escaped form Description was decoded from, as
	// Part.textForm is Text's.
	descForm jsonForm
	// deferred is an Anthropic tool declared with "defer_loading": true,
	// in force only once a tool_reference loads it (tool_changes.go).
	deferred bool
}

// ToolChoiceMode is how the model may use tools.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceRequired ToolChoiceMode = "required" // Anthropic "any", OpenAI "required", Gemini ANY
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceTool     ToolChoiceMode = "tool" // exactly the tool in Name
)

// ToolChoice constrains tool use.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // with ToolChoiceTool
	// Allowed restricts the callable tools (OpenAI allowed_tools, Gemini
	// allowedFunctionNames); empty means all tools.
	Allowed []string
}

// ReasoningMode is whether and how the model should think.
type ReasoningMode string

// Reasoning modes.
const (
	ReasoningDefault  ReasoningMode = ""         // not specified
	ReasoningEnabled  ReasoningMode = "enabled"  // with BudgetTokens
	ReasoningDisabled ReasoningMode = "disabled" // explicitly off
	ReasoningAdaptive ReasoningMode = "adaptive" // the model decides
)

// Reasoning holds the reasoning settings of a request.
type Reasoning struct {
	Mode         ReasoningMode
	BudgetTokens int
	// Effort is low, medium, high, ... as the client said it ("" when unset).
	Effort string
	// Display is Anthropic's thinking display ("summarized", "omitted") or
	// the Responses summary setting; informational for most backends.
	Display string
}

// ResponseFormat asks for structured output.
type ResponseFormat struct {
	Type        string // "text", "json_object", "json_schema"
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      *bool
}

// Request is a chat request in the IR.
type Request struct {
	Model    string
	System   []Part // leading system prompt: text parts
	Messages []Message
	Tools    []Tool
	// ServerTools are the tools offered that the backend runs itself
	// (web search, URL fetching: server_tools.go).
	ServerTools []ServerTool

	ToolChoice *ToolChoice
	// ParallelToolCalls is false when the client forbade parallel calls
	// (Anthropic disable_parallel_tool_use, OpenAI parallel_tool_calls:false).
	ParallelToolCalls *bool

	MaxTokens        int // 0: not given
	Temperature      *float64
	TopP             *float64
	TopK             *int
	Seed             *int64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	StopSequences    []string

	Reasoning      *Reasoning
	ResponseFormat *ResponseFormat

	// User identifies the end user (Anthropic metadata.user_id, OpenAI user).
	User string

	Stream bool
	// IncludeUsage is the OpenAI client's stream_options.include_usage.
	IncludeUsage bool

	// PreviousResponseID is the stored response a Responses request
	// continues, which its response objects echo. The decoder refuses
	// previous_response_id (this package keeps no state), so the caller
	// that served it (louter's stored responses) sets it; "" echoes null.
	PreviousResponseID string
	// Stored is whether the response is kept (store true, served by
	// louter's stored responses), which its response objects echo as
	// store; the decoder sets nothing here, for the same reason.
	Stored bool

	// ContextManagement is what the client sent of Anthropic's context
	// editing (context_edits.go): its context_management member and the
	// compaction block of its history. nil for every other protocol's
	// requests and for Anthropic requests without either.
	ContextManagement *ContextManagement

	// InputTokensEstimate is a local estimate of the input tokens, set by
	// the caller for the client stream encoders of protocols that announce
	// input usage before the backend has reported any (Anthropic's
	// message_start, Gemini's usageMetadata on every chunk); 0 means none.
	// The backend's own figures replace it as soon as they arrive.
	InputTokensEstimate int

	// Dropped lists what decoding or encoding left out on purpose, as
	// "field: reason", for the caller to log. Each entry appears once.
	// The field is one the codec names, except for a member the protocol
	// does not define, whose reason is DropUnknown.
	Dropped []string

	// toolChanges is where the client's decoder found tool changes, for
	// its ToolChangeCodec (tool_changes.go); nil when it found none.
	toolChanges *toolChangeNotes
}

// DropUnknown is the reason a decoder records for a member its protocol
// does not define. Such a field is named by the client, not by the codec,
// so a caller that counts drops by field (louter's metrics) must count
// these together rather than by name.
const DropUnknown = "unknown field"

// Drop records that field was left out, and why.
func (r *Request) Drop(field, reason string) {
	// Compared in place: a field is often dropped once per message or
	// block, and only its first drop needs the joined entry.
	for _, d := range r.Dropped {
		if len(d) == len(field)+2+len(reason) && d[:len(field)] == field &&
			d[len(field):len(field)+2] == ": " && d[len(field)+2:] == reason {
			return
		}
	}
	r.Dropped = append(r.Dropped, field+": "+reason)
}

// StopReason is the canonical reason a response ended.
type StopReason string

// Stop reasons. Each codec maps its own values onto these.
const (
	StopEndTurn       StopReason = "end_turn"
	StopMaxTokens     StopReason = "max_tokens"
	StopSequence      StopReason = "stop_sequence"
	StopToolUse       StopReason = "tool_use"
	StopRefusal       StopReason = "refusal"
	StopPauseTurn     StopReason = "pause_turn"
	StopContextWindow StopReason = "model_context_window_exceeded"
	// StopCompaction: the turn paused after louter compacted the history
	// (compact_20260112 with pause_after_compaction); the answer is the
	// compaction block alone.
	StopCompaction StopReason = "compaction"
	StopError      StopReason = "error"
)

// Usage counts tokens. InputTokens includes cached tokens (read and
// written); OutputTokens includes reasoning tokens.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// UncachedInputTokens is the input that was neither read from nor written to
// the cache (Anthropic's input_tokens).
func (u Usage) UncachedInputTokens() int {
	n := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	if n < 0 {
		return 0
	}
	return n
}

// Response is a complete (non-streaming) model response.
type Response struct {
	ID           string
	Model        string
	Parts        []Part // text, thinking, redacted thinking, tool call and server tool parts
	StopReason   StopReason
	StopSequence string
	Usage        Usage
	// Refusal is refusal text when the model refused (OpenAI message.refusal).
	Refusal string
}

// HasToolCalls reports whether the response contains a tool call.
func (r *Response) HasToolCalls() bool {
	for i := range r.Parts {
		if r.Parts[i].Type == PartToolCall {
			return true
		}
	}
	return false
}

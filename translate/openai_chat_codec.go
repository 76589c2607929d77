package translate

import (
	"time"

	"github.com/tidwall/gjson"
)

// openAIChatCodec is the codec for OpenAI Chat Completions
// (POST /v1/chat/completions) and the OpenAI-compatible servers that speak it
// (llama.cpp llama-server, vLLM, Ollama, DeepSeek, OpenRouter). Its decoders
// accept the usual dialect differences of those servers; its encoders write
// what OpenAI itself documents, adjusted by the codec's Dialect.
type openAIChatCodec struct {
	dialect *Dialect // nil: the defaults
}

// NewOpenAIChatCodec returns an OpenAI Chat Completions codec whose request
// encoder applies the dialect of one backend (see Dialect). The registered
// codec uses the defaults. The response side of a dialect (text tool calls,
// think tags, harmony, restored ids and names) is package dialect's
// dialect.NewDecoder, which wraps this codec's stream decoder.
func NewOpenAIChatCodec(d *Dialect) Codec { return openAIChatCodec{dialect: d} }

func init() { Register(openAIChatCodec{}) }

// WithDialect implements DialectCodec: NewOpenAIChatCodec(d).
func (openAIChatCodec) WithDialect(d *Dialect) Codec { return openAIChatCodec{dialect: d} }

// Protocol implements Codec.
func (openAIChatCodec) Protocol() Protocol { return ProtocolOpenAIChat }

// BackendToolNaming implements ToolNamingCodec: OpenAI's tool name limits,
// client ids kept, and the tool calls and reasoning an OpenAI-compatible
// server may leave in the text parsed by the dialect decoder (auto).
func (openAIChatCodec) BackendToolNaming() *Dialect { return &Dialect{KeepToolIDs: true} }

// TopLevelRules implements TopLevelCodec.
func (openAIChatCodec) TopLevelRules() *TopLevelRules { return &oaiTopLevel }

// oaiTopLevel: Chat Completions' model and stream, both its output limits,
// and stream_options, where a stream asks for its usage (a Chat stream
// reports usage only when asked); the system prompt is a message.
var oaiTopLevel = TopLevelRules{
	ActedOn:    []string{"model", "stream", "max_tokens", "max_completion_tokens", "stream_options"},
	Messages:   "messages",
	UsageOptIn: true,
}

// oaiNow is the clock behind the "created" field; tests replace it.
var oaiNow = time.Now

// oaiNewCallID makes a tool call id for servers that send none (Ollama,
// Gemini's compatibility layer): "call_" + 24 hex digits.
func oaiNewCallID() string { return NewCallID() }

// oaiCompletionIDPrefix starts OpenAI's completion ids; an answer whose
// id does not (another protocol's backend made it) gets a fresh one
// (ownID).
const oaiCompletionIDPrefix = "chatcmpl-"

// oaiNewCompletionID makes a completion id when the IR carries none.
func oaiNewCompletionID() string { return newID(oaiCompletionIDPrefix) }

// oaiStopReason maps a finish_reason onto the IR. Unknown values and null
// are a natural end; the Emitter (streams) and DecodeResponse turn a natural
// end with tool calls into StopToolUse.
func oaiStopReason(finish string) StopReason {
	switch finish {
	case "length":
		return StopMaxTokens
	case "tool_calls", "function_call":
		return StopToolUse
	case "content_filter":
		return StopRefusal
	}
	return StopEndTurn
}

// oaiFinishReason maps an IR stop reason onto finish_reason.
func oaiFinishReason(r StopReason) string {
	switch r {
	case StopMaxTokens, StopContextWindow:
		return "length"
	case StopToolUse:
		return "tool_calls"
	case StopRefusal:
		return "content_filter"
	}
	// end_turn, stop_sequence, pause_turn, error and unknown values.
	return "stop"
}

// oaiReasoningText reads the reasoning an OpenAI-compatible server put on a
// message or a delta. Servers disagree on the field (REFERENCE §2.5):
// DeepSeek and llama-server use reasoning_content, vLLM and Ollama
// reasoning, OpenRouter reasoning plus reasoning_details. Some vLLM versions
// send both reasoning_content and reasoning with the same text, so the first
// non-empty field wins and the others are ignored.
func oaiReasoningText(obj gjson.Result) string {
	if v := obj.Get("reasoning_content"); v.Type == gjson.String && v.Str != "" {
		return v.Str
	}
	if v := obj.Get("reasoning"); v.Type == gjson.String && v.Str != "" {
		return v.Str
	}
	details := obj.Get("reasoning_details")
	if !details.IsArray() {
		return ""
	}
	var text string
	details.ForEach(func(_, d gjson.Result) bool {
		if t := d.Get("text"); t.Type == gjson.String {
			text += t.Str
		}
		return true
	})
	return text
}

// oaiArguments returns a tool call's arguments as JSON text. The spec says
// arguments is a JSON-encoded string; a few servers send the object itself,
// which is kept as its raw JSON text.
func oaiArguments(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return v.Str
	case v.IsObject() || v.IsArray():
		return v.Raw
	}
	return ""
}

// oaiParseDataURL splits a base64 data URL ("data:image/png;base64,AAAA")
// into its media type and payload. ok is false for anything else, including
// data URLs that are not base64-encoded.
func oaiParseDataURL(url string) (mediaType, data string, ok bool) {
	const prefix = "data:"
	if len(url) < len(prefix) || url[:len(prefix)] != prefix {
		return "", "", false
	}
	rest := url[len(prefix):]
	comma := -1
	for i := 0; i < len(rest); i++ {
		if rest[i] == ',' {
			comma = i
			break
		}
	}
	if comma < 0 {
		return "", "", false
	}
	meta, data := rest[:comma], rest[comma+1:]
	const b64 = ";base64"
	if len(meta) < len(b64) || meta[len(meta)-len(b64):] != b64 {
		return "", "", false
	}
	meta = meta[:len(meta)-len(b64)]
	// Drop parameters such as ";charset=utf-8": the media type is what the
	// other protocols carry.
	for i := 0; i < len(meta); i++ {
		if meta[i] == ';' {
			meta = meta[:i]
			break
		}
	}
	return meta, data, true
}

// oaiDecodeUsage reads a usage object. prompt_tokens already includes cached
// tokens, which is the IR's InputTokens semantics. DeepSeek reports cache
// hits as prompt_cache_hit_tokens, used when prompt_tokens_details is absent.
func oaiDecodeUsage(u gjson.Result) Usage {
	out := Usage{
		InputTokens:     usageCount(u.Get("prompt_tokens")),
		OutputTokens:    usageCount(u.Get("completion_tokens")),
		ReasoningTokens: usageCount(u.Get("completion_tokens_details.reasoning_tokens")),
	}
	if d := u.Get("prompt_tokens_details"); d.IsObject() {
		out.CacheReadTokens = usageCount(d.Get("cached_tokens"))
		out.CacheWriteTokens = usageCount(d.Get("cache_write_tokens"))
	} else {
		out.CacheReadTokens = usageCount(u.Get("prompt_cache_hit_tokens"))
	}
	return out
}

// oaiAppendUsage appends a usage object as OpenAI reports it. Cache writes
// (an Anthropic backend's cache_creation_input_tokens) go into
// prompt_tokens_details.cache_write_tokens, only when there were any, as
// OpenAI's newer API reports them.
func oaiAppendUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens))
	b = append(b, `,"completion_tokens":`...)
	b = appendJSONInt(b, int64(u.OutputTokens))
	b = append(b, `,"total_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens+u.OutputTokens))
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendJSONInt(b, int64(u.CacheReadTokens))
	if u.CacheWriteTokens > 0 {
		b = append(b, `,"cache_write_tokens":`...)
		b = appendJSONInt(b, int64(u.CacheWriteTokens))
	}
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = appendJSONInt(b, int64(u.ReasoningTokens))
	return append(b, "}}"...)
}

package translate

import (
	"encoding/base64"
	"strings"

	"github.com/tidwall/gjson"
)

// geminiCodec translates the Google Gemini API (generateContent and
// streamGenerateContent, v1beta) to and from the IR.
//
// Gemini differs from the other protocols in four ways the codec has to
// bridge:
//
//   - The model and the stream mode are in the URL, not the body. The
//     decoder reads an optional "model" member ("models/x" or "x"); the
//     caller sets Request.Model and Request.Stream from the path otherwise.
//   - Function calls may carry no id, and function responses are matched
//     by name. The decoder gives id-less calls stable ids derived from
//     their position in the history, so every turn of a conversation maps
//     to the same ids; the encoder finds the name of a tool result from the
//     call it answers.
//   - Thought signatures ride on parts, most importantly on functionCall
//     parts, and Gemini 3 refuses a history that lost them. A Gemini
//     backend's signature on a call travels inside the call's id (see
//     geminiJoinCallID), which every client echoes back unchanged; one a
//     Gemini client sends stays beside the id (ToolCall.Signature), for a
//     Gemini backend only.
//   - The searches and fetches the backend ran are not parts but metadata
//     on the candidate (groundingMetadata, urlContextMetadata), reported
//     after the text where Anthropic and the Responses API put them
//     before it. Decoder and encoder pass them on where they arrive, the
//     stream never held back (gemini_grounding.go).
type geminiCodec struct{}

func init() { Register(geminiCodec{}) }

// Protocol implements Codec.
func (geminiCodec) Protocol() Protocol { return ProtocolGemini }

// BackendToolNaming implements ToolNamingCodec: Gemini's character set for
// tool names (letters, digits, _ . : -, starting with a letter or an
// underscore), client ids kept, nothing parsed out of the text.
func (geminiCodec) BackendToolNaming() *Dialect {
	return &Dialect{KeepToolIDs: true, ToolCalls: ToolCallsNative, Reasoning: ReasoningFormatFields, geminiNames: true}
}

// InputUsageEarly implements UsageTimingCodec: a Gemini client's stream
// carries usageMetadata on every chunk, the first one included.
func (geminiCodec) InputUsageEarly() bool { return true }

// InputUsageAtStart implements UsageTimingCodec: Gemini servers report
// usage on some chunks, on every one, or only on the last.
func (geminiCodec) InputUsageAtStart() bool { return false }

// TopLevelRules implements TopLevelCodec.
func (geminiCodec) TopLevelRules() *TopLevelRules { return &geminiTopLevel }

// geminiTopLevel: the model and the stream mode are in the URL; the output
// limit is generationConfig.maxOutputTokens. Gemini's JSON mapping reads
// snake_case names as their camelCase, so both spellings count as one
// member.
var geminiTopLevel = TopLevelRules{
	ActedOn:       []string{"generationConfig"},
	System:        "systemInstruction",
	Messages:      "contents",
	InURL:         true,
	Name:          geminiCamel,
	Config:        "generationConfig",
	ConfigLimit:   "maxOutputTokens",
	ConfigLimitAt: LimitGeminiMaxOutput,
	Duplicate: func(key string) *Error {
		return geminiBadRequest(key, "Invalid JSON payload received. Duplicate field %q (%s).", geminiSnake(key), "send each field once")
	},
}

// NewStreamDecoder implements Codec.
func (geminiCodec) NewStreamDecoder() StreamDecoder { return &geminiStreamDecoder{} }

// NewStreamEncoder implements Codec.
func (geminiCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &geminiStreamEncoder{}
	if req != nil {
		enc.model = req.Model
		enc.estimate = req.InputTokensEstimate
	}
	return enc
}

// geminiSkipSignature is the documented placeholder Gemini accepts in place
// of a thought signature the history does not have (Gemini CLI sends it on
// every functionCall part it replays).
const geminiSkipSignature = "skip_thought_signature_validator"

// geminiSigSep separates a tool-call id from the thought signature carried
// in it: "<id>-ts-<signature as unpadded base64url>". Every byte of that
// form is in [A-Za-z0-9_-], the alphabet Anthropic allows in tool ids, so
// the id survives any client. The first occurrence splits, so ids that
// contain the separator themselves are not given a signature.
const geminiSigSep = "-ts-"

// geminiJoinCallID returns id with the thought signature sig folded in.
// A signature that is not standard base64 (Gemini always sends base64) or
// an id that already contains the separator is not folded: the id is
// returned as it is.
func geminiJoinCallID(id, sig string) string {
	if sig == "" || sig == geminiSkipSignature || strings.Contains(id, geminiSigSep) {
		return id
	}
	raw, ok := geminiDecodeBase64(sig)
	if !ok {
		return id
	}
	b := make([]byte, 0, len(id)+len(geminiSigSep)+base64.RawURLEncoding.EncodedLen(len(raw)))
	b = append(b, id...)
	b = append(b, geminiSigSep...)
	b = base64.RawURLEncoding.AppendEncode(b, raw)
	return string(b)
}

// geminiDecodeBase64 decodes a bytes field, padded or not, as proto3 JSON
// writes and reads it.
func geminiDecodeBase64(s string) ([]byte, bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return nil, false
		}
	}
	return raw, true
}

// geminiBase64 reports whether s is a bytes field's value, padded or not.
func geminiBase64(s string) bool {
	_, ok := geminiDecodeBase64(s)
	return ok
}

// geminiSplitCallID undoes geminiJoinCallID: the id as the backend knows it,
// and the signature in standard base64 ("" when the id carries none).
func geminiSplitCallID(id string) (base, sig string) {
	base, enc, ok := strings.Cut(id, geminiSigSep)
	if !ok {
		return id, ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return id, ""
	}
	return base, base64.StdEncoding.EncodeToString(raw)
}

// geminiSignatureOrEmpty returns sig when a Gemini client can hold it:
// thoughtSignature is a bytes field, and the genai SDKs reject a value that
// is not base64. Other providers' signatures that are not base64 are left
// out (a Gemini client cannot hand them back anyway).
func geminiSignatureOrEmpty(sig string) string {
	if sig == "" {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(sig); err != nil {
		return ""
	}
	return sig
}

// geminiGet returns the member of obj named camel, or else the one named
// snake: Gemini accepts proto3 JSON, where both spellings are valid.
func geminiGet(obj gjson.Result, camel, snake string) gjson.Result {
	if v := obj.Get(camel); v.Exists() {
		return v
	}
	return obj.Get(snake)
}

// geminiStopReason maps a finishReason onto the IR. STOP is a natural end
// even after function calls (Gemini has no tool-use reason; the Emitter and
// DecodeResponse derive it). fatal reports the reasons that mean the model
// produced a broken answer, which become an error.
func geminiStopReason(finish string) (r StopReason, fatal bool) {
	switch finish {
	case "MAX_TOKENS":
		return StopMaxTokens, false
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER", "NO_IMAGE":
		return StopRefusal, false
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return StopError, true
	}
	// STOP, OTHER, FINISH_REASON_UNSPECIFIED and unknown values.
	return StopEndTurn, false
}

// geminiFinishReason maps an IR stop reason onto finishReason.
func geminiFinishReason(r StopReason) string {
	switch r {
	case StopMaxTokens, StopContextWindow:
		return "MAX_TOKENS"
	case StopRefusal:
		return "SAFETY"
	case StopError:
		return "OTHER"
	}
	return "STOP"
}

// geminiFatalFinish is the error a fatal finishReason becomes.
func geminiFatalFinish(finish, message string) *Error {
	msg := "the model's answer ended with " + finish
	if message != "" {
		msg += ": " + message
	}
	return &Error{Status: 502, Kind: ErrAPI, Message: msg, Code: finish}
}

// geminiDecodeUsage reads usageMetadata (REFERENCE §5.5): promptTokenCount
// already includes cached tokens; candidatesTokenCount excludes thoughts.
func geminiDecodeUsage(u gjson.Result) Usage {
	thoughts := usageCount(geminiGet(u, "thoughtsTokenCount", "thoughts_token_count"))
	return Usage{
		InputTokens:     usageCount(geminiGet(u, "promptTokenCount", "prompt_token_count")) + usageCount(geminiGet(u, "toolUsePromptTokenCount", "tool_use_prompt_token_count")),
		OutputTokens:    usageCount(geminiGet(u, "candidatesTokenCount", "candidates_token_count")) + thoughts,
		CacheReadTokens: usageCount(geminiGet(u, "cachedContentTokenCount", "cached_content_token_count")),
		ReasoningTokens: thoughts,
	}
}

// geminiAppendUsage appends a usageMetadata object as Gemini reports it.
func geminiAppendUsage(b []byte, u *Usage) []byte {
	candidates := u.OutputTokens - u.ReasoningTokens
	if candidates < 0 {
		candidates = 0
	}
	b = append(b, `{"promptTokenCount":`...)
	b = appendJSONInt(b, int64(u.InputTokens))
	b = append(b, `,"candidatesTokenCount":`...)
	b = appendJSONInt(b, int64(candidates))
	b = append(b, `,"totalTokenCount":`...)
	b = appendJSONInt(b, int64(u.InputTokens+u.OutputTokens))
	if u.CacheReadTokens > 0 {
		b = append(b, `,"cachedContentTokenCount":`...)
		b = appendJSONInt(b, int64(u.CacheReadTokens))
	}
	if u.ReasoningTokens > 0 {
		b = append(b, `,"thoughtsTokenCount":`...)
		b = appendJSONInt(b, int64(u.ReasoningTokens))
	}
	return append(b, '}')
}

// geminiModelName strips the "models/" prefix Gemini puts on model names.
func geminiModelName(s string) string { return strings.TrimPrefix(s, "models/") }

// Interface guard.
var _ Codec = geminiCodec{}

package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// openAIResponsesCodec is the codec for the OpenAI Responses API
// (POST /v1/responses), the only protocol Codex CLI speaks and the only one
// some OpenAI models are served on. louter is stateless: a client sends the
// whole history every turn (Codex does, with store:false), and a request
// that refers to stored state (previous_response_id) is refused unless it
// goes to a Responses backend untranslated.
//
// Errors have the Chat Completions shape, so the error half of the codec is
// shared with openAIChatCodec.
type openAIResponsesCodec struct{}

func init() { Register(openAIResponsesCodec{}) }

// Protocol implements Codec.
func (openAIResponsesCodec) Protocol() Protocol { return ProtocolOpenAIResponses }

// DecodeError implements Codec. Responses errors have the Chat Completions
// envelope {"error":{"message","type","param","code"}}.
func (openAIResponsesCodec) DecodeError(status int, body []byte) *Error {
	return openAIChatCodec{}.DecodeError(status, body)
}

// EncodeError implements Codec.
func (openAIResponsesCodec) EncodeError(e *Error) []byte {
	return oaiAppendError(nil, e.forClient(ProtocolOpenAIResponses))
}

// TopLevelRules implements TopLevelCodec.
func (openAIResponsesCodec) TopLevelRules() *TopLevelRules { return &respTopLevel }

// respTopLevel: the Responses API's model, stream and max_output_tokens,
// and its instructions and input.
var respTopLevel = TopLevelRules{
	ActedOn:  []string{"model", "stream", "max_output_tokens"},
	System:   "instructions",
	Messages: "input",
}

// ClientOverflow implements OverflowCodec: OpenAI's wording, naming the
// Responses API's conversation member, input.
func (openAIResponsesCodec) ClientOverflow(e *Error) *Error { return overflowOpenAI(e, "input") }

// OverflowWorded implements OverflowCodec.
func (openAIResponsesCodec) OverflowWorded(e *Error) bool { return overflowWordedOpenAI(e) }

// Ids louter makes up: a prefix and 24 random hex digits, the shape the
// stream tests mask.
func respNewResponseID() string   { return newID("resp_") }
func respNewMessageID() string    { return newID("msg_") }
func respNewCallItemID() string   { return newID("fc_") }
func respNewCustomItemID() string { return newID("ctc_") }
func respNewReasoningID() string  { return newID("rs_") }

// respRedactedPrefix starts the id of a reasoning item that stands for an
// Anthropic redacted_thinking block. Clients echo item ids back, so the
// prefix tells such an item from a summarized one on the next turn, and
// the block goes back to Anthropic as it came.
const respRedactedPrefix = "rs_redacted_"

func respNewRedactedID() string { return newID(respRedactedPrefix) }

// respSignatureSep separates the reasoning item id from the encrypted
// content in the signature of a thinking part that came from a Responses
// backend (see respPackSignature).
const respSignatureSep = ':'

// respPackSignature makes the IR signature of a reasoning item decoded
// from a Responses backend: "rs_…:<encrypted_content>". A Responses backend
// needs both the item id and the encrypted content back; the IR has one
// opaque string per thinking part, and every client protocol carries it
// unchanged (Anthropic signatures, Gemini thought signatures). Neither ids
// nor encrypted contents (base64) contain a colon.
func respPackSignature(id, enc string) string {
	if enc == "" {
		return ""
	}
	if id == "" || strings.IndexByte(id, respSignatureSep) >= 0 {
		return enc
	}
	return id + string(respSignatureSep) + enc
}

// respUnpackSignature splits a signature made by respPackSignature. ok is
// false for any other signature (an Anthropic or Gemini one), which then is
// the whole encrypted content for a client and nothing a Responses backend
// could decrypt.
func respUnpackSignature(sig string) (id, enc string, ok bool) {
	if !strings.HasPrefix(sig, "rs_") {
		return "", sig, false
	}
	i := strings.IndexByte(sig, respSignatureSep)
	if i < 0 {
		return "", sig, false
	}
	return sig[:i], sig[i+1:], true
}

// respStatus is a response's status and incomplete_details.reason for an
// IR stop reason. There is no finish reason in the Responses API: a
// finished answer is "completed" (tool calls are told by the items), a cut
// one "incomplete".
func respStatus(r StopReason) (status, incompleteReason string) {
	switch r {
	case StopMaxTokens, StopContextWindow:
		return "incomplete", "max_output_tokens"
	case StopRefusal:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// respStopReason maps a response's status and incomplete reason onto the
// IR; a natural end with tool calls becomes tool_use in the Emitter and in
// DecodeResponse.
func respStopReason(status, incompleteReason string) StopReason {
	if status != "incomplete" {
		return StopEndTurn
	}
	if incompleteReason == "content_filter" {
		return StopRefusal
	}
	return StopMaxTokens
}

// respDecodeUsage reads a Responses usage object. input_tokens includes
// cached tokens, as the IR's InputTokens does.
func respDecodeUsage(u gjson.Result) Usage {
	return Usage{
		InputTokens:      usageCount(u.Get("input_tokens")),
		OutputTokens:     usageCount(u.Get("output_tokens")),
		CacheReadTokens:  usageCount(u.Get("input_tokens_details.cached_tokens")),
		CacheWriteTokens: usageCount(u.Get("input_tokens_details.cache_write_tokens")),
		ReasoningTokens:  usageCount(u.Get("output_tokens_details.reasoning_tokens")),
	}
}

// respAppendUsage appends a usage object as the Responses API reports it,
// with input_tokens_details.cache_write_tokens when the backend wrote to
// its cache.
func respAppendUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens))
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = appendJSONInt(b, int64(u.CacheReadTokens))
	if u.CacheWriteTokens > 0 {
		b = append(b, `,"cache_write_tokens":`...)
		b = appendJSONInt(b, int64(u.CacheWriteTokens))
	}
	b = append(b, `},"output_tokens":`...)
	b = appendJSONInt(b, int64(u.OutputTokens))
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = appendJSONInt(b, int64(u.ReasoningTokens))
	b = append(b, `},"total_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens+u.OutputTokens))
	return append(b, '}')
}

// respErrorFromObject reads the error object of a failed response,
// {"code","message"}, whose code is the only hint at the kind.
func respErrorFromObject(obj gjson.Result) *Error {
	code := obj.Get("code").Str
	e := oaiNewError(0, "", code)
	if m := obj.Get("message").Str; m != "" {
		e.Message = m
	}
	return overflowFrom(e, obj, "")
}

// respCustomSchemaStart and respCustomSchemaEnd frame the description of
// the one string argument a custom tool is exposed with.
const (
	respCustomSchemaStart = `{"type":"object","properties":{"input":{"type":"string","description":`
	respCustomSchemaEnd   = `}},"required":["input"],"additionalProperties":false}`
)

// respCustomSchema is the JSON Schema a freeform tool is exposed to
// backends with: one string argument, "input", described by the tool's
// input format (a grammar, when the client gave one), so a model that
// cannot be constrained by the grammar still knows what to write.
func respCustomSchema(format gjson.Result) []byte {
	desc := "The raw input of this freeform tool, as plain text (not JSON)."
	if format.Get("type").Str == "grammar" {
		desc += " It must match this " + format.Get("syntax").Str + " grammar:\n" + format.Get("definition").Str
	}
	b := append([]byte(nil), respCustomSchemaStart...)
	b = appendJSONString(b, desc)
	return append(b, respCustomSchemaEnd...)
}

// respCustomInput extracts the raw input of a custom tool call from the
// arguments a backend produced for it ({"input":"…"}); arguments of another
// shape are passed on as they are, rather than lost.
func respCustomInput(args string) string {
	if v := gjson.Get(args, "input"); v.Type == gjson.String {
		return v.Str
	}
	return args
}

// respCustomArguments wraps a custom tool call's raw input as the IR's
// arguments object.
func respCustomArguments(input string) string {
	return string(appendJSONString(append([]byte(nil), `{"input":`...), input)) + "}"
}

// respIsCustom reports whether the client declared name as a custom tool.
func respIsCustom(req *Request, name string) bool {
	if req == nil {
		return false
	}
	for i := range req.Tools {
		if req.Tools[i].Custom && req.Tools[i].Name == name {
			return true
		}
	}
	return false
}

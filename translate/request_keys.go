package translate

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// TopLevel is what one scan over a request body's top-level members found:
// the members louter routes by, read before the body is decoded (or, for a
// request passed on untranslated, instead of decoding it).
type TopLevel struct {
	// Model is the "model" member (gjson.Result{} when absent).
	Model gjson.Result
	// Stream is the "stream" member (gjson.Result{} when absent).
	Stream gjson.Result
	// Metadata and PromptCacheKey are the members a conversation is known
	// by (Claude Code's metadata.user_id, Codex's prompt_cache_key), read
	// in the same pass so that finding them costs nothing more.
	Metadata, PromptCacheKey gjson.Result
}

// actedOn lists, per protocol, the top-level members louter acts on: it
// routes by the model, answers as the stream member says and caps the
// output limit. Spellings of one member share a name's slot (Gemini reads
// generationConfig and generation_config alike).
var actedOn = map[Protocol][]string{
	ProtocolAnthropic:       {"model", "stream", "max_tokens"},
	ProtocolOpenAIChat:      {"model", "stream", "max_tokens", "max_completion_tokens"},
	ProtocolOpenAIResponses: {"model", "stream", "max_output_tokens"},
	ProtocolGemini:          {"generationConfig"},
}

// ScanTopLevel reads the top-level members of a JSON object body once,
// skipping over their values, and refuses a body that repeats a member
// louter acts on. JSON parsers disagree on duplicates: gjson, which louter
// routes and caps with, takes the first copy, while most backends take the
// last, so a request with two "model" members could be routed by one and
// served by the other. Key escapes are undone before comparing
// ("mod\u0065l" is "model"). Inside Gemini's generationConfig the same
// holds for maxOutputTokens. body must be valid JSON.
func ScanTopLevel(p Protocol, body []byte) (TopLevel, *Error) {
	var top TopLevel
	if len(body) == 0 {
		return top, nil
	}
	keys, ok := actedOn[p]
	if !ok {
		keys = []string{"model", "stream"}
	}
	var seen uint8 // one bit per entry of keys
	var err *Error
	// A view of body without a copy; the Results kept are cloned below.
	root := gjson.Parse(unsafe.String(&body[0], len(body)))
	root.ForEach(func(k, v gjson.Result) bool {
		name := k.Str
		if p == ProtocolGemini {
			name = geminiCamel(name)
		}
		for i, key := range keys {
			if name != key {
				continue
			}
			if seen&(1<<i) != 0 {
				err = duplicateKey(p, key)
				return false
			}
			seen |= 1 << i
			switch key {
			case "model":
				top.Model = cloneResult(v)
			case "stream":
				top.Stream = cloneResult(v)
			case "generationConfig":
				err = scanGenerationConfig(v)
			}
			break
		}
		switch name {
		case "metadata":
			top.Metadata = cloneResult(v)
		case "prompt_cache_key":
			top.PromptCacheKey = cloneResult(v)
		}
		return err == nil
	})
	return top, err
}

// scanGenerationConfig refuses a Gemini generationConfig that repeats
// maxOutputTokens, in either spelling.
func scanGenerationConfig(v gjson.Result) *Error {
	if !v.IsObject() {
		return nil // the decoder reports the type
	}
	seen := false
	var err *Error
	v.ForEach(func(k, _ gjson.Result) bool {
		if geminiCamel(k.Str) == "maxOutputTokens" {
			if seen {
				err = duplicateKey(ProtocolGemini, "generationConfig.maxOutputTokens")
			}
			seen = true
		}
		return err == nil
	})
	return err
}

// duplicateKey is the 400 for a repeated member, in protocol p's words.
func duplicateKey(p Protocol, key string) *Error {
	switch p {
	case ProtocolAnthropic:
		return anthBadParam(key, key+": duplicate key in the request body; send each field once")
	case ProtocolGemini:
		return geminiBadRequest(key, "Invalid JSON payload received. Duplicate field %q (%s).", geminiSnake(key), "send each field once")
	}
	e := oaiBadRequest(key, "Duplicate key '%s' in the request body; send each field once.", key)
	e.Code = "duplicate_key"
	return e
}

// cloneResult copies the strings of r out of the request body.
func cloneResult(r gjson.Result) gjson.Result {
	r.Raw = strings.Clone(r.Raw)
	r.Str = strings.Clone(r.Str)
	return r
}

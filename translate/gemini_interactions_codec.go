package translate

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// ProtocolGeminiInteractions is Google's Interactions API
// (POST /v1beta/interactions, the "steps" schema that replaced "outputs" in
// June 2026), served to clients only: louter answers it from any backend,
// but cannot send it to one.
const ProtocolGeminiInteractions Protocol = "gemini_interactions"

// interactionsCodec translates the Gemini Interactions API to and from the
// IR, as a client protocol.
//
// The Interactions API differs from generateContent, and from the other
// protocols, in three ways the codec has to bridge:
//
//   - A conversation is a flat list of typed steps (user_input,
//     model_output, thought, function_call, function_result), not of
//     role-tagged messages. The decoder groups consecutive steps into IR
//     messages: what the model produced in one turn (its thoughts, text and
//     calls) into one assistant message, and the function results and user
//     input that answer it into one user message. The encoders write one
//     step per IR block, in the order the blocks come.
//   - It is stateful by default: store defaults to true, and
//     previous_interaction_id continues a stored interaction. The codec
//     keeps no state: the server around it resolves previous_interaction_id
//     and keeps store:true answers, taking both members out of the body
//     (louter's caddy module does, on its store). What reaches the decoder
//     still asking for state (previous_interaction_id, store:true,
//     continuation_token, background) is refused with a 400 naming the
//     field; a request that leaves store out is answered statelessly.
//     interactionsNeedsStore is the one place that decides it.
//   - Thought signatures ride on thought steps, and a function_call step has
//     no field for one. A thought step carries an IR thinking part's
//     signature as it is, whoever issued it; a Gemini backend's signature on
//     a call still travels folded into the call's id (geminiJoinCallID),
//     which the client echoes back on its function_result and function_call
//     steps. An Anthropic redacted_thinking block becomes a thought step
//     whose signature is interactionsRedactedPrefix and the opaque data, so
//     it goes back to Anthropic as it came.
//
// Errors have the Interactions API's own shape,
// {"error":{"code":"invalid_request","message":"..."}}, with a string code
// (interactionsErrorCode), in a body and in a stream's error event.
type interactionsCodec struct{}

func init() { Register(interactionsCodec{}) }

// Protocol implements Codec.
func (interactionsCodec) Protocol() Protocol { return ProtocolGeminiInteractions }

// TopLevelRules implements TopLevelCodec.
func (interactionsCodec) TopLevelRules() *TopLevelRules { return &interactionsTopLevel }

// interactionsTopLevel: the model and the stream mode are body members;
// the system prompt is system_instruction and the conversation input. The
// output limit (generation_config.max_output_tokens) is capped in the IR:
// an Interactions request is never passed to a backend untranslated.
var interactionsTopLevel = TopLevelRules{
	ActedOn:  []string{"model", "stream"},
	System:   "system_instruction",
	Messages: "input",
	Duplicate: func(key string) *Error {
		return interactionsBadRequest(key, "%s: duplicate field; send each field once", key)
	},
}

// ClientStatus implements StatusCodec: Google's APIs report an overloaded
// model as 503, never with Anthropic's 529.
func (interactionsCodec) ClientStatus(status int, _ *Error) int {
	if status == 529 {
		return http.StatusServiceUnavailable
	}
	return status
}

// ClientOverflow implements OverflowCodec: Gemini's wording of a prompt too
// long for the model, which Google's clients recognise.
func (interactionsCodec) ClientOverflow(e *Error) *Error { return geminiCodec{}.ClientOverflow(e) }

// OverflowWorded implements OverflowCodec.
func (interactionsCodec) OverflowWorded(e *Error) bool { return geminiCodec{}.OverflowWorded(e) }

// The backend half of the codec: the Interactions API is a client protocol
// only (its caddymodule row has no endpoint, so no backend can be
// configured with it). The methods still answer, with an error, so that a
// library user who tries gets one rather than a panic.

// errInteractionsBackend is what the backend half answers.
func errInteractionsBackend() *Error {
	return &Error{Status: http.StatusNotImplemented, Kind: ErrAPI, Code: "unimplemented",
		Message: "gemini_interactions is a client protocol only; louter cannot send requests to an Interactions API backend"}
}

// EncodeRequest implements Codec: always an error (client protocol only).
func (interactionsCodec) EncodeRequest(*Request) ([]byte, error) {
	return nil, errInteractionsBackend()
}

// DecodeResponse implements Codec: always an error (client protocol only).
func (interactionsCodec) DecodeResponse([]byte) (*Response, error) {
	return nil, errInteractionsBackend()
}

// NewStreamDecoder implements Codec: a decoder whose stream is an error
// (client protocol only).
func (interactionsCodec) NewStreamDecoder() StreamDecoder { return &interactionsNoDecoder{} }

type interactionsNoDecoder struct{ done bool }

func (d *interactionsNoDecoder) Decode(dst []Event, _ string, _ []byte) []Event { return d.End(dst) }

func (d *interactionsNoDecoder) End(dst []Event) []Event {
	if d.done {
		return dst
	}
	d.done = true
	return append(dst, Event{Type: EventError, Err: errInteractionsBackend()})
}

// Ids louter gives interactions: the "v1_" Google's own carry, and 24 hex
// digits.
func interactionsNewID() string { return newID("v1_") }

// interactionsRedactedPrefix starts the signature of a thought step that
// stands for an Anthropic redacted_thinking block (its data follows). A
// colon is in no base64 alphabet, so no Gemini signature starts so.
const interactionsRedactedPrefix = "redacted_thinking:"

// interactionsStatus is an interaction's status for an IR stop reason. A
// turn that ends in function calls waits for their results:
// requires_action. One cut short (output limit, context window, refusal,
// a paused server tool) is incomplete.
func interactionsStatus(r StopReason) string {
	switch r {
	case StopToolUse:
		return "requires_action"
	case StopMaxTokens, StopContextWindow, StopRefusal, StopPauseTurn:
		return "incomplete"
	case StopError:
		return "failed"
	}
	return "completed"
}

// interactionsAppendUsage appends a usage object as the Interactions API
// reports it. total_input_tokens includes cached tokens (as Gemini's
// promptTokenCount does); total_output_tokens excludes thoughts, which are
// total_thought_tokens (as candidatesTokenCount excludes them), and
// total_tokens is the sum of all.
func interactionsAppendUsage(b []byte, u *Usage) []byte {
	out := u.OutputTokens - u.ReasoningTokens
	if out < 0 {
		out = 0
	}
	b = append(b, `{"total_input_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens))
	b = append(b, `,"total_output_tokens":`...)
	b = appendJSONInt(b, int64(out))
	if u.CacheReadTokens > 0 {
		b = append(b, `,"total_cached_tokens":`...)
		b = appendJSONInt(b, int64(u.CacheReadTokens))
	}
	if u.ReasoningTokens > 0 {
		b = append(b, `,"total_thought_tokens":`...)
		b = appendJSONInt(b, int64(u.ReasoningTokens))
	}
	b = append(b, `,"total_tokens":`...)
	b = appendJSONInt(b, int64(u.InputTokens+u.OutputTokens))
	return append(b, '}')
}

// interactionsDecodeUsage reads a usage object written as
// interactionsAppendUsage writes it.
func interactionsDecodeUsage(u gjson.Result) Usage {
	thoughts := usageCount(u.Get("total_thought_tokens"))
	return Usage{
		InputTokens:     usageCount(u.Get("total_input_tokens")),
		OutputTokens:    usageCount(u.Get("total_output_tokens")) + thoughts,
		CacheReadTokens: usageCount(u.Get("total_cached_tokens")),
		ReasoningTokens: thoughts,
	}
}

// interactionsSignature is the signature of the thought step for a
// thinking (or redacted thinking) part.
func interactionsSignature(p *Part) string {
	if p.Type == PartRedactedThinking {
		return interactionsRedactedPrefix + p.Signature
	}
	return p.Signature
}

// interactionsThoughtPart is the IR part of a thought step's signature
// and summary text.
func interactionsThoughtPart(sig, summary string) Part {
	if data, ok := strings.CutPrefix(sig, interactionsRedactedPrefix); ok {
		return Part{Type: PartRedactedThinking, Signature: data}
	}
	return Part{Type: PartThinking, Text: summary, Signature: sig}
}

// Interface guards.
var (
	_ Codec         = interactionsCodec{}
	_ TopLevelCodec = interactionsCodec{}
	_ StatusCodec   = interactionsCodec{}
	_ OverflowCodec = interactionsCodec{}
	_ StreamDecoder = (*interactionsNoDecoder)(nil)
	_ StreamEncoder = (*interactionsStreamEncoder)(nil)
)

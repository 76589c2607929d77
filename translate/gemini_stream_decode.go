package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// geminiStreamDecoder turns streamGenerateContent chunks into IR events
// (REFERENCE §4.4). Each chunk is a whole GenerateContentResponse holding
// only the new parts, so text and thoughts are forwarded as they arrive; a
// functionCall part always arrives whole and becomes a tool call with its
// whole arguments. usageMetadata is cumulative on every chunk and
// finishReason comes on the last one, which ends the stream: Gemini has no
// terminator, the connection just closes. A stream that closes without a
// finishReason was cut, and the Emitter ends it with an error.
//
// The decoder reads one chunk per Decode call, whether it came framed as
// SSE (alt=sse) or as an element of a streamed JSON array.
type geminiStreamDecoder struct {
	em Emitter
	// grounding is what the answer reported of its searches
	// (gemini_grounding.go).
	grounding geminiGrounding
}

// Decode implements StreamDecoder.
func (d *geminiStreamDecoder) Decode(dst []Event, _ string, data []byte) []Event {
	if d.em.Done() {
		return dst
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return dst
	}
	if !gjson.ValidBytes(data) {
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream chunk: " + oaiSnippetN(data, 200)})
	}
	chunk := gjson.ParseBytes(data)
	if !chunk.IsObject() {
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream chunk: " + oaiSnippetN(data, 200)})
	}
	return d.chunk(dst, chunk)
}

// chunk decodes one GenerateContentResponse. Members are read in one pass,
// in either spelling.
func (d *geminiStreamDecoder) chunk(dst []Event, chunk gjson.Result) []Event {
	var candidates, usage, feedback, errv, id, model gjson.Result
	chunk.ForEach(func(k, v gjson.Result) bool {
		switch geminiCamel(k.Str) {
		case "candidates":
			candidates = v
		case "usageMetadata":
			usage = v
		case "promptFeedback":
			feedback = v
		case "error":
			errv = v
		case "responseId":
			id = v
		case "modelVersion":
			model = v
		}
		return true
	})
	if errv.Exists() && errv.Type != gjson.Null {
		return d.em.Fail(dst, geminiErrorFromBody(0, chunk))
	}
	var u *Usage
	if usage.IsObject() {
		x := geminiDecodeUsage(usage)
		u = &x
	}
	if !d.em.Started() {
		var start *Usage
		if u != nil {
			start = &Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens}
		}
		dst = d.em.Start(dst, id.Str, model.Str, start)
	}
	cand := candidates.Get("0")
	finish := geminiGet(cand, "finishReason", "finish_reason").Str
	geminiGet(cand, "content", "content").Get("parts").ForEach(func(_, p gjson.Result) bool {
		dst = d.part(dst, p)
		return true
	})
	dst = d.grounding.decode(dst, &d.em, cand) // after the text, as Gemini sends it
	if block := geminiGet(feedback, "blockReason", "block_reason"); block.Str != "" && !cand.Exists() {
		// A blocked prompt: no candidates at all.
		return d.em.Stop(dst, StopRefusal, "", u)
	}
	if finish == "" {
		if u != nil {
			dst = d.em.SetUsage(dst, *u)
		}
		return dst
	}
	reason, fatal := geminiStopReason(finish)
	if fatal {
		return d.em.Fail(dst, geminiFatalFinish(finish, geminiGet(cand, "finishMessage", "finish_message").Str))
	}
	return d.em.Stop(dst, reason, "", u)
}

// part decodes one part: a thought, text, or a whole function call. A
// thought signature rides on a thought (it signs it), on a function call
// (it goes into the call's id), or on a text part, often an empty one at the
// end (it becomes a signature-only thinking block, so a client that keeps
// thinking blocks hands it back).
func (d *geminiStreamDecoder) part(dst []Event, p gjson.Result) []Event {
	var text, thought, sig, call gjson.Result
	p.ForEach(func(k, v gjson.Result) bool {
		switch geminiCamel(k.Str) {
		case "text":
			text = v
		case "thought":
			thought = v
		case "thoughtSignature":
			sig = v
		case "functionCall":
			call = v
		}
		return true
	})
	switch {
	case call.IsObject():
		id := call.Get("id").Str
		if id == "" {
			id = newID("call_")
		}
		dst = d.em.ToolStart(dst, geminiJoinCallID(id, sig.Str), call.Get("name").Str)
		if args := call.Get("args"); args.IsObject() {
			dst = d.em.ToolArgs(dst, args.Raw)
		}
		return d.em.CloseBlock(dst)
	case thought.Type == gjson.True:
		dst = d.em.Thinking(dst, text.Str)
		if sig.Str != "" {
			// A signature ends the thought it signs: the next thought is
			// another block, so signatures are never run together.
			dst = d.em.Signature(dst, sig.Str)
			dst = d.em.CloseBlock(dst)
		}
		return dst
	default:
		dst = d.em.Text(dst, text.Str)
		if sig.Str != "" {
			dst = d.em.Signature(dst, sig.Str)
			dst = d.em.CloseBlock(dst)
		}
		return dst
	}
}

// End implements StreamDecoder.
func (d *geminiStreamDecoder) End(dst []Event) []Event { return d.em.End(dst) }

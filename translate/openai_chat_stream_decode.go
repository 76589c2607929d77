package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// NewStreamDecoder implements Codec.
func (openAIChatCodec) NewStreamDecoder() StreamDecoder { return &oaiStreamDecoder{} }

// oaiStreamDecoder turns chat.completion.chunk events into IR events
// (REFERENCE §2.3, §5.6). It forwards every delta as it arrives: text,
// reasoning and tool-call argument fragments are never held back.
//
// The stream ends when both the finish reason and the usage are known (the
// usage arrives on the finish chunk from DeepSeek, on a later chunk with
// empty choices from OpenAI), at [DONE], or at the end of the body when a
// finish reason was seen. A body that ends without either was cut, and the
// Emitter ends it with an error.
type oaiStreamDecoder struct {
	em Emitter

	finish    StopReason
	hasFinish bool
	usage     Usage
	hasUsage  bool
	refusal   bool // refusal deltas were forwarded as text

	// Tool calls are keyed by their wire index. The call at openKey is the
	// open tool block while the Emitter still has a tool call open; started
	// lists every key seen, to catch fragments for a call that was closed.
	openKey int
	openID  string
	hasOpen bool
	started []int
	synth   int // calls that arrived without an index so far
}

// oaiSynthKeyBase keys calls that arrive without an index, far from any
// wire index (some servers send -1 for a lone call).
const oaiSynthKeyBase = -1 << 30

// Decode implements StreamDecoder. Event names are ignored (OpenAI sends
// none) except "error", which a few servers use for in-stream errors.
func (d *oaiStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	if d.em.Done() {
		return dst
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return dst
	}
	if string(data) == "[DONE]" {
		return d.stop(dst)
	}
	if !gjson.ValidBytes(data) {
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream chunk: " + oaiSnippetN(data, 200)})
	}
	chunk := gjson.ParseBytes(data)
	if !chunk.IsObject() {
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream chunk: " + oaiSnippetN(data, 200)})
	}
	// One pass over the members: chunks are small but many, and each
	// gjson Get would scan the chunk again. Members not listed here
	// (object, created, system_fingerprint, service_tier, and obfuscation,
	// OpenAI's random padding) carry nothing the IR needs.
	var id, model, choices, usage, errv gjson.Result
	chunk.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			id = v
		case "model":
			model = v
		case "choices":
			choices = v
		case "usage":
			usage = v
		case "error":
			errv = v
		}
		return true
	})
	if (errv.Exists() && errv.Type != gjson.Null) || name == "error" {
		return d.em.Fail(dst, oaiErrorFromBody(0, chunk))
	}
	dst = d.em.Start(dst, id.Str, model.Str, nil)
	choices.ForEach(func(_, c gjson.Result) bool {
		dst = d.choice(dst, c)
		return !d.em.Done()
	})
	if d.em.Done() {
		return dst
	}
	if usage.IsObject() {
		d.usage, d.hasUsage = oaiDecodeUsage(usage), true
	}
	if d.hasFinish && d.hasUsage {
		return d.stop(dst)
	}
	return dst
}

func (d *oaiStreamDecoder) choice(dst []Event, c gjson.Result) []Event {
	var index, delta, finish gjson.Result
	c.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			index = v
		case "delta":
			delta = v
		case "finish_reason":
			finish = v
		}
		return true
	})
	if index.Int() != 0 {
		// Only the first choice is translated: louter rejects n > 1 on
		// input and never asks a backend for more than one choice, so
		// other indexes can only come from a misbehaving server.
		return dst
	}
	var content, refusal, toolCalls, reasoning, reasoningAlt, details gjson.Result
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "content":
			content = v
		case "refusal":
			refusal = v
		case "tool_calls":
			toolCalls = v
		case "reasoning_content":
			reasoning = v
		case "reasoning":
			reasoningAlt = v
		case "reasoning_details":
			details = v
		}
		return true
	})
	if reasoning.Exists() || reasoningAlt.Exists() || details.Exists() {
		if r := oaiReasoningText(delta); r != "" {
			dst = d.em.Thinking(dst, r)
		}
	}
	if content.Type == gjson.String && content.Str != "" {
		dst = d.em.Text(dst, content.Str)
	}
	if refusal.Type == gjson.String && refusal.Str != "" {
		d.refusal = true
		dst = d.em.Text(dst, refusal.Str)
	}
	toolCalls.ForEach(func(_, tc gjson.Result) bool {
		dst = d.toolCall(dst, tc)
		return !d.em.Done()
	})
	if finish.Type == gjson.String && finish.Str != "" {
		d.finish, d.hasFinish = oaiStopReason(finish.Str), true
	}
	return dst
}

// toolCall handles one tool_calls[] fragment. The first fragment of a call
// (a new index) opens a tool block; later fragments of the open call are
// forwarded as argument fragments at once. Blocks cannot interleave in the
// IR, so a fragment for a call that is no longer open fails the stream
// rather than being given to the wrong call.
func (d *oaiStreamDecoder) toolCall(dst []Event, tc gjson.Result) []Event {
	var id, name, args string
	var index gjson.Result
	tc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			index = v
		case "id":
			id = v.Str
		case "function":
			v.ForEach(func(k, v gjson.Result) bool {
				switch k.Str {
				case "name":
					name = v.Str
				case "arguments":
					args = oaiArguments(v)
				}
				return true
			})
		}
		return true
	})

	open := false
	if t, _ := d.em.OpenBlock(); t == BlockToolCall && d.hasOpen {
		open = true
	}
	var key int
	if index.Type == gjson.Number {
		key = int(index.Int())
	} else if open && (id == "" || id == d.openID) {
		key = d.openKey // a continuation from a server that omits index
	} else {
		d.synth++
		key = oaiSynthKeyBase - d.synth
	}

	if open && key == d.openKey && (id == "" || id == d.openID) {
		return d.em.ToolArgs(dst, args)
	}
	if d.wasStarted(key) && !(open && key == d.openKey) {
		if id == "" && name == "" && args == "" {
			return dst // an empty fragment changes nothing
		}
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI,
			Message: "interleaved tool call arguments are not supported"})
	}
	// A new call; also one that reuses the open call's index with a new id,
	// as servers that number every call 0 do.
	if id == "" {
		id = oaiNewCallID() // Ollama and some others send no id
	}
	d.started = append(d.started, key)
	d.openKey, d.openID, d.hasOpen = key, id, true
	dst = d.em.ToolStart(dst, id, name)
	return d.em.ToolArgs(dst, args)
}

func (d *oaiStreamDecoder) wasStarted(key int) bool {
	for _, k := range d.started {
		if k == key {
			return true
		}
	}
	return false
}

// stop ends the message with what is known: the finish reason ("" at a
// natural end without one) and the usage, if any arrived.
func (d *oaiStreamDecoder) stop(dst []Event) []Event {
	reason := d.finish
	if d.refusal && (reason == "" || reason == StopEndTurn) {
		// OpenAI ends a refusal with "stop".
		reason = StopRefusal
	}
	var u *Usage
	if d.hasUsage {
		u = &d.usage
	}
	return d.em.Stop(dst, reason, "", u)
}

// End implements StreamDecoder. A stream that reported a finish reason but
// sent no usage (the server ignored include_usage) ended normally; one
// without a finish reason and without [DONE] was cut.
func (d *oaiStreamDecoder) End(dst []Event) []Event {
	if d.em.Done() {
		return dst
	}
	if d.hasFinish {
		return d.stop(dst)
	}
	return d.em.End(dst)
}

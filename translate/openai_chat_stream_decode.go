package translate

import (
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

	scan    oaiChunkScan // the fast path's reading of the current chunk
	scratch []byte       // unescaping buffer
	arena   textArena    // backs the deltas' texts (see delta)
}

// A stream's delta texts share arena chunks: a delta is a few words, a
// stream hundreds of deltas. The first chunk is small, so that a stream
// that stalls early holds little more than its texts (an open stream's
// memory is a goal of its own); each next one is twice the last, up to the
// largest.
const (
	oaiDeltaArenaFirst = 128
	oaiDeltaArenaMax   = 1 << 10
)

// oaiSynthKeyBase keys calls that arrive without an index, far from any
// wire index (some servers send -1 for a lone call).
const oaiSynthKeyBase = -1 << 30

// Decode implements StreamDecoder. Event names are ignored (OpenAI sends
// none) except "error", which a few servers use for in-stream errors.
func (d *oaiStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	return d.decode(dst, name, data, true)
}

// decode is Decode; fast false keeps to the gjson path, for tests that hold
// the two paths to each other.
func (d *oaiStreamDecoder) decode(dst []Event, name string, data []byte, fast bool) []Event {
	if d.em.Done() {
		return dst
	}
	data = trimSpace(data)
	if len(data) == 0 {
		return dst
	}
	if string(data) == "[DONE]" {
		return d.stop(dst)
	}
	if fast && name != "error" && d.scan.scan(data) {
		return d.decodeScanned(dst, data)
	}
	return d.decodeGJSON(dst, name, data)
}

// decodeScanned handles a chunk of the common shape, read by one pass of
// oaiChunkScan. It does what decodeGJSON does with such a chunk.
func (d *oaiStreamDecoder) decodeScanned(dst []Event, data []byte) []Event {
	c := &d.scan
	if !d.em.Started() {
		dst = d.em.Start(dst, c.id.str(data, &d.scratch), c.model.str(data, &d.scratch), nil)
	}
	if c.hasChoice && c.index == 0 {
		dst = d.scannedChoice(dst, data)
		if d.em.Done() {
			return dst
		}
	}
	if c.usage.kind == jsonObject {
		d.usage, d.hasUsage = oaiDecodeUsage(gjson.ParseBytes(c.usage.bytes(data))), true
	}
	if d.hasFinish && d.hasUsage {
		return d.stop(dst)
	}
	return dst
}

// scannedChoice is choice for a scanned chunk.
func (d *oaiStreamDecoder) scannedChoice(dst []Event, data []byte) []Event {
	c := &d.scan
	// The first non-empty reasoning field wins, as in oaiReasoningText
	// (reasoning_details never reaches this path).
	if c.reasoning.kind == jsonString && c.reasoning.start < c.reasoning.end {
		dst = d.em.Thinking(dst, d.delta(c.reasoning, data))
	} else if c.reasonAlt.kind == jsonString && c.reasonAlt.start < c.reasonAlt.end {
		dst = d.em.Thinking(dst, d.delta(c.reasonAlt, data))
	}
	if c.content.kind == jsonString && c.content.start < c.content.end {
		dst = d.em.Text(dst, d.delta(c.content, data))
	}
	if c.refusal.kind == jsonString && c.refusal.start < c.refusal.end {
		d.refusal = true
		dst = d.em.Text(dst, d.delta(c.refusal, data))
	}
	for i := range c.calls {
		if d.em.Done() {
			break
		}
		call := &c.calls[i]
		args := ""
		if call.args.kind == jsonString {
			// A fragment of arguments is a delta like a text's: cut
			// from the arena too.
			args = d.delta(call.args, data)
		} else {
			args = call.arguments(data, &d.scratch)
		}
		dst = d.toolFragment(dst, call.hasIndex, int(call.index),
			call.id.str(data, &d.scratch), call.name.str(data, &d.scratch), args)
	}
	if c.finish.kind == jsonString && c.finish.start < c.finish.end {
		d.finish, d.hasFinish = oaiStopReason(c.finish.str(data, &d.scratch)), true
	}
	return dst
}

// delta is sp.str for a delta's text: a copy cut from the stream's arena
// rather than an allocation of its own, one per chunk.
func (d *oaiStreamDecoder) delta(sp jsonSpan, data []byte) string {
	b := data[sp.start:sp.end]
	if sp.esc {
		d.scratch = jsonUnescape(d.scratch[:0], b)
		b = d.scratch
	}
	return d.arena.keep(b, min(oaiDeltaArenaMax, max(oaiDeltaArenaFirst, 2*d.arena.sb.Cap())))
}

// decodeGJSON decodes any chunk, valid or not, with gjson. It defines the
// decoder's behaviour; decodeScanned is its fast twin for common chunks.
func (d *oaiStreamDecoder) decodeGJSON(dst []Event, name string, data []byte) []Event {
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
	// Some servers send "tool_calls": null on every delta; gjson's ForEach
	// would hand the null itself to the callback as if it were a call.
	toolCalls.ForEach(func(_, tc gjson.Result) bool {
		if !tc.IsObject() {
			return true
		}
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
	return d.toolFragment(dst, index.Type == gjson.Number, int(index.Int()), id, name, args)
}

// toolFragment handles one tool call fragment's fields; hasIndex says
// whether it came with a numeric index.
func (d *oaiStreamDecoder) toolFragment(dst []Event, hasIndex bool, index int, id, name, args string) []Event {
	open := false
	if t, _ := d.em.OpenBlock(); t == BlockToolCall && d.hasOpen {
		open = true
	}
	var key int
	if hasIndex {
		key = index
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

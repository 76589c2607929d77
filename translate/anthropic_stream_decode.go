package translate

import "github.com/tidwall/gjson"

// anthropicStreamDecoder turns an Anthropic Messages SSE stream (REFERENCE
// §1.6) into IR events. Every text, thinking and argument fragment is
// forwarded as soon as its event arrives.
type anthropicStreamDecoder struct {
	em Emitter

	usage    anthUsage
	hasUsage bool

	// From message_delta: the stop is announced there and happens at
	// message_stop, or at the end of the body when message_stop is lost.
	stop     string
	stopSeq  string
	sawDelta bool

	// skipped lists the wire indices of blocks whose deltas and stop are
	// ignored: those of server tools louter does not translate, and
	// server tool results, emitted whole at their start.
	skipped []int

	// srv is the server_tool_use block being read, nil when none.
	srv *anthServerToolStream

	// pendingInput is a tool call's input given whole in content_block_start
	// by a server that does not stream it; real Anthropic sends "{}" there
	// and streams the input as input_json_delta.
	pendingInput string

	scan    anthEventScan // the fast path's reading of the current event
	scratch []byte        // unescaping buffer
}

// Decode implements StreamDecoder.
func (d *anthropicStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	return d.decode(dst, name, data, true)
}

// decode is Decode; fast false keeps to the gjson path, for tests that hold
// the two paths to each other.
func (d *anthropicStreamDecoder) decode(dst []Event, name string, data []byte, fast bool) []Event {
	if d.em.Done() {
		return dst
	}
	typ := name
	if fast && (typ == "" || anthFastType(typ) != "") {
		if d.scan.scan(data) {
			if typ == "" && d.scan.typ.kind == jsonString && !d.scan.typ.esc {
				typ = anthFastType(d.scan.typ.bytes(data))
			}
			if typ != "" {
				if out, ok := d.decodeScanned(dst, typ, data); ok {
					return out
				}
			}
		}
	}
	return d.decodeGJSON(dst, name, data)
}

// anthFastType returns the type of an event the fast path takes, "" for
// the others.
func anthFastType[T string | []byte](typ T) string {
	switch string(typ) {
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_stop":
		return "content_block_stop"
	case "message_stop":
		return "message_stop"
	case "ping":
		return "ping"
	}
	return ""
}

// decodeScanned handles an event read by one pass of anthEventScan, doing
// what decodeGJSON does with it. ok is false, before anything was done, for
// an event it leaves to decodeGJSON.
func (d *anthropicStreamDecoder) decodeScanned(dst []Event, typ string, data []byte) (_ []Event, ok bool) {
	e := &d.scan
	if d.srv != nil {
		return dst, false // a server_tool_use block: decodeGJSON reads it
	}
	switch typ {
	case "content_block_delta":
		if d.isSkipped(int(e.index)) {
			return dst, true
		}
		if e.deltaType.kind != jsonString {
			return dst, true // as an unknown delta type
		}
		if e.deltaType.esc {
			return dst, false
		}
		var field *jsonSpan
		switch string(e.deltaType.bytes(data)) {
		case "text_delta":
			field = &e.text
		case "thinking_delta":
			field = &e.thinking
		case "signature_delta":
			field = &e.signature
		case "input_json_delta":
			field = &e.partialJSON
		case "citations_delta":
			return dst, false // decodeGJSON reads it
		default:
			return dst, true // newer delta types
		}
		// gjson's String gives "" for an absent or null field and the
		// text of other kinds, which the gjson path handles.
		switch field.kind {
		case jsonString, jsonAbsent, jsonNull:
		default:
			return dst, false
		}
		s := field.str(data, &d.scratch)
		switch field {
		case &e.text:
			return d.em.Text(dst, s), true
		case &e.thinking:
			return d.em.Thinking(dst, s), true
		case &e.signature:
			return d.em.Signature(dst, s), true
		}
		if s != "" {
			d.pendingInput = "" // the streamed input is the real one
		}
		return d.em.ToolArgs(dst, s), true
	case "content_block_stop":
		if d.isSkipped(int(e.index)) {
			return dst, true
		}
		dst = d.flushInput(dst)
		return d.em.CloseBlock(dst), true
	case "message_stop":
		return d.finish(dst), true
	case "ping":
		return dst, true
	}
	return dst, false
}

// decodeGJSON decodes any event, valid or not, with gjson. It defines the
// decoder's behaviour; decodeScanned is its fast twin for common events.
func (d *anthropicStreamDecoder) decodeGJSON(dst []Event, name string, data []byte) []Event {
	if !gjson.ValidBytes(data) {
		if name == "error" {
			return d.em.Fail(dst, anthropicCodec{}.DecodeError(0, data))
		}
		// A malformed event is an upstream failure, as with the other
		// protocols: going on would hand the client an answer with a hole
		// in it that looks complete.
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream event: " + anthTruncate(string(data))})
	}
	ev := gjson.ParseBytes(data)
	typ := name
	if typ == "" {
		typ = ev.Get("type").Str
		if typ == "" && ev.Get("error").Exists() {
			typ = "error" // a bare {"error":{…}} line
		}
	}
	if out, ok := d.serverToolEvent(dst, typ, ev); ok {
		return out
	}
	switch typ {
	case "message_start":
		msg := ev.Get("message")
		var u *Usage
		if d.usage.merge(msg.Get("usage")) {
			d.hasUsage = true
			iu := d.usage.ir()
			u = &iu
		}
		return d.em.Start(dst, msg.Get("id").String(), msg.Get("model").String(), u)

	case "content_block_start":
		return d.blockStart(dst, int(ev.Get("index").Int()), ev.Get("content_block"))

	case "content_block_delta":
		if d.isSkipped(int(ev.Get("index").Int())) {
			return dst
		}
		delta := ev.Get("delta")
		switch delta.Get("type").Str {
		case "text_delta":
			return d.em.Text(dst, delta.Get("text").String())
		case "thinking_delta":
			return d.em.Thinking(dst, delta.Get("thinking").String())
		case "signature_delta":
			return d.em.Signature(dst, delta.Get("signature").String())
		case "input_json_delta":
			frag := delta.Get("partial_json").String()
			if frag != "" {
				d.pendingInput = "" // the streamed input is the real one
			}
			return d.em.ToolArgs(dst, frag)
		case "citations_delta":
			if c := delta.Get("citation"); c.Get("type").Str == "web_search_result_location" {
				cite := anthCitation(c)
				return d.em.Cite(dst, &cite)
			}
		}
		// Newer delta types carry nothing the IR holds.
		return dst

	case "content_block_stop":
		if d.isSkipped(int(ev.Get("index").Int())) {
			return dst
		}
		dst = d.flushInput(dst)
		return d.em.CloseBlock(dst)

	case "message_delta":
		if r := ev.Get("delta.stop_reason"); r.Type == gjson.String {
			d.stop, d.sawDelta = r.Str, true
		}
		if s := ev.Get("delta.stop_sequence"); s.Type == gjson.String {
			d.stopSeq = s.Str
		}
		if d.usage.merge(ev.Get("usage")) {
			d.hasUsage = true
		}
		return dst

	case "message_stop":
		return d.finish(dst)

	case "error":
		return d.em.Fail(dst, anthropicCodec{}.DecodeError(0, data))
	}
	// ping and event types newer than this decoder.
	return dst
}

func (d *anthropicStreamDecoder) blockStart(dst []Event, index int, cb gjson.Result) []Event {
	// Blocks never interleave: a start ends whatever block a lost
	// content_block_stop left open.
	dst = d.flushInput(dst)
	dst = d.em.CloseBlock(dst)
	if out, ok := d.serverToolStart(dst, index, cb); ok {
		return out
	}
	f := anthCollectBlock(cb)
	switch f.typ.Str {
	case "text":
		return d.em.Text(dst, f.text.String())
	case "thinking":
		dst = d.em.Thinking(dst, f.thinking.String())
		return d.em.Signature(dst, f.signature.String())
	case "redacted_thinking":
		return d.em.Redacted(dst, f.data.String())
	case "tool_use":
		id := f.id.String()
		if id == "" {
			id = newID("toolu_")
		}
		if f.input.IsObject() && !anthEmptyObject(f.input) {
			d.pendingInput = f.input.Raw
		}
		return d.em.ToolStart(dst, id, f.name.String())
	}
	d.skipped = append(d.skipped, index)
	return dst
}

// flushInput forwards a tool input that came whole in content_block_start
// and was not followed by streamed fragments.
func (d *anthropicStreamDecoder) flushInput(dst []Event) []Event {
	if d.pendingInput == "" {
		return dst
	}
	in := d.pendingInput
	d.pendingInput = ""
	return d.em.ToolArgs(dst, in)
}

func (d *anthropicStreamDecoder) isSkipped(index int) bool {
	for _, i := range d.skipped {
		if i == index {
			return true
		}
	}
	return false
}

// finish ends the message with what message_delta announced. The Emitter
// closes a block left open (max_tokens in the middle of a tool call comes
// without content_block_stop).
func (d *anthropicStreamDecoder) finish(dst []Event) []Event {
	dst = d.flushInput(dst)
	var u *Usage
	if d.hasUsage {
		iu := d.usage.ir()
		u = &iu
	}
	return d.em.Stop(dst, anthDecodeStop(d.stop), d.stopSeq, u)
}

// End implements StreamDecoder. A stream whose message_delta announced the
// stop but whose message_stop was lost is complete; any other unfinished
// stream was cut.
func (d *anthropicStreamDecoder) End(dst []Event) []Event {
	if d.em.Done() {
		return dst
	}
	if d.sawDelta {
		return d.finish(dst)
	}
	return d.em.End(dst)
}

func anthEmptyObject(v gjson.Result) bool {
	empty := true
	v.ForEach(func(_, _ gjson.Result) bool {
		empty = false
		return false
	})
	return empty
}

// Interface guard.
var _ StreamDecoder = (*anthropicStreamDecoder)(nil)

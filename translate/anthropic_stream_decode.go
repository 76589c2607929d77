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

	// skipped lists the wire indices of server tool blocks
	// (server_tool_use, web_search_tool_result, …), whose deltas and stop
	// are ignored.
	skipped []int

	// pendingInput is a tool call's input given whole in content_block_start
	// by a server that does not stream it; real Anthropic sends "{}" there
	// and streams the input as input_json_delta.
	pendingInput string
}

// Decode implements StreamDecoder.
func (d *anthropicStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	if d.em.Done() {
		return dst
	}
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
		}
		// citations_delta and newer delta types carry nothing the IR
		// holds.
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
			id = anthNewID("toolu_")
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

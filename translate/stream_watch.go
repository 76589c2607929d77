package translate

import "bytes"

// WatchVerdict is what a StreamWatch makes of one event of a stream it
// watches.
type WatchVerdict uint8

// Verdicts.
const (
	// WatchContinue: a well-formed event; the stream goes on.
	WatchContinue WatchVerdict = iota
	// WatchEnd: the protocol's terminal event, or an error the backend
	// reported in the stream. The stream is complete; what follows is not
	// looked at.
	WatchEnd
	// WatchMalformed: not an event of the protocol (its data is not JSON,
	// or not an object). The stream cannot be trusted past it.
	WatchMalformed
)

// StreamWatch follows a stream that is passed to a client of the same
// protocol untouched, to tell a finished stream from a cut one and a sound
// event from a broken one, and to read the usage it reports. It is the
// cheap sibling of a StreamDecoder: each event is validated in one pass of
// the JSON scanner, and only the few events that carry usage or the
// response id are read further. One StreamWatch follows one stream; it is
// not safe for concurrent use.
//
// The rules of each protocol are its codec's (WatchCodec); they share the
// validating scan of this file (watchState.open).
type StreamWatch interface {
	// Check judges one framed event: its SSE event name ("" when none)
	// and its data. data is only read during the call.
	Check(name string, data []byte) WatchVerdict
	// Complete reports whether the stream, were it to end now, would
	// have ended properly: its terminal event was seen (or, for OpenAI
	// Chat and Gemini, a finish reason, after which a server may just
	// close).
	Complete() bool
	// Errored reports whether the stream ended with the backend's own
	// error: an error event, or a failed response.
	Errored() bool
	// UsageOnly reports whether the event last checked carried usage and
	// no content: the chunk that ends an OpenAI Chat stream asked for its
	// usage (stream_options.include_usage), with an empty choices array.
	// A client that did not ask for it may not expect it, so a
	// passthrough that asked on its behalf leaves it out
	// (stream.PassWatcher.HideUsageOnly); the usage is read all the same.
	UsageOnly() bool
	// Usage returns the latest token counts the stream reported.
	Usage() (Usage, bool)
	// Resume prepares enc, a fresh stream encoder of the watched
	// protocol, to continue the stream the backend began, so that what
	// it writes next (an error event that ends the stream) fits after
	// what the client has: it is told the message started (so it writes
	// no second start), with what the stream announced that the encoder
	// must repeat (the Responses API's response id and sequence numbers).
	Resume(enc StreamEncoder)
}

// NewStreamWatch returns a watch for a stream of protocol p: its codec's
// (WatchCodec). A codec without one has the stream judged by its stream
// decoder (see WatchCodec); a protocol without a codec, by the checks all
// protocols share (an event must be a JSON object; an error ends the
// stream, a finish reason completes it).
func NewStreamWatch(p Protocol) StreamWatch {
	c, ok := Lookup(p)
	if !ok {
		return &jsonWatch{}
	}
	if wc, ok := c.(WatchCodec); ok {
		return wc.NewStreamWatch()
	}
	return &decodedWatch{dec: c.NewStreamDecoder()}
}

// watchState is what every protocol's watch keeps, and the checks they
// share. The codecs' watches embed it.
type watchState struct {
	complete bool // the stream may end here without being cut
	errored  bool // the stream ended with the backend's error
	// usageOnly: the last event checked carried only usage (UsageOnly).
	usageOnly bool
	usage     Usage
	hasUsage  bool
	// resume skips the members an event repeats from the one before
	// (stream_watch_resume.go).
	resume watchResume
}

// Complete implements StreamWatch.
func (w *watchState) Complete() bool { return w.complete }

// Errored implements StreamWatch.
func (w *watchState) Errored() bool { return w.errored }

// UsageOnly implements StreamWatch.
func (w *watchState) UsageOnly() bool { return w.usageOnly }

// Usage implements StreamWatch.
func (w *watchState) Usage() (Usage, bool) { return w.usage, w.hasUsage }

// Resume implements StreamWatch: the encoder is told the message started.
func (w *watchState) Resume(enc StreamEncoder) {
	enc.Encode(discardFrameWriter{}, &Event{Type: EventMessageStart})
}

// open makes the checks every protocol's events share and reads the
// event's top-level members into top. It returns data with its
// surrounding space trimmed. done says the verdict is final: an empty data
// line (skipped, as the decoders skip it), an "error" event or a bare
// error object (the backend's own error, whatever its shape: the stream
// ends), or data that is not one JSON object (malformed). Otherwise the
// protocol's watch judges the event by top.
func (w *watchState) open(name string, data []byte, top *watchTop) (_ []byte, v WatchVerdict, done bool) {
	w.usageOnly = false
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return data, WatchContinue, true
	}
	if name == "error" {
		w.complete, w.errored = true, true
		return data, WatchEnd, true
	}
	if !top.scan(data, &w.resume) {
		return data, WatchMalformed, true
	}
	if top.err {
		w.complete, w.errored = true, true
		return data, WatchEnd, true
	}
	return data, WatchContinue, false
}

// finish notes a finish reason, after which a server may just close
// (OpenAI Chat, Gemini).
func (w *watchState) finish(top *watchTop) WatchVerdict {
	if top.finish {
		w.complete = true
	}
	return WatchContinue
}

// jsonWatch watches a stream of a protocol without a codec.
type jsonWatch struct{ watchState }

// Check implements StreamWatch.
func (w *jsonWatch) Check(name string, data []byte) WatchVerdict {
	var top watchTop
	if _, v, done := w.open(name, data, &top); done {
		return v
	}
	return w.finish(&top)
}

// discardFrameWriter drops what an encoder writes.
type discardFrameWriter struct{}

func (discardFrameWriter) WriteFrame(string, []byte) {}

// decodedWatch watches a stream of a protocol whose codec has no watch of
// its own with the codec's stream decoder (WatchCodec's default).
type decodedWatch struct {
	watchState
	dec StreamDecoder
	evs []Event
}

// Check implements StreamWatch.
func (w *decodedWatch) Check(name string, data []byte) WatchVerdict {
	w.usageOnly = false
	w.evs = w.dec.Decode(w.evs[:0], name, data)
	for i := range w.evs {
		ev := &w.evs[i]
		if ev.Usage != nil {
			w.usage, w.hasUsage = *ev.Usage, true
		}
		if ev.Type == EventMessageStop || ev.Type == EventError {
			w.complete, w.errored = true, ev.Type == EventError
			return WatchEnd
		}
	}
	return WatchContinue
}

// watchTop is what a StreamWatch reads from an event in its one validating
// pass: the top-level members that matter to one of the protocols.
type watchTop struct {
	typ    jsonSpan // "type" (Anthropic, Responses), string contents
	usage  jsonSpan // "usage", "usageMetadata" or "usage_metadata"
	seq    jsonSpan // "sequence_number" (Responses)
	err    bool     // an "error" member that is not null
	finish bool     // a choice or candidate with a finish reason
	// noChoices: the choices (or candidates) are an empty array.
	noChoices bool
}

// scan validates data, which must be one JSON object, and reads its
// top-level members. Member names with escapes are taken as unknown names.
// r lets the scan skip the bytes an earlier event began with, and keeps
// this one's for the next (stream_watch_resume.go).
func (t *watchTop) scan(data []byte, r *watchResume) bool {
	if r.swap.swapped(data, t) {
		return true
	}
	var delta jsonSpan // the delta of the one choice, for r.swap
	m, resumed, ok := r.start(data, t)
	if !ok {
		return false
	}
	for {
		at := m.i
		name, _, more := m.next()
		if !more {
			break
		}
		var sp jsonSpan
		ok := true
		switch string(name) {
		case "choices", "candidates":
			if !resumed {
				r.record(data, at, &m, t)
			}
			if m.peek() == jsonArray {
				m.i, ok = t.scanChoices(data, m.i, &delta)
			} else {
				m.i, ok = jsonSkipValue(data, m.i)
			}
		case "type":
			if sp, ok = m.value(); sp.kind == jsonString {
				t.typ = sp
			}
		case "usage", "usageMetadata", "usage_metadata":
			t.usage, ok = m.value()
		case "sequence_number":
			t.seq, ok = m.value()
		case "error":
			sp, ok = m.value()
			t.err = sp.kind != jsonNull
		default:
			// Most members (ids, model, created, deltas) are only
			// validated: no span is made of them.
			m.i, ok = jsonSkipValue(data, m.i)
		}
		if !ok {
			return false
		}
	}
	if m.bad || !jsonScanTail(data, m.i) {
		return false
	}
	r.swap.keep(data, delta, t)
	return true
}

// scanChoices validates the choices or candidates array at data[i] and
// notes whether an element has a finish reason (a string that is not
// empty). delta is set to the span of the "delta" value when the array
// has one element (watchSwap), and cleared otherwise.
func (t *watchTop) scanChoices(data []byte, i int, delta *jsonSpan) (int, bool) {
	a := jsonOpenArray(data, i)
	t.noChoices = true
	*delta = jsonSpan{}
	for a.next() {
		if !t.noChoices {
			*delta = jsonSpan{} // a second choice: no template
		}
		t.noChoices = false
		if a.peek() != jsonObject {
			j, ok := jsonSkipValue(data, a.i)
			if !ok {
				return j, false
			}
			a.i = j
			continue
		}
		m := jsonOpenObject(data, a.i)
		for {
			name, _, more := m.next()
			if !more {
				break
			}
			ok := true
			switch string(name) {
			case "delta":
				start := m.i
				m.i, ok = jsonSkipValue(data, m.i)
				if a.n == 1 {
					*delta = jsonSpan{start: start, end: m.i}
				}
			case "finish_reason", "finishReason":
				var sp jsonSpan
				sp, ok = m.value()
				if sp.kind == jsonString && sp.end > sp.start {
					t.finish = true
				}
			default:
				m.i, ok = jsonSkipValue(data, m.i)
			}
			if !ok {
				return m.i, false
			}
		}
		if m.bad {
			return m.i, false
		}
		a.i = m.i
	}
	return a.i, !a.bad
}

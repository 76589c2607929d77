package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
)

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
// response id are read further. One StreamWatch follows one stream.
type StreamWatch struct {
	proto    Protocol
	complete bool // the stream may end here without being cut
	errored  bool // the stream ended with the backend's error
	// usageOnly: the last event checked carried only usage (UsageOnly).
	usageOnly bool
	usage     Usage
	hasUsage  bool
	anth      anthUsage // Anthropic reports usage in two parts
	id        string
	seq       int64 // the Responses sequence_number the next event takes
	// geminiUsage is the latest usageMetadata, read only when asked for:
	// Gemini repeats it on every chunk.
	geminiUsage []byte
	// resume skips the members an OpenAI Chat chunk repeats
	// (stream_watch_resume.go).
	resume watchResume

	// dec judges the events of a protocol this file has no rules for
	// (a codec registered elsewhere): its own stream decoder.
	dec StreamDecoder
	evs []Event
}

// NewStreamWatch returns a watch for a stream of protocol p. A protocol
// without rules here is judged by its codec's stream decoder: the stream
// ends at the first stop or error it decodes.
func NewStreamWatch(p Protocol) *StreamWatch {
	w := &StreamWatch{proto: p}
	switch p {
	case ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses, ProtocolGemini:
	default:
		if c, ok := Lookup(p); ok {
			w.dec = c.NewStreamDecoder()
		}
	}
	return w
}

// Complete reports whether the stream, were it to end now, would have
// ended properly: its terminal event was seen (or, for OpenAI Chat and
// Gemini, a finish reason, after which a server may just close).
func (w *StreamWatch) Complete() bool { return w.complete }

// Errored reports whether the stream ended with the backend's own error: an
// error event, or a failed response.
func (w *StreamWatch) Errored() bool { return w.errored }

// UsageOnly reports whether the event last checked carried usage and no
// content: the chunk that ends an OpenAI Chat stream asked for its usage
// (stream_options.include_usage), with an empty choices array. A client
// that did not ask for it may not expect it, so a passthrough that asked
// on its behalf leaves it out (stream.PassWatcher.HideUsageOnly); the
// usage is read all the same.
func (w *StreamWatch) UsageOnly() bool { return w.usageOnly }

// Usage returns the latest token counts the stream reported.
func (w *StreamWatch) Usage() (Usage, bool) {
	if len(w.geminiUsage) > 0 {
		w.usage, w.hasUsage = geminiDecodeUsage(gjson.ParseBytes(w.geminiUsage)), true
		w.geminiUsage = w.geminiUsage[:0]
	}
	return w.usage, w.hasUsage
}

// Resume prepares enc, a fresh stream encoder of the watched protocol, to
// continue the stream the backend began, so that what it writes next (an
// error event that ends the stream) fits after what the client has: it
// is told the message started, with the response id the stream announced
// (so it writes no second start), and a Responses encoder numbers its
// events on from the last sequence_number seen.
func (w *StreamWatch) Resume(enc StreamEncoder) {
	enc.Encode(discardFrameWriter{}, &Event{Type: EventMessageStart, ID: w.id})
	if r, ok := enc.(*respStreamEncoder); ok {
		r.seq = w.seq
	}
}

// discardFrameWriter drops what an encoder writes.
type discardFrameWriter struct{}

func (discardFrameWriter) WriteFrame(string, []byte) {}

// Check judges one framed event: its SSE event name ("" when none) and its
// data. data is only read during the call.
func (w *StreamWatch) Check(name string, data []byte) WatchVerdict {
	w.usageOnly = false
	if w.dec != nil {
		return w.checkDecoded(name, data)
	}
	data = bytes.TrimSpace(data)
	switch w.proto {
	case ProtocolOpenAIChat:
		if string(data) == "[DONE]" {
			w.complete = true
			return WatchEnd
		}
	case ProtocolAnthropic:
		if name == "ping" {
			return WatchContinue // its data is not worth a scan
		}
	}
	if len(data) == 0 {
		return WatchContinue // an empty data line: the decoders skip it too
	}
	if name == "error" {
		w.complete, w.errored = true, true
		return WatchEnd // the backend's own in-stream error, whatever its shape
	}
	var top watchTop
	if !top.scan(data, &w.resume) {
		return WatchMalformed
	}
	if top.err {
		w.complete, w.errored = true, true
		return WatchEnd // a bare error object (OpenAI Chat, Gemini)
	}
	switch w.proto {
	case ProtocolAnthropic:
		return w.checkAnthropic(name, data, &top)
	case ProtocolOpenAIResponses:
		if top.seq.kind == jsonNumber {
			if n, ok := jsonSmallInt(top.seq.bytes(data)); ok {
				w.seq = n + 1
			}
		}
		return w.checkResponses(name, data, &top)
	case ProtocolOpenAIChat:
		if top.usage.kind == jsonObject {
			w.usage, w.hasUsage = oaiDecodeUsage(gjson.ParseBytes(top.usage.bytes(data))), true
			w.usageOnly = top.noChoices
		}
	case ProtocolGemini:
		if top.usage.kind == jsonObject {
			w.geminiUsage = append(w.geminiUsage[:0], top.usage.bytes(data)...)
		}
	}
	if top.finish {
		w.complete = true
	}
	return WatchContinue
}

func (w *StreamWatch) checkDecoded(name string, data []byte) WatchVerdict {
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

func (w *StreamWatch) checkAnthropic(name string, data []byte, top *watchTop) WatchVerdict {
	if name == "" {
		name = string(top.typ.bytes(data)) // an event without its event line
	}
	switch name {
	case "message_stop":
		w.complete = true
		return WatchEnd
	case "error":
		w.complete, w.errored = true, true
		return WatchEnd
	case "message_start":
		if w.anth.merge(gjson.GetBytes(data, "message.usage")) {
			w.usage, w.hasUsage = w.anth.ir(), true
		}
	case "message_delta":
		if top.usage.kind == jsonObject && w.anth.merge(gjson.ParseBytes(top.usage.bytes(data))) {
			w.usage, w.hasUsage = w.anth.ir(), true
		}
	}
	return WatchContinue
}

func (w *StreamWatch) checkResponses(name string, data []byte, top *watchTop) WatchVerdict {
	if name == "" {
		name = string(top.typ.bytes(data))
	}
	switch name {
	case "response.created":
		if id := gjson.GetBytes(data, "response.id"); id.Type == gjson.String {
			w.id = id.Str
		}
	case "response.completed", "response.failed", "response.incomplete":
		if u := gjson.GetBytes(data, "response.usage"); u.IsObject() {
			w.usage, w.hasUsage = respDecodeUsage(u), true
		}
		w.complete, w.errored = true, name == "response.failed"
		return WatchEnd
	case "error":
		w.complete, w.errored = true, true
		return WatchEnd
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
				m.i, ok = t.scanChoices(data, m.i)
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
	return !m.bad && jsonScanTail(data, m.i)
}

// scanChoices validates the choices or candidates array at data[i] and
// notes whether an element has a finish reason (a string that is not
// empty).
func (t *watchTop) scanChoices(data []byte, i int) (int, bool) {
	a := jsonOpenArray(data, i)
	t.noChoices = true
	for a.next() {
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

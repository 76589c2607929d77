package stream

import (
	"github.com/louter/louter/translate"
)

// PassWatcher follows a stream passed through to a client of the same
// protocol. The bytes stay as the backend sent them, but they go out event
// by event: each Write forwards what the input holds up to the end of its
// last complete event and keeps the rest for the next one. So the client
// stream is always at an event boundary between writes, where an error
// event or a keep-alive can be added without splicing into an event; and a
// malformed event, or the half event a cut stream ends with, is never
// forwarded. Close tells whether the stream ended properly (its terminal
// event was seen) and, when not, End writes the error event that ends the
// client stream in its protocol, as a translated stream would end.
//
// The events are framed by the same parsers the Transcoder uses (SSE, or
// Gemini's streamed JSON array) and judged by a translate.StreamWatch,
// which validates each event in one pass without decoding it. Memory is
// bounded by the largest event.
type PassWatcher struct {
	framer Framer
	sse    *SSEParser       // framer, when the stream is SSE
	array  *JSONArrayParser // framer, when it is a streamed JSON array
	watch  translate.StreamWatch

	held    []byte  // the bytes after the last event boundary, not yet forwarded
	joined  *[]byte // held bytes followed by the current chunk, lent from a pool (output_pool.go)
	base    int     // len(held) when the current chunk was fed
	cut     int     // in held+chunk, the end of the last complete event; -1: none
	closing bool    // Close is flushing the framer: offsets mean nothing
	state   passState
	events  int // events forwarded
	failure *translate.Error
	emit    func(name string, data []byte)

	// Observe, when set, is called with every well-formed event, as the
	// framer gives it (data is only valid during the call): louter counts
	// the text of a stream whose usage may not come.
	Observe func(name string, data []byte)

	// hideUsage: the events that carry only usage are cut out of what is
	// forwarded (HideUsageOnly). evStart is where, in held+chunk, the
	// event being framed began (the end of the one before); drops are the
	// ranges of held+chunk to leave out of this write's output, which is
	// then built in trimmed, lent from the pool.
	hideUsage bool
	evStart   int
	inLen     int  // len(held+chunk)
	dropLead  bool // the last write ended in a dropped event
	drops     []dropRange
	trimmed   *[]byte
}

// dropRange is a range of held+chunk that is not forwarded.
type dropRange struct{ start, end int }

type passState uint8

const (
	passWatching passState = iota
	passEnded              // the terminal event was seen; the rest passes as it comes
	passBroken             // a malformed or cut stream; the rest is dropped
)

// NewPassWatcher returns a watcher for a stream of protocol p, framed as
// server-sent events, or as a streamed JSON array when jsonArray is set
// (Gemini's streamGenerateContent without alt=sse).
func NewPassWatcher(p translate.Protocol, jsonArray bool) *PassWatcher {
	w := &PassWatcher{watch: translate.NewStreamWatch(p)}
	if jsonArray {
		w.array = &JSONArrayParser{onEnd: w.arrayEnd}
		w.framer = w.array
	} else {
		w.sse = &SSEParser{}
		w.framer = w.sse
	}
	w.emit = w.check
	return w
}

// HideUsageOnly has the events that carry only usage left out of the
// client's stream (translate.StreamWatch.UsageOnly: the usage chunk that
// louter asked an OpenAI Chat backend for, for a client that did not ask);
// their usage is still read. Only SSE streams have such events.
func (w *PassWatcher) HideUsageOnly() { w.hideUsage = w.sse != nil }

// Write takes the next chunk of the backend's body and returns the bytes
// to forward now, which are p itself or a part of it, or a buffer valid
// until the next call. After the terminal event all input passes as it
// comes; after a malformed event nothing does (see Failure).
func (w *PassWatcher) Write(p []byte) []byte {
	out := w.write(p)
	if len(w.drops) == 0 {
		w.dropLead = false
		return out
	}
	// A dropped event that ends this write may end with the CR of a
	// CRLF: the LF that begins the next write is its too.
	w.dropLead = w.drops[len(w.drops)-1].end == w.inLen
	return w.trim(out)
}

func (w *PassWatcher) write(p []byte) []byte {
	switch w.state {
	case passEnded:
		return p
	case passBroken:
		return nil
	}
	in := p
	if len(w.held) > 0 {
		if w.joined == nil {
			w.joined = borrowOutput()
		}
		*w.joined = append(append((*w.joined)[:0], w.held...), p...)
		in = *w.joined
	}
	w.base, w.cut = len(w.held), -1
	w.drops = w.drops[:0]
	lead := 0
	if w.sse != nil {
		w.sse.blank, w.sse.prevBlank = -1, -1
		if w.sse.skipLF && len(w.held) == 0 && len(p) > 0 && p[0] == '\n' {
			// The last write ended with the CR of a blank line's CRLF:
			// its LF completes the boundary already forwarded.
			lead = 1
		}
	}
	w.evStart, w.inLen = lead, len(in)
	if lead > 0 && w.dropLead {
		w.drops = append(w.drops, dropRange{0, lead})
	}
	if err := w.framer.Feed(p, w.emit); err != nil && w.state == passWatching {
		w.fail("malformed upstream stream: " + err.Error())
	}
	if w.sse != nil && w.sse.blank >= 0 && w.state == passWatching {
		// Every event ends at a blank line, so the last one is at or
		// past the last event; only comments may lie between them.
		w.cut = w.base + w.sse.blank
	}
	if w.cut < lead && w.state != passEnded {
		w.cut = lead
	}
	switch w.state {
	case passEnded:
		w.held = w.held[:0]
		return in
	case passBroken:
		w.held = w.held[:0]
		return in[:max(w.cut, 0)]
	}
	if w.cut < 0 {
		w.held = append(w.held, p...)
		return nil
	}
	w.held = append(w.held[:0], in[w.cut:]...)
	return in[:w.cut]
}

// trim returns out without the dropped ranges, in the trimmed buffer.
func (w *PassWatcher) trim(out []byte) []byte {
	if w.trimmed == nil {
		w.trimmed = borrowOutput()
	}
	b, prev := (*w.trimmed)[:0], 0
	for _, d := range w.drops {
		start, end := min(d.start, len(out)), min(d.end, len(out))
		b = append(b, out[prev:max(start, prev)]...)
		prev = max(end, prev)
	}
	b = append(b, out[prev:]...)
	*w.trimmed = b
	w.drops = w.drops[:0]
	return b
}

// Release implements Releaser: it gives back the buffer a Write may have
// returned (the held bytes joined to the chunk, or what was left of them
// once events were cut out), so that a stream waiting on its backend
// holds only its incomplete event.
func (w *PassWatcher) Release() {
	returnOutput(w.joined)
	returnOutput(w.trimmed)
	w.joined, w.trimmed = nil, nil
}

// check is the framer's callback: it judges an event and moves the cut
// past it.
func (w *PassWatcher) check(name string, data []byte) {
	if w.state != passWatching {
		return
	}
	v := w.watch.Check(name, data)
	if v != translate.WatchMalformed {
		if w.Observe != nil {
			w.Observe(name, data)
		}
		if w.hideUsage && w.watch.UsageOnly() {
			w.drop()
		}
	}
	switch v {
	case translate.WatchEnd:
		w.state = passEnded
	case translate.WatchMalformed:
		w.fail("malformed upstream event")
		if w.sse != nil && !w.closing && w.sse.prevBlank >= 0 {
			// Only comments can lie between the last event and the
			// blank line before the malformed one: they may go.
			w.cut = w.base + w.sse.prevBlank
		}
	default:
		if !w.closing {
			w.cut = w.base + w.framerOffset()
			w.events++
		}
	}
	if !w.closing {
		w.evStart = w.base + w.framerOffset()
	}
}

// drop leaves the event just framed out of the output. An event framed by
// Close is the last of the held bytes, which then go.
func (w *PassWatcher) drop() {
	if w.closing {
		w.held = w.held[:0]
		return
	}
	start := w.evStart
	if w.sse.prevBlank >= 0 {
		// The comments before it, up to the blank line before it, stay,
		// as they do when a write ends between them and the event.
		start = max(start, w.base+w.sse.prevBlank)
	}
	w.drops = append(w.drops, dropRange{start, w.base + w.framerOffset()})
	w.events-- // counted below, never forwarded
}

// arrayEnd is called at a JSON array's closing bracket. Without a finish
// reason before it the stream was cut short, and the error must go inside
// the array, before the bracket.
func (w *PassWatcher) arrayEnd() {
	if w.state != passWatching {
		return
	}
	if w.watch.Complete() {
		w.state = passEnded
	} else {
		w.fail("upstream stream ended before the response was complete")
	}
}

func (w *PassWatcher) framerOffset() int {
	if w.sse != nil {
		return w.sse.off
	}
	return w.array.off
}

func (w *PassWatcher) fail(msg string) {
	w.state = passBroken
	w.failure = &translate.Error{Status: 502, Kind: translate.ErrAPI, Message: msg}
}

// Close ends the backend's body. It returns the bytes still to forward and
// the error the client stream must end with, nil when the stream ended
// properly. Bytes held at the end are an event that lacked its closing
// blank line, or a part of one: they are forwarded when they complete the
// stream, and dropped otherwise, as a client's own parser would drop them.
func (w *PassWatcher) Close() ([]byte, *translate.Error) {
	if w.state == passWatching {
		w.closing = true
		if err := w.framer.Close(w.emit); err != nil && w.state == passWatching {
			w.fail("malformed upstream stream: " + err.Error())
		}
		if w.state == passWatching {
			if !w.watch.Complete() {
				w.fail("upstream stream ended before the response was complete")
			} else {
				w.state = passEnded
			}
		}
	}
	held := w.held
	w.held = nil
	if w.state == passEnded {
		return held, nil
	}
	return nil, w.failure
}

// Failure returns the error that broke the stream (a malformed event), or
// nil.
func (w *PassWatcher) Failure() *translate.Error {
	if w.state != passBroken {
		return nil
	}
	return w.failure
}

// Done reports whether the client stream has ended: the terminal event was
// forwarded, or the stream broke and only its error event is still owed.
// A keep-alive is only in place while the stream is not done.
func (w *PassWatcher) Done() bool { return w.state != passWatching }

// Usage returns the latest token counts the stream reported.
func (w *PassWatcher) Usage() (translate.Usage, bool) { return w.watch.Usage() }

// Errored reports whether the stream ended with the backend's own error
// event, which was passed on to the client.
func (w *PassWatcher) Errored() bool { return w.watch.Errored() }

// End returns the bytes that end the client stream with err after what was
// forwarded: the protocol's error event, framed as the stream is. enc is a
// fresh stream encoder of the client's protocol; it is first set to
// continue the backend's stream (see translate.StreamWatch.Resume), so
// that it writes only the error, not a second start.
func (w *PassWatcher) End(enc translate.StreamEncoder, err *translate.Error) []byte {
	w.watch.Resume(enc)
	var out Output = &SSEOutput{}
	if w.array != nil {
		out = &JSONArrayOutput{n: w.events}
	}
	enc.Encode(out, &translate.Event{Type: translate.EventError, Err: err})
	EndOutput(out)
	return out.Bytes()
}

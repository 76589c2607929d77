package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// fallbackHold is the part of a responseWriter that keeps an attempt
// undecided while another backend of a fallback chain may still take over.
//
// Error statuses are held anyway (modeError and modePassError answer at
// finish); what needs holding here is a 2xx stream, which would otherwise
// commit its status at once. While held, the client bytes the stream
// produces — only its start events (message_start, response.created, a
// role-only chunk), since the first content event releases them — are kept
// in buf instead of being written, and no keep-alive goes out (the
// response is not committed). An error event, or the end of the stream,
// before the first content event makes the attempt a failed one, which the
// chain discards for the next backend.
type fallbackHold struct {
	// possible: a later backend may still take over this attempt.
	possible bool
	// active: a 2xx stream is held; nothing was committed to the client.
	active bool
	// content: a content event was seen; there is no going back.
	content bool
	// failure is the error event (or malformed stream) that came before
	// any content.
	failure *translate.Error
	buf     []byte
	// gate classifies a passthrough stream's events, which the
	// PassWatcher forwards without decoding; nil for translated streams,
	// whose events the transcoder's observer sees.
	gate *contentGate
}

// commitOrHold commits a stream's status, or holds it while a fallback is
// possible. rw.mu is held.
func (rw *responseWriter) commitOrHold(status int) {
	if rw.hold.possible && !rw.hold.content && rw.canHold() {
		rw.hold.active = true
		if rw.passthrough {
			rw.hold.gate = newContentGate(rw.backend.codec)
		}
		return
	}
	rw.commit(status)
}

// canHold reports whether the stream's start can be held: a translated
// stream, or a passthrough SSE stream. A passthrough JSON array (Gemini
// without alt=sse) has no gate and commits as before.
func (rw *responseWriter) canHold() bool {
	return rw.mode == modeStream || (rw.mode == modePassSSE && !rw.passArray)
}

// seeEvent classifies an IR event of the response while the attempt is
// undecided. rw.mu is held.
func (h *fallbackHold) seeEvent(ev *translate.Event) {
	if h.content || h.failure != nil {
		return
	}
	switch ev.Type {
	case translate.EventMessageStart, translate.EventUsage:
	case translate.EventError:
		h.failure = ev.Err
		if h.failure == nil {
			h.failure = translate.NewError(http.StatusBadGateway, "the backend's stream failed")
		}
	default:
		h.content = true
	}
}

// holdWrite handles the client bytes out of a held stream. in is the
// backend's chunk, for the gate of a passthrough stream; broken is the
// watcher's verdict on a malformed event. rw.mu is held.
func (rw *responseWriter) holdWrite(in, out []byte, broken *translate.Error) (int, error) {
	h := &rw.hold
	if h.failure != nil {
		return len(in), nil // the attempt has failed: the rest is dropped
	}
	if h.gate != nil && len(in) > 0 {
		h.gate.feed(in, h)
	}
	if broken != nil && !h.content {
		h.failure = broken
	}
	if h.failure != nil {
		h.buf = nil
		return len(in), nil
	}
	h.buf = append(h.buf, out...)
	if h.content {
		rw.contentSent() // the held start goes out with the first content
		if err := rw.release(); err != nil {
			return 0, err
		}
	}
	return len(in), nil
}

// release commits the held status and writes what was held: the stream
// goes on as an ordinary one. rw.mu is held.
func (rw *responseWriter) release() error {
	h := &rw.hold
	if !h.active {
		return nil
	}
	h.active, h.gate = false, nil
	rw.commit(rw.status)
	buf := h.buf
	h.buf = nil
	if len(buf) == 0 {
		return nil
	}
	_, err := rw.writeClient(buf)
	return err
}

// failedBeforeContent reports why the attempt failed with nothing sent to
// the client, in a way the next backend of a chain may do better: "" when
// it answered (or failed in a way another backend would repeat, such as a
// 400): nil when it answered (or failed in a way another backend would
// repeat, such as a 400). uerr is what the upstream handler returned.
func (rw *responseWriter) failedBeforeContent(uerr error) *attemptFailure {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.committed || rw.clientErr != nil {
		return nil
	}
	if rw.timeout != nil {
		return &attemptFailure{reason: rw.timeout.Message, kind: upstreamFirstByteTimeout, status: http.StatusGatewayTimeout}
	}
	switch rw.mode {
	case modeUnset:
		if uerr == nil {
			return &attemptFailure{reason: "the upstream handler wrote no response", kind: upstreamUnreachable, status: http.StatusBadGateway}
		}
		return &attemptFailure{reason: "unreachable: " + uerr.Error(), kind: upstreamUnreachable, status: http.StatusBadGateway}
	case modeError, modePassError:
		if retryableStatus(rw.status) {
			return &attemptFailure{reason: "status " + strconv.Itoa(rw.status), kind: statusKind(rw.status), status: rw.status}
		}
	case modeStream, modePassSSE, modeStreamToJSON:
		if rw.hold.failure != nil {
			return &attemptFailure{reason: "stream error before content: " + rw.hold.failure.Message, kind: upstreamStreamError, status: rw.status}
		}
		if !rw.hold.content && !rw.streamEnded() {
			return &attemptFailure{reason: "stream ended before content", kind: upstreamStreamError, status: rw.status}
		}
	}
	return nil
}

// streamEnded reports whether the backend's stream reached its terminal
// event. rw.mu is held.
func (rw *responseWriter) streamEnded() bool {
	switch rw.mode {
	case modeStream, modeStreamToJSON:
		return rw.tc.Done()
	case modePassSSE:
		return rw.pass.Done() && rw.pass.Failure() == nil
	}
	return true
}

// retryableStatus reports whether another backend may answer where this
// one answered status: rate limited (429), or failed on its side (5xx,
// Anthropic's 529 overloaded included).
func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || (status >= 500 && status <= 599)
}

// contentGate frames and decodes a passthrough stream's events while its
// attempt is undecided, to find its first content event. It costs a decode
// of the first few events of a stream, and only on routes with a fallback.
type contentGate struct {
	sse  stream.SSEParser
	dec  translate.StreamDecoder
	evs  []translate.Event
	hold *fallbackHold
	emit func(name string, data []byte)
}

func newContentGate(codec translate.Codec) *contentGate {
	g := &contentGate{dec: codec.NewStreamDecoder()}
	g.emit = g.event
	return g
}

// feed classifies the events completed by p.
func (g *contentGate) feed(p []byte, h *fallbackHold) {
	g.hold = h
	if err := g.sse.Feed(p, g.emit); err != nil && !h.content && h.failure == nil {
		h.failure = translate.NewError(http.StatusBadGateway, "malformed upstream stream: "+err.Error())
	}
}

func (g *contentGate) event(name string, data []byte) {
	if g.hold.content || g.hold.failure != nil {
		return
	}
	g.evs = g.dec.Decode(g.evs[:0], name, data)
	for i := range g.evs {
		g.hold.seeEvent(&g.evs[i])
	}
}

package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// fallbackGate watches an attempt that a later backend of its fallback
// chain may still take over: it is the stream gate (response_hold.go) that
// holds a 2xx stream's start until its first content event, and the
// observer that classifies the events before it. Only the stream's start
// events (message_start, response.created, a role-only chunk) are ever
// held, since the first content event releases them. An error event, or
// the end of the stream, before the first content event makes the attempt
// a failed one, which the chain discards for the next backend.
type fallbackGate struct {
	nopObserver
	// content: a content event was seen; there is no going back.
	content bool
	// failure is the error event (or malformed stream) that came before
	// any content.
	failure *translate.Error
	// pass classifies a passthrough stream's events while it is held: the
	// PassWatcher forwards them without decoding. nil for translated
	// streams, whose events onEvent sees.
	pass *contentGate
}

// gateFallback registers the fallback gate of an attempt a later backend
// may take over (canFallBack), and returns it; nil when there is none.
func gateFallback(rw *responseWriter, canFallBack bool) *fallbackGate {
	if !canFallBack {
		return nil
	}
	g := &fallbackGate{}
	rw.addObserver(g, hookEvent)
	rw.hold.gate = g
	return g
}

// holdStream holds a translated stream, or a passthrough SSE stream, until
// its first content. A passthrough JSON array (Gemini without alt=sse) has
// no gate and commits as before. rw.mu is held.
func (g *fallbackGate) holdStream(rw *responseWriter) bool {
	if g.content || !(rw.mode == modeStream || (rw.mode == modePassSSE && !rw.passArray)) {
		return false
	}
	if rw.passthrough {
		g.pass = newContentGate(rw.backend.codec)
	}
	return true
}

// onEvent classifies an IR event of the response while the attempt is
// undecided. rw.mu is held.
func (g *fallbackGate) onEvent(_ *responseWriter, ev *translate.Event) { g.seeEvent(ev) }

func (g *fallbackGate) seeEvent(ev *translate.Event) {
	if g.content || g.failure != nil {
		return
	}
	switch ev.Type {
	case translate.EventMessageStart, translate.EventUsage:
	case translate.EventError:
		g.failure = ev.Err
		if g.failure == nil {
			g.failure = translate.NewError(http.StatusBadGateway, "the backend's stream failed")
		}
	default:
		g.content = true
	}
}

// heldWrite judges a write of the held stream. rw.mu is held.
func (g *fallbackGate) heldWrite(_ *responseWriter, in []byte, broken *translate.Error) holdVerdict {
	if g.failure != nil {
		return holdFailed // the attempt has failed: the rest is dropped
	}
	if g.pass != nil && len(in) > 0 {
		g.pass.feed(in, g)
	}
	if broken != nil && !g.content {
		g.failure = broken
	}
	switch {
	case g.failure != nil:
		return holdFail
	case g.content:
		g.pass = nil
		return holdRelease
	}
	return holdOn
}

// failedBeforeContent reports why the attempt failed with nothing sent to
// the client, in a way the next backend of a chain may do better: nil when
// it answered (or failed in a way another backend would repeat, such as a
// 400). uerr is what the upstream handler returned.
func (g *fallbackGate) failedBeforeContent(rw *responseWriter, uerr error) *attemptFailure {
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
		if g.failure != nil {
			return &attemptFailure{reason: "stream error before content: " + g.failure.Message, kind: upstreamStreamError, status: rw.status}
		}
		if !g.content && !rw.streamEnded() {
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
	gate *fallbackGate
	emit func(name string, data []byte)
}

func newContentGate(codec translate.Codec) *contentGate {
	g := &contentGate{dec: codec.NewStreamDecoder()}
	g.emit = g.event
	return g
}

// feed classifies the events completed by p.
func (g *contentGate) feed(p []byte, fg *fallbackGate) {
	g.gate = fg
	if err := g.sse.Feed(p, g.emit); err != nil && !fg.content && fg.failure == nil {
		fg.failure = translate.NewError(http.StatusBadGateway, "malformed upstream stream: "+err.Error())
	}
}

func (g *contentGate) event(name string, data []byte) {
	if g.gate.content || g.gate.failure != nil {
		return
	}
	g.evs = g.dec.Decode(g.evs[:0], name, data)
	for i := range g.evs {
		g.gate.seeEvent(&g.evs[i])
	}
}

// Interface guards
var (
	_ attemptObserver = (*fallbackGate)(nil)
	_ streamGate      = (*fallbackGate)(nil)
)

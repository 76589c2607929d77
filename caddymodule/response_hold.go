package caddymodule

import "github.com/louter/louter/translate"

// A streamGate is an observer that may keep a 2xx stream's status and
// start from the client while it decides whether the attempt answers at
// all; the fallback gate (fallback_gate.go) holds while another backend may
// still take over. Error statuses need no holding (the writer answers them
// at finish); a 2xx stream would otherwise commit its status at once.
//
// While held, the client bytes the stream produces are kept instead of
// written, and no keep-alive goes out (nothing is committed). The gate is
// asked once, when the stream would commit, and then after each held
// write; both with rw.mu held.
type streamGate interface {
	// holdStream reports whether to hold the stream; rw.mode is decided.
	holdStream(rw *responseWriter) bool
	// heldWrite judges a write while held: in is the backend's chunk,
	// broken the passthrough watcher's verdict on a malformed event (nil
	// for a translated stream, whose events the gate sees through onEvent
	// before this call).
	heldWrite(rw *responseWriter, in []byte, broken *translate.Error) holdVerdict
}

// holdVerdict is what a streamGate makes of a held write.
type holdVerdict uint8

const (
	holdOn      holdVerdict = iota // keep holding, this write's output too
	holdRelease                    // commit, and write what was held and this write's output
	holdFail                       // the attempt failed: what was held and this write's output are dropped
	holdFailed                     // the attempt had failed before: this write's output is dropped
)

// heldStream is the writer's hold of a stream's start.
type heldStream struct {
	gate   streamGate // nil: nothing may hold this attempt's stream
	active bool       // the stream is held: nothing was committed to the client
	buf    []byte     // the client bytes held
}

// commitOrHold commits a stream's status, or holds it while its gate
// decides. rw.mu is held.
func (rw *responseWriter) commitOrHold(status int) {
	if rw.hold.gate != nil && rw.hold.gate.holdStream(rw) {
		rw.hold.active = true
		return
	}
	rw.commit(status)
}

// holdWrite handles the client bytes out of a held stream: in is the
// backend's chunk, out what the writer made of it, broken the passthrough
// watcher's verdict on a malformed event. rw.mu is held.
func (rw *responseWriter) holdWrite(in, out []byte, broken *translate.Error) (int, error) {
	h := &rw.hold
	switch h.gate.heldWrite(rw, in, broken) {
	case holdFailed:
	case holdFail:
		h.buf = nil
	case holdRelease:
		h.buf = append(h.buf, out...)
		rw.contentSent() // the held start goes out with the first content
		if err := rw.release(); err != nil {
			return 0, err
		}
	default:
		h.buf = append(h.buf, out...)
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
	h.active = false
	rw.commit(rw.status)
	buf := h.buf
	h.buf = nil
	if len(buf) == 0 {
		return nil
	}
	_, err := rw.writeClient(buf)
	return err
}

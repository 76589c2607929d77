package caddymodule

import "github.com/louter/louter/translate"

// A passthrough JSON response goes to the client byte for byte and is not
// parsed, so its usage is unknown unless something reads it. When a limit
// or the ledger needs it, the writer keeps the body's last passTailSize
// bytes (every protocol reports usage at the end) and reads the usage
// from them when the body ends: flat memory, whatever the body's size.

// passTailSize bounds the tail kept of a passthrough JSON body.
const passTailSize = 4 << 10

// passTail is the last bytes of a body.
type passTail struct{ buf []byte }

// write keeps the last passTailSize bytes of what was written so far.
func (t *passTail) write(p []byte) {
	if len(p) >= passTailSize {
		t.buf = append(t.buf[:0], p[len(p)-passTailSize:]...)
		return
	}
	if over := len(t.buf) + len(p) - passTailSize; over > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[over:])]
	}
	t.buf = append(t.buf, p...)
}

// passJSONUsage takes the usage of a passthrough JSON body from its tail;
// rw.mu is held.
func (rw *responseWriter) passJSONUsage() {
	if rw.tail == nil || rw.hasUsage || rw.status >= 300 {
		return
	}
	if u, ok := translate.UsageFromTail(rw.client.Protocol(), rw.tail.buf); ok {
		rw.usage, rw.hasUsage = u, true
	}
}

package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/translate"
)

// Defaults of the stream timers (see Louter's fields). A keep-alive every
// 15 s is well inside the idle limits of the usual proxies and load
// balancers (60 s and up) and costs nothing. Five minutes of complete
// silence mid-stream is far beyond any healthy backend (reasoning models
// stream their thinking, or at least keep-alives of their own), yet short
// enough not to hold a connection to a hung one for good. A first-byte
// limit is off by default: a non-streaming answer sends its headers only
// when the whole answer is ready, which can take many minutes.
const (
	defaultKeepaliveInterval = 15 * time.Second
	defaultStreamIdleTimeout = 5 * time.Minute
)

// streamTimers keeps one response alive and bounded while its backend is
// silent. One timer, re-armed for the nearest deadline, does three jobs:
//
//   - first byte: when the backend has not answered (no status yet) after
//     firstByte, the upstream request is cancelled and the client gets an
//     error status (nothing was committed yet);
//   - idle: when the backend has answered but sent nothing for idle, the
//     upstream request is cancelled and the response ends as a failed one
//     (an error event mid-stream);
//   - keep-alive: when the client has received nothing for interval while
//     its stream is open, the client protocol's keep-alive is written.
//
// The timer runs on its own goroutine while reverse_proxy writes from the
// handler's; both hold the response writer's mutex to write, and the
// writer only writes whole events, so a keep-alive never lands inside one.
// The timers learn of the backend's and the client's writes as an
// observer of the attempt (attempt_hooks.go).
type streamTimers struct {
	nopObserver
	rw        *responseWriter
	cancel    context.CancelCauseFunc
	keepalive []byte // nil: none for this client
	interval  time.Duration
	idle      time.Duration
	firstByte time.Duration
	timer     *time.Timer

	// start is when the timers were armed. The other instants are
	// offsets from it, read off the monotonic clock alone (time.Since):
	// they are taken on every write, and a full time.Now, which reads the
	// wall clock too, costs twice as much.
	start time.Time

	// Guarded by rw.mu.
	lastBackend time.Duration // the status or a body write arrived
	lastClient  time.Duration // bytes went to the client
	// now is the latest reading of the clock under rw.mu: that of the
	// backend write the writer is handling, or of the timer's firing. A
	// client write is stamped with it rather than with a reading of its
	// own: every client write that can be followed by a keep-alive
	// happens under the same hold of rw.mu as that reading (in Write,
	// after onBackendWrite; in fire), microseconds later; the others end
	// the response (finish, abort), after which no keep-alive is sent.
	now     time.Duration
	stopped bool
}

// elapsed reads the monotonic clock: the time since start.
func (t *streamTimers) elapsed() time.Duration { return time.Since(t.start) }

// startStreamTimers arms the timers of a response, or returns nil when
// all are off. It returns the request to hand to the upstream handler:
// r with a context the timers can cancel (the same request for Caddy: its
// context values stay).
func (l *Louter) startStreamTimers(rw *responseWriter, r *http.Request) (*http.Request, *streamTimers) {
	t := &streamTimers{
		rw:        rw,
		interval:  time.Duration(l.KeepaliveInterval),
		idle:      time.Duration(l.StreamIdleTimeout),
		firstByte: time.Duration(l.FirstByteTimeout),
		keepalive: rowOf(rw.client.Protocol()).keepalive, // protocols.go
	}
	if t.keepalive == nil || t.interval <= 0 {
		t.keepalive, t.interval = nil, 0
	}
	if t.idle <= 0 && t.firstByte <= 0 && t.interval <= 0 {
		return r, nil
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	t.cancel = cancel
	t.start = time.Now() // the offsets are 0
	rw.mu.Lock()
	rw.addObserver(t, hookBackendHeader|hookBackendWrite|hookClientWrite)
	d, _ := t.next(0) // before the status, one of the three applies
	t.timer = time.AfterFunc(d, t.fire)
	rw.mu.Unlock()
	return r.WithContext(ctx), t
}

// stop disarms the timers for good and releases the context. The response
// writer's mutex must not be held.
func (t *streamTimers) stop() {
	t.rw.mu.Lock()
	t.stopped = true
	t.rw.mu.Unlock()
	t.timer.Stop() // a fire already running sees stopped and does nothing
	t.cancel(nil)
}

// fire runs on the timer's goroutine.
func (t *streamTimers) fire() {
	rw := t.rw
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if t.stopped || rw.finished || rw.timeout != nil {
		return
	}
	now := t.elapsed()
	t.now = now // the keep-alive below is stamped with it
	if rw.awaitingFirstByte() && t.firstByte > 0 && now >= t.firstByte {
		t.expire(firstByteTimeoutError(t.firstByte))
		return
	}
	if rw.mode != modeUnset && t.idle > 0 && now-t.lastBackend >= t.idle {
		t.expire(idleTimeoutError(t.idle))
		return
	}
	if t.interval > 0 && now-t.lastClient >= t.interval && rw.keepaliveAllowed() {
		if _, err := rw.writeClient(t.keepalive); err == nil {
			_ = rw.flushLocked()
		}
	}
	if d, ok := t.next(now); ok {
		t.timer.Reset(d)
	}
}

// expire ends the upstream request: reverse_proxy sees its context end,
// and the response ends with err (see responseWriter.abort and
// ServeHTTP).
func (t *streamTimers) expire(err *translate.Error) {
	t.rw.timeout = err
	t.cancel(timeoutCause{err.Message})
}

// next returns how long until the nearest deadline, from now (an offset
// from start); ok is false when no deadline applies any more (only a
// first-byte limit was set, and the response began).
func (t *streamTimers) next(now time.Duration) (d time.Duration, ok bool) {
	var at time.Duration
	earliest := func(d time.Duration) {
		if !ok || d < at {
			at, ok = d, true
		}
	}
	if t.rw.awaitingFirstByte() && t.firstByte > 0 {
		earliest(t.firstByte)
	}
	if t.rw.mode != modeUnset && t.idle > 0 {
		earliest(t.lastBackend + t.idle)
	}
	if t.interval > 0 {
		// Before the response is committed this only polls: the
		// keep-alive is due interval after the last write to the client.
		earliest(t.lastClient + t.interval)
	}
	if !ok {
		return 0, false
	}
	return max(at-now, time.Millisecond), true
}

// awaitingFirstByte reports whether first_byte_timeout still applies: the
// backend has not answered, or its stream is held for a fallback and has
// sent no content yet (fallback_gate.go). rw.mu is held.
func (rw *responseWriter) awaitingFirstByte() bool {
	return rw.mode == modeUnset || rw.hold.active
}

// onBackendHeader and onBackendWrite note that the backend sent
// something; rw.mu is held.
func (t *streamTimers) onBackendHeader(*responseWriter, int)   { t.backendNow() }
func (t *streamTimers) onBackendWrite(*responseWriter, []byte) { t.backendNow() }

func (t *streamTimers) backendNow() {
	t.now = t.elapsed()
	t.lastBackend = t.now
}

// onClientWrite notes that the client is sent something, at the clock's
// latest reading (see now); rw.mu is held.
func (t *streamTimers) onClientWrite(*responseWriter) { t.lastClient = t.now }

// firstByteTimeoutError is the answer when the backend sent no response
// within first_byte_timeout. Nothing has reached the client yet, so this
// is the one place where a later attempt (another backend) could still
// take over.
func firstByteTimeoutError(d time.Duration) *translate.Error {
	return &translate.Error{Status: http.StatusGatewayTimeout, Kind: translate.ErrTimeout, Message: fmt.Sprintf("louter: the backend sent no response within %s (first_byte_timeout)", d)}
}

// idleTimeoutError ends a response whose backend went silent.
func idleTimeoutError(d time.Duration) *translate.Error {
	return &translate.Error{Status: http.StatusGatewayTimeout, Kind: translate.ErrTimeout, Message: fmt.Sprintf("louter: the backend sent nothing for %s (stream_idle_timeout)", d)}
}

// timeoutCause is the cause the upstream request's context is cancelled
// with. It is a timeout to net/http and reverse_proxy (which then count
// the backend's failure and report 504, not a client disconnect).
type timeoutCause struct{ msg string }

func (e timeoutCause) Error() string { return e.msg }
func (timeoutCause) Timeout() bool   { return true }
func (timeoutCause) Temporary() bool { return true }

// provisionStreamTimers applies the defaults: zero is the default, a
// negative duration is off.
func (l *Louter) provisionStreamTimers() {
	if l.KeepaliveInterval == 0 {
		l.KeepaliveInterval = caddy.Duration(defaultKeepaliveInterval)
	}
	if l.StreamIdleTimeout == 0 {
		l.StreamIdleTimeout = caddy.Duration(defaultStreamIdleTimeout)
	}
}

// unmarshalStreamTimer parses keepalive_interval, stream_idle_timeout or
// first_byte_timeout: a duration, or "off". The dispenser is on the name.
func unmarshalStreamTimer(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	name := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	if *dst != 0 {
		return d.Errf("%s already specified", name)
	}
	if v == "off" {
		*dst = -1
		return nil
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur <= 0 {
		return d.Errf("invalid %s %q: want a positive duration or off", name, v)
	}
	*dst = caddy.Duration(dur)
	return nil
}

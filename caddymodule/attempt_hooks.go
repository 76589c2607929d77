package caddymodule

import (
	"math/bits"
	"net/http"
	"time"

	"github.com/louter/louter/translate"
)

// attemptObserver is a gateway feature watching one backend attempt: the
// backend's status and body as reverse_proxy delivers them, the IR events
// and complete responses the writer decodes, the writes to the client, the
// first content, and the end. A feature registers its observer on the
// attempt's responseWriter (addObserver) instead of owning a field of the
// writer and a call site in it; the observer lives in the feature's file.
// Tracing (tracing.go), recording (record_capture.go), the stream timers
// (stream_timers.go), the fallback gate (fallback_gate.go), the release
// of the request's copies (request_release.go) and the usage page's feed
// (ops_feed.go) are observers.
//
// The hooks that run during the attempt are given the writer, whose state
// they may read under its mutex; the end is given the attempt's outcome
// instead (attemptOutcome, attempt_outcome.go), a plain value the writer
// fills once, so that what watches how an attempt ended reads no field of
// the writer and takes none of its locks.
//
// The contract:
//
//   - Registration. addObserver is called on the handler's goroutine
//     before the backend is asked; each attempt of a fallback chain has a
//     writer of its own and registers afresh. hooks says which methods
//     the writer calls; it never calls the others, which an observer gets
//     from an embedded nopObserver. Observers are called in the order they
//     were registered.
//   - Order. For one attempt: onBackendHeader at most once (a status
//     >= 200 that the writer takes: none after a timeout answered the
//     client); then for each chunk of the body onBackendWrite, the onEvent
//     calls of the events the chunk completes, and onClientWrite before
//     each write to the client (keep-alives and the answers written at
//     finish included); onFirstContent at most once, after the write that
//     first carried content to the client with the status committed, from
//     when no other backend can take over; onResponse once a complete
//     (JSON) response was decoded, at finish; onEnd exactly once, last.
//     onEvent sees the events of a translated response (or of a stream
//     answered as JSON); a passthrough stream is forwarded undecoded and
//     shows none. A JSON answer has no first content.
//   - Goroutines and locking. Every hook but onEnd runs with the writer's
//     mutex held, on the handler's goroutine; onClientWrite also runs on
//     the stream timers' goroutine, for a keep-alive. A hook may read the
//     writer's fields but must not call its locking methods (Write,
//     FlushError, finish...): they would deadlock. onEnd runs on the
//     handler's goroutine without the mutex, once the writer is done: the
//     upstream handler has returned or panicked, the timers are stopped,
//     and the response was finished, aborted, or left to the next backend.
//   - The outcome. Just before onEnd the writer fills the attempt's
//     outcome from its state, under its mutex, once: the backend's status,
//     what the writer made of the answer (Mode), whether the status was
//     committed to the client, the first content's time, the usage and
//     whether the backend reported it, the stop reason, the failure's kind,
//     the timeout that fired, whether the connection was cut or the client
//     has gone, passthrough and stream. Nothing changes it after, and the
//     handler reads the same value for the exchange record, the recording
//     and the client's limits once the request is over.
//   - Retention. p, ev and resp are valid only during the call (the writer
//     reuses their memory): an observer copies what it keeps. rw may be
//     kept for the attempt, but read only from the hooks that run during
//     it. out may be kept as long as the observer likes: it is never
//     written again.
//   - Abort and fallback. When the backend's connection fails mid-body,
//     the writer ends the response itself (an error event in the client's
//     protocol, or an error answer) and onEnd reports final true. An
//     attempt a fallback chain moves on from sent the client nothing: it
//     never got onFirstContent, and onEnd reports final false. An attempt
//     refused before the backend was asked (the client's limits) ends with
//     final true and out.Mode answerNone, for the observers registered by
//     then.
//
// Hooks are method calls on interfaces the writer holds, registered once
// per attempt: the streaming hot path allocates nothing for them, a hook
// calls only the observers registered for it, and a hook none registered
// for costs the test of a word.
type attemptObserver interface {
	onBackendHeader(rw *responseWriter, status int)
	onBackendWrite(rw *responseWriter, p []byte)
	onEvent(rw *responseWriter, ev *translate.Event)
	onResponse(rw *responseWriter, resp *translate.Response)
	onClientWrite(rw *responseWriter)
	onFirstContent(rw *responseWriter)
	onEnd(out *attemptOutcome, final bool)
}

// An attemptWatcher starts a feature's observers of an attempt: it is
// called on every attempt once the request for the backend is ready (r,
// with the backend's body, path and credential), before the backend is
// asked, and registers what it watches with rw.addObserver. An attempt the
// client's limits refuse never gets that far. louter's own features
// register from serveBackend's steps instead, because some must start
// earlier or wrap the request; a feature that only watches needs no more
// than a watcher in Louter.watchers.
type attemptWatcher func(r *http.Request, rw *responseWriter)

// watchAttempt starts the watchers' observers of attempt rw.
func (l *Louter) watchAttempt(r *http.Request, rw *responseWriter) {
	for _, watch := range l.watchers {
		watch(r, rw)
	}
}

// attemptHooks is a set of attemptObserver methods, one bit each.
type attemptHooks uint8

// The hooks, by index.
const (
	iBackendHeader = iota
	iBackendWrite
	iEvent
	iResponse
	iClientWrite
	iFirstContent
	iEnd
	numHooks
)

const (
	hookBackendHeader attemptHooks = 1 << iBackendHeader
	hookBackendWrite  attemptHooks = 1 << iBackendWrite
	hookEvent         attemptHooks = 1 << iEvent
	hookResponse      attemptHooks = 1 << iResponse
	hookClientWrite   attemptHooks = 1 << iClientWrite
	hookFirstContent  attemptHooks = 1 << iFirstContent
	hookEnd           attemptHooks = 1 << iEnd
)

// nopObserver implements every hook as a no-op. An observer embeds it and
// defines the hooks it registers for.
type nopObserver struct{}

func (nopObserver) onBackendHeader(*responseWriter, int)            {}
func (nopObserver) onBackendWrite(*responseWriter, []byte)          {}
func (nopObserver) onEvent(*responseWriter, *translate.Event)       {}
func (nopObserver) onResponse(*responseWriter, *translate.Response) {}
func (nopObserver) onClientWrite(*responseWriter)                   {}
func (nopObserver) onFirstContent(*responseWriter)                  {}
func (nopObserver) onEnd(*attemptOutcome, bool)                     {}

// attemptObservers are the observers of one attempt, in the order they
// were registered. The first five (as many as louter's own features
// register at most) are kept in the writer itself, so registering them
// allocates nothing.
type attemptObservers struct {
	list   []attemptObserver
	inline [5]attemptObserver
	// of[i] has bit n set when list[n] registered for hook i: a hook calls
	// only its own observers, and one no observer registered for costs a
	// test of a word.
	of [numHooks]uint32
	// contentSeen: onFirstContent was called.
	contentSeen bool
}

// maxObservers bounds the observers of an attempt, one bit each in of.
const maxObservers = 32

// addObserver registers o for the hooks of this attempt; see attemptObserver.
func (rw *responseWriter) addObserver(o attemptObserver, hooks attemptHooks) {
	obs := &rw.obs
	n := len(obs.list)
	if n == maxObservers {
		panic("louter: more than 32 observers of one attempt")
	}
	if obs.list == nil {
		obs.list = obs.inline[:0]
	}
	obs.list = append(obs.list, o)
	for i := range numHooks {
		if hooks&(1<<i) != 0 {
			obs.of[i] |= 1 << n
		}
	}
}

// The writer's calls of the hooks. Each is inlined to a test of its
// observers' bits. The two that come with every write, onBackendWrite and
// onClientWrite, are written out where the writer makes them (Write,
// writeClient): the stream timers are on by default, and a call less per
// write is worth the repetition.

func (rw *responseWriter) hookBackendHeader(status int) {
	if rw.obs.of[iBackendHeader] != 0 {
		rw.obs.backendHeader(rw, status)
	}
}

func (rw *responseWriter) hookEvent(ev *translate.Event) {
	if rw.obs.of[iEvent] != 0 {
		rw.obs.event(rw, ev)
	}
}

func (rw *responseWriter) hookResponse(resp *translate.Response) {
	if rw.obs.of[iResponse] != 0 {
		rw.obs.response(rw, resp)
	}
}

// hookFirstContent calls onFirstContent once the first content has gone
// to the client with the status committed; the writer calls it after each
// write and at finish. rw.mu is held.
func (rw *responseWriter) hookFirstContent() {
	if rw.obs.of[iFirstContent] != 0 && !rw.obs.contentSeen {
		rw.obs.firstContent(rw)
	}
}

// hookEnd fills the attempt's outcome and calls onEnd; final says whether
// the attempt answered the client (see attemptObserver). rw.mu is not
// held. The outcome is filled whether or not an observer is registered:
// the handler reads it at the request's end.
func (rw *responseWriter) hookEnd(final bool) {
	out := rw.outcome()
	if rw.obs.of[iEnd] != 0 {
		rw.obs.end(out, final)
	}
}

// The loops over the observers are kept out of line, so the writer's
// calls above inline to their test.

//go:noinline
func (o *attemptObservers) backendHeader(rw *responseWriter, status int) {
	for m := o.of[iBackendHeader]; m != 0; m &= m - 1 {
		o.list[bits.TrailingZeros32(m)].onBackendHeader(rw, status)
	}
}

//go:noinline
func (o *attemptObservers) event(rw *responseWriter, ev *translate.Event) {
	for m := o.of[iEvent]; m != 0; m &= m - 1 {
		o.list[bits.TrailingZeros32(m)].onEvent(rw, ev)
	}
}

//go:noinline
func (o *attemptObservers) response(rw *responseWriter, resp *translate.Response) {
	for m := o.of[iResponse]; m != 0; m &= m - 1 {
		o.list[bits.TrailingZeros32(m)].onResponse(rw, resp)
	}
}

//go:noinline
func (o *attemptObservers) firstContent(rw *responseWriter) {
	if !rw.committed || rw.firstContent.IsZero() {
		return
	}
	o.contentSeen = true
	for m := o.of[iFirstContent]; m != 0; m &= m - 1 {
		o.list[bits.TrailingZeros32(m)].onFirstContent(rw)
	}
}

//go:noinline
func (o *attemptObservers) end(out *attemptOutcome, final bool) {
	for m := o.of[iEnd]; m != 0; m &= m - 1 {
		o.list[bits.TrailingZeros32(m)].onEnd(out, final)
	}
}

// contentSent notes when the first content goes to the client (the
// exchange record's and the trace's time to first token); rw.mu is held.
// After the first, an event costs one test of a time.
func (rw *responseWriter) contentSent() {
	if rw.firstContent.IsZero() {
		rw.firstContent = time.Now()
	}
}

package caddymodule

import (
	"io"
	"maps"
	"math/bits"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// Limits on what the writer buffers. An error body is only read for its
// message, so the rest of a huge one is ignored; a complete JSON response
// larger than maxJSONBody is refused rather than held in memory.
const (
	maxErrorBody = 1 << 20
	maxJSONBody  = 64 << 20
)

// writeMode is how the writer handles the upstream response. It is decided
// once, when the upstream handler writes the status.
type writeMode uint8

const (
	modeUnset        writeMode = iota
	modePass                   // same protocol: bytes and flushes straight through
	modePassSSE                // same protocol, a 2xx stream: straight through event by event, watched so a cut or broken stream ends with an error event
	modePassError              // same protocol, status >= 400: held, passed on at finish (passthrough_error.go)
	modeError                  // status >= 300: buffered, translated at finish
	modeStream                 // 2xx stream for a stream client: transcoded write by write
	modeJSON                   // 2xx JSON for a JSON client: buffered, translated at finish
	modeJSONToStream           // 2xx JSON for a stream client: buffered, streamed at finish in one go
	modeStreamToJSON           // 2xx stream for a JSON client: accumulated, answered at finish
)

// responseWriter stands between the backend's upstream handler (a stock
// reverse_proxy) and the client. reverse_proxy copies the upstream headers
// into Header(), calls WriteHeader, then Write for every chunk it reads
// (up to 32 KiB, with no regard for event boundaries) and flushes after each
// write of a stream. The writer translates as it goes: a stream write by
// write, a JSON answer or an error at the end (finish).
//
// Headers the upstream handler sets go to a private copy of the client's
// header map, copied over only when the response is committed: an attempt
// that is not committed (a failed dial, a retried response) leaves nothing
// behind, and translated responses drop the upstream's entity headers.
type responseWriter struct {
	caddyhttp.ResponseWriterWrapper // by value: one allocation fewer per attempt
	header                          http.Header

	client      translate.Codec
	backend     *Backend
	clientReq   *translate.Request // the client's request, with the client's model name
	passthrough bool
	wantStream  bool
	logger      *zap.Logger

	mode      writeMode
	status    int
	committed bool  // the status was written to the client
	clientErr error // the first error writing to the client: it has gone
	finished  bool

	buf      []byte // modeError, modeJSON, modeJSONToStream
	limit    int
	overflow bool

	tc  *stream.Transcoder // modeStream; an observer in modeStreamToJSON
	out stream.Output      // the client bytes tc produced: SSE (&sse), or a JSON array for Gemini clients without alt=sse
	sse stream.SSEOutput   // out's usual value, held here rather than allocated apart
	acc *translate.Accumulator
	// jsonArray is set when out frames a streamed JSON array, which is
	// served as application/json rather than text/event-stream.
	jsonArray bool

	usage    translate.Usage
	hasUsage bool
	// count counts the output of a response whose usage counts, for the
	// estimate when the backend reports none; hideUsage says louter asked
	// a passthrough stream for usage the client did not ask for, which
	// the client does not get (usage_settle.go).
	count     outputCount
	hideUsage bool

	// What the attempt's outcome (attempt_outcome.go) is filled from at
	// its end: when the first content went to a streaming client, the stop
	// reason, whether the backend's answer was undecodable or its stream
	// failed, and whether its connection failed mid-response (abort).
	firstContent time.Time
	stop         translate.StopReason
	badResponse  bool
	streamFailed bool
	cut          bool
	passCopy     passUsageCopy // a passthrough JSON answer, for its usage (pass_usage.go)

	// pass watches a passthrough stream (modePassSSE); passArray says the
	// client asked Gemini for a stream as a JSON array, which is watched
	// too; passEnded is set once the error event that ends a broken
	// passthrough stream was written.
	pass      *stream.PassWatcher
	passArray bool
	passEnded bool

	// mu serializes the writes to the client: reverse_proxy writes from
	// the handler's goroutine, the stream timers (stream_timers.go) from
	// theirs. timeout is the timeout that fired, which ends the response.
	mu      sync.Mutex
	timeout *translate.Error

	// hold keeps a stream's start from the client while a gate decides
	// whether the attempt answers (response_hold.go).
	hold heldStream

	// obs are the gateway features watching the attempt (attempt_hooks.go);
	// result is the outcome they are given at its end, held here so that
	// filling it allocates nothing.
	obs    attemptObservers
	result attemptOutcome

	flusher httpx.Flusher // the client writer's flush (internal/httpx)
}

func newResponseWriter(w http.ResponseWriter) *responseWriter {
	h := w.Header().Clone()
	if h == nil {
		h = make(http.Header)
	}
	rw := &responseWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, header: h, flusher: httpx.NewFlusher(w)}
	rw.out = &rw.sse
	return rw
}

// Header returns the private header map the upstream handler fills.
func (rw *responseWriter) Header() http.Header { return rw.header }

// WriteHeader decides how the response is handled. Informational (1xx)
// responses are not forwarded: LLM APIs do not send them, and a translated
// client could not use them.
func (rw *responseWriter) WriteHeader(status int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.writeHeader(status)
}

func (rw *responseWriter) writeHeader(status int) {
	if status < 200 || rw.mode != modeUnset || rw.timeout != nil {
		return // a timeout answers the client itself (ServeHTTP)
	}
	rw.hookBackendHeader(status)
	rw.status = status
	sse := status < 300 && isEventStream(rw.header.Get("Content-Type"))

	if rw.passthrough {
		if status >= 400 {
			rw.mode = modePassError
			return
		}
		// Gemini streams as a JSON array when the client did not ask for
		// SSE (alt=sse); that stream is watched as well.
		array := rw.passArray && status < 300 && !sse && rw.wantStream
		if sse || array {
			rw.mode = modePassSSE
			rw.pass = stream.NewPassWatcher(rw.client.Protocol(), array)
			if rw.hideUsage {
				rw.pass.HideUsageOnly()
			}
			if rw.count.on {
				rw.pass.Observe = rw.countPassEvent
			}
			setNoBuffering(rw.header)
			// The watcher may end the body with an error event of its
			// own, which a declared length would not allow.
			rw.header.Del("Content-Length")
			rw.commitOrHold(status)
			return
		}
		rw.mode = modePass
		rw.startPassUsage(status) // pass_usage.go
		rw.commit(status)
		return
	}

	switch {
	case status >= 300:
		rw.mode, rw.limit = modeError, maxErrorBody
	case sse && rw.wantStream:
		rw.mode = modeStream
		rw.tc = rw.translation().NewStreamTranscoder(rw.out)
		rw.tc.Observe = rw.observe
		stripEntityHeaders(rw.header)
		rw.setClientStreamHeaders()
		rw.commitOrHold(status)
	case sse:
		rw.mode = modeStreamToJSON
		rw.acc = new(translate.Accumulator)
		rw.tc = rw.translation().NewEventTranscoder(rw.out)
		rw.tc.Observe = rw.observe
	case rw.wantStream:
		rw.mode, rw.limit = modeJSONToStream, maxJSONBody
	default:
		rw.mode, rw.limit = modeJSON, maxJSONBody
	}
}

// Write consumes a chunk of the upstream body. It fails only when writing to
// the client failed: a translation problem becomes an error in the client's
// protocol, never a write error, because reverse_proxy answers a write
// error by aborting the connection.
func (rw *responseWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for m := rw.obs.of[iBackendWrite]; m != 0; m &= m - 1 { // onBackendWrite (attempt_hooks.go)
		rw.obs.list[bits.TrailingZeros32(m)].onBackendWrite(rw, p)
	}
	n, err := rw.write(p)
	rw.hookFirstContent()
	return n, err
}

// write is Write with rw.mu held and the observers told. It is apart so
// that Write's one defer is open-coded: with write's many returns, each
// of its defers would cost a trip through the runtime on every write of
// a stream.
func (rw *responseWriter) write(p []byte) (int, error) {
	if rw.mode == modeUnset {
		rw.writeHeader(http.StatusOK)
	}
	if rw.clientErr != nil {
		return 0, rw.clientErr
	}
	switch rw.mode {
	case modeUnset:
		return len(p), nil // a timeout fired; the client is answered apart
	case modePass:
		rw.copyPassUsage(p)
		return rw.writeClient(p)
	case modePassSSE:
		// The bytes pass as they are, but whole events at a time: the
		// rest of a write waits for the next one.
		n, err := rw.writePass(p, rw.pass.Write(p))
		rw.pass.Release() // out is written or copied by then: a waiting stream holds no buffer
		return n, err
	case modePassError:
		return rw.bufferPassError(p)
	case modeStream:
		out := rw.tc.Write(p)
		n, err := len(p), error(nil)
		if rw.hold.active {
			n, err = rw.holdWrite(p, out, nil)
		} else if len(out) > 0 {
			if _, err = rw.writeClient(out); err != nil {
				n = 0
			}
		}
		stream.ReleaseOutput(rw.out) // as rw.pass above (stream/output_pool.go)
		return n, err
	case modeStreamToJSON:
		rw.tc.Write(p)
	default:
		rw.bufferBody(p)
	}
	return len(p), nil
}

// writePass writes out, the whole events of a passthrough stream that p
// completed.
func (rw *responseWriter) writePass(p, out []byte) (int, error) {
	if rw.hold.active {
		return rw.holdWrite(p, out, rw.pass.Failure())
	}
	if len(out) > 0 {
		rw.contentSent()
		if _, err := rw.writeClient(out); err != nil {
			return 0, err
		}
	}
	if e := rw.pass.Failure(); e != nil {
		rw.endPass(e) // a malformed event: the client stream ends here
	}
	return len(p), nil
}

// ReadFrom sends what it reads through Write; the promoted
// ResponseWriterWrapper.ReadFrom would hand it to the client untranslated.
func (rw *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{rw}, r)
}

// FlushError flushes the client connection while the response streams to
// it. In the buffering modes a flush would commit a status and headers the
// translation has not decided yet, so it does nothing, as Caddy's response
// recorder does while buffering.
func (rw *responseWriter) FlushError() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.flushLocked()
}

func (rw *responseWriter) flushLocked() error {
	if !rw.committed || !rw.streaming() {
		return nil
	}
	return rw.flusher.Flush()
}

// Flush implements http.Flusher for code that asserts it.
func (rw *responseWriter) Flush() { _ = rw.FlushError() }

// streaming reports whether the client receives the response as it arrives.
func (rw *responseWriter) streaming() bool {
	return rw.mode == modePass || rw.mode == modePassSSE || rw.mode == modeStream
}

func (rw *responseWriter) writeClient(p []byte) (int, error) {
	for m := rw.obs.of[iClientWrite]; m != 0; m &= m - 1 { // onClientWrite (attempt_hooks.go)
		rw.obs.list[bits.TrailingZeros32(m)].onClientWrite(rw)
	}
	n, err := rw.ResponseWriter.Write(p)
	if err != nil && rw.clientErr == nil {
		rw.clientErr = err
	}
	return n, err
}

func (rw *responseWriter) bufferBody(p []byte) {
	if room := rw.limit - len(rw.buf); len(p) > room {
		p = p[:max(room, 0)]
		rw.overflow = true
	}
	rw.buf = append(rw.buf, p...)
}

// commit writes the status and the headers to the client.
func (rw *responseWriter) commit(status int) {
	dst := rw.ResponseWriter.Header()
	clear(dst)
	maps.Copy(dst, rw.header)
	rw.ResponseWriter.WriteHeader(status)
	rw.committed = true
}

func (rw *responseWriter) observe(ev *translate.Event) {
	if ev.Usage != nil {
		rw.usage, rw.hasUsage = *ev.Usage, true
	}
	if rw.count.on {
		rw.count.event(ev)
	}
	switch {
	case ev.Type == translate.EventBlockStart || ev.Type == translate.EventBlockDelta:
		if rw.mode == modeStream {
			rw.contentSent() // the encoder's output for it is written right after
		}
	case ev.Stop != "":
		rw.stop = ev.Stop
	case ev.Type == translate.EventError:
		rw.streamFailed = true
	}
	if rw.acc != nil {
		rw.acc.Add(ev)
	}
	rw.hookEvent(ev)
}

// finish completes the response once the upstream handler has returned:
// it writes what the mode still owes — the end of a stream (an error event
// if the upstream stream was cut), or the translated answer.
func (rw *responseWriter) finish() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.finishLocked()
	rw.hookFirstContent() // an answer streamed at finish (respondStream)
	// Everything was written: the client framing's buffer goes back to
	// the pool for the next stream.
	stream.ReleaseOutput(rw.out)
}

func (rw *responseWriter) finishLocked() {
	if rw.finished {
		return
	}
	rw.finished = true
	_ = rw.release() // a held stream that is not left for another backend goes on
	switch rw.mode {
	case modePass:
		rw.readPassUsage()
		rw.copyTrailers()
	case modePassSSE:
		tail, e := rw.pass.Close()
		if len(tail) > 0 && rw.clientErr == nil {
			rw.writeEnd(tail)
		}
		if e != nil {
			if rw.timeout != nil {
				e = rw.timeout // the body ended because a timeout cut it
			}
			rw.endPass(e) // the backend closed the stream before its end
		}
		rw.passUsage()
		rw.copyTrailers()
	case modePassError:
		rw.finishPassError()
	case modeStream:
		var tail []byte
		if rw.timeout != nil {
			tail = rw.tc.Fail(rw.timeout) // the body ended because a timeout cut it
		} else {
			tail = rw.tc.Close()
		}
		if len(tail) > 0 && rw.clientErr == nil {
			if _, err := rw.writeClient(tail); err == nil {
				_ = rw.flushLocked()
			}
		}
	case modeStreamToJSON:
		rw.tc.Close()
		resp, e := rw.acc.Result()
		if e != nil {
			rw.respondError(e)
			return
		}
		rw.respondResponse(resp)
	case modeJSON, modeJSONToStream:
		if rw.overflow {
			rw.respondError(translate.NewError(http.StatusBadGateway, "louter: the backend's response exceeds "+strconv.Itoa(maxJSONBody>>20)+" MiB"))
			return
		}
		resp, err := rw.translation().DecodeResponse(rw.buf)
		if err != nil {
			// The error may quote the body, which may echo the key.
			rw.badResponse = true
			rw.logger.Warn("cannot decode the backend's response", zap.String("backend", rw.backend.name), zap.Int("status", rw.status), zap.String("error", redact.ScrubString(err.Error(), []string{rw.backend.apiKey})))
			rw.respondError(stream.BadResponse(err))
			return
		}
		rw.usage, rw.hasUsage, rw.stop = resp.Usage, true, resp.StopReason
		rw.count.response(resp)
		rw.hookResponse(resp)
		if rw.mode == modeJSONToStream {
			rw.respondStream(resp)
			return
		}
		rw.respondResponse(resp)
	case modeError:
		e := rw.translation().DecodeError(rw.status, rw.buf)
		if rw.status < 400 {
			rw.header.Del("Location") // the client gets a 502 (stream.Translation.DecodeError), not a redirect
		}
		rw.respondError(e)
	}
}

// abort ends the response after the upstream handler aborted because
// reading from the backend failed. It reports whether the client got a
// proper end: an error event in its protocol ending a stream, or an error
// response when nothing had been sent yet. A passthrough JSON body already
// on its way cannot be ended well; then it reports false.
func (rw *responseWriter) abort() bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.finished || rw.clientErr != nil {
		return false
	}
	_ = rw.release()
	midStream := &translate.Error{Status: http.StatusBadGateway, Kind: translate.ErrAPI, Message: "upstream connection failed mid-stream"}
	incomplete := &translate.Error{Status: http.StatusBadGateway, Kind: translate.ErrAPI, Message: "upstream connection failed before the response was complete"}
	if rw.timeout != nil {
		midStream, incomplete = rw.timeout, rw.timeout // stream_idle_timeout cut the connection
	}
	switch rw.mode {
	case modeStream:
		rw.finished = true
		rw.writeEnd(rw.tc.Fail(midStream))
	case modePassSSE:
		rw.finished = true
		// A stream that already ended (the connection failed after the
		// last event, or its error event was written) needs nothing more.
		if !rw.pass.Done() {
			rw.endPass(midStream)
		}
		rw.passUsage()
	case modeStreamToJSON:
		rw.tc.Fail(midStream) // the accumulator ends with it
		rw.finishLocked()
	case modeError, modePassError:
		rw.finishLocked() // the status and what arrived of the message are still worth passing on
	case modeJSON, modeJSONToStream:
		rw.finished = true
		rw.respondError(incomplete)
	default:
		return false
	}
	rw.cut = true
	return true
}

func (rw *responseWriter) writeEnd(p []byte) {
	if len(p) == 0 {
		return
	}
	if _, err := rw.writeClient(p); err == nil {
		_ = rw.flushLocked()
	}
}

// endPass ends a passthrough stream with e, once: the client protocol's
// error event, after the last whole event forwarded.
func (rw *responseWriter) endPass(e *translate.Error) {
	if rw.passEnded || rw.clientErr != nil {
		return
	}
	rw.passEnded = true
	rw.streamFailed = true
	rw.logger.Warn("the backend's stream ended badly", zap.String("backend", rw.backend.name), zap.String("error", e.Message))
	rw.writeEnd(rw.pass.End(rw.client.NewStreamEncoder(rw.clientReq), e))
}

// passUsage takes the usage a passthrough stream reported, and whether it
// ended with the backend's error.
func (rw *responseWriter) passUsage() {
	if u, ok := rw.pass.Usage(); ok {
		rw.usage, rw.hasUsage = u, true
	}
	if rw.pass.Errored() {
		rw.streamFailed = true
	}
}

// keepaliveAllowed reports whether a keep-alive may be written now: the
// client's stream is open and, since the writer only ever writes whole
// events, at an event boundary. rw.mu is held.
func (rw *responseWriter) keepaliveAllowed() bool {
	if !rw.committed || rw.finished || rw.clientErr != nil || rw.jsonArray {
		return false
	}
	switch rw.mode {
	case modeStream:
		return !rw.tc.Done()
	case modePassSSE:
		return !rw.passArray && !rw.pass.Done()
	}
	return false
}

// timedOut returns the timeout that ended the response, if one did.
func (rw *responseWriter) timedOut() *translate.Error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.timeout
}

// discardEncoder is the stream encoder of an observing transcoder: the IR
// events are only looked at (through Observe), never encoded.
type discardEncoder struct{}

func (discardEncoder) Encode(translate.FrameWriter, *translate.Event) {}

// writerOnly hides every method of a writer but Write, so io.Copy cannot
// take a shortcut around it.
type writerOnly struct{ io.Writer }

// Interface guards
var (
	_ http.ResponseWriter                       = (*responseWriter)(nil)
	_ http.Flusher                              = (*responseWriter)(nil)
	_ io.ReaderFrom                             = (*responseWriter)(nil)
	_ interface{ FlushError() error }           = (*responseWriter)(nil)
	_ interface{ Unwrap() http.ResponseWriter } = (*responseWriter)(nil)
	_ translate.StreamEncoder                   = discardEncoder{}
)

package caddymodule

import (
	"time"

	"github.com/louter/louter/translate"
)

// attemptOutcome is how one backend attempt ended, as its writer saw it:
// the value every observer's onEnd receives, and what the exchange record
// (exchange_record.go), the recording and the client's limits
// (client_limits.go) read once the request is over. The writer fills it
// once, under its mutex, when the attempt ends (see attemptObserver), and
// never changes it after: an observer reads the outcome and no field of the
// writer, and may keep the pointer as long as it likes.
//
// Its fields are exported for the day it moves below caddymodule (as the
// ground floor's Outcome); nothing outside the package sees it yet.
type attemptOutcome struct {
	// Backend is the configured name of the backend asked; Model is the
	// model the client asked for. They describe the attempt rather than
	// its end, and are here so that an observer needs nothing else.
	Backend string
	Model   string

	// Mode is what the writer did with the backend's answer.
	Mode answerMode
	// Status is the status the backend answered with; 0 when it sent none.
	Status int
	// Committed: the writer wrote a status to the client.
	Committed bool
	// Passthrough: the backend speaks the client's protocol and its body
	// was forwarded rather than translated.
	Passthrough bool
	// Stream: the client asked for a stream.
	Stream bool
	// FirstContent is when the first content went to a streaming client;
	// zero when none did. A JSON answer has none.
	FirstContent time.Time

	// Usage is the usage the backend reported; HasUsage whether it
	// reported any (a zero Usage may be a report of nothing).
	Usage    translate.Usage
	HasUsage bool
	// CountedOutput is the output, in tokens, the writer counted as it
	// went, for the estimate when the backend reports no usage
	// (usage_settle.go); 0 when the attempt's usage does not count.
	CountedOutput int64
	// Stop is the response's stop reason; empty when none was seen.
	Stop translate.StopReason

	// Failure is louter_upstream_errors_total's kind of the backend's
	// failure: its error status, an idle timeout, a cut connection, an
	// undecodable answer, a broken stream; empty when the backend answered
	// well. What only the handler knows (the backend could not be reached,
	// the first byte never came) the exchange record adds itself.
	Failure string
	// Timeout is the stream timer that fired (its error ended the
	// response), nil when none did.
	Timeout *translate.Error
	// StreamFailed: the stream ended with an error event, or early.
	// BadResponse: the backend's complete answer could not be decoded.
	// Cut: the backend's connection failed mid-response and the writer
	// ended the response itself, with an error in the client's protocol.
	StreamFailed bool
	BadResponse  bool
	Cut          bool
	// ClientGone: a write to the client failed; it has gone away.
	ClientGone bool
}

// answerMode is what the writer did with the backend's answer: the part of
// its writeMode an observer may need, not how the writer got there.
type answerMode uint8

const (
	// answerNone: the writer took no status. The backend was not asked
	// (the client's limits refused), could not be reached, wrote nothing,
	// or sent nothing before first_byte_timeout.
	answerNone answerMode = iota
	// answerError: an error status, translated into the client's
	// protocol or, from a backend of its own protocol, passed on.
	answerError
	// answerJSON: a complete answer; translated, accumulated from the
	// backend's stream, or forwarded as it came from a backend of the
	// client's protocol.
	answerJSON
	// answerStream: a stream to the client; transcoded, forwarded event by
	// event, or a JSON answer streamed at its end.
	answerStream
)

// answerModes maps the writer's modes to what an observer may see of them.
var answerModes = [...]answerMode{
	modeUnset:        answerNone,
	modePass:         answerJSON,
	modePassSSE:      answerStream,
	modePassError:    answerError,
	modeError:        answerError,
	modeStream:       answerStream,
	modeJSON:         answerJSON,
	modeJSONToStream: answerStream,
	modeStreamToJSON: answerJSON,
}

// outcome fills the attempt's outcome from the writer's state and returns
// it. The writer calls it once, when the attempt ends (hookEnd), after the
// upstream handler returned and the response was finished, aborted or
// left to the next backend; nothing writes the writer's state after that.
// It takes rw.mu, so it must not be called with it held.
func (rw *responseWriter) outcome() *attemptOutcome {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	o := &rw.result
	*o = attemptOutcome{
		Mode: answerModes[rw.mode], Status: rw.status, Committed: rw.committed,
		Passthrough: rw.passthrough, Stream: rw.wantStream, FirstContent: rw.firstContent,
		Usage: rw.usage, HasUsage: rw.hasUsage, CountedOutput: rw.count.tokens, Stop: rw.stop,
		Failure: rw.failureKind(), Timeout: rw.timeout,
		StreamFailed: rw.streamFailed, BadResponse: rw.badResponse, Cut: rw.cut,
		ClientGone: rw.clientErr != nil,
	}
	if rw.backend != nil {
		o.Backend = rw.backend.name
	}
	if rw.clientReq != nil {
		o.Model = rw.clientReq.Model
	}
	return o
}

// failureKind is the upstream error kind of the attempt as the writer saw
// it: the backend's error status, a timeout, a cut connection, an
// undecodable answer, or a broken stream; empty when the backend answered
// well. rw.mu is held.
func (rw *responseWriter) failureKind() string {
	switch {
	case rw.mode == modeError || rw.mode == modePassError:
		return statusKind(rw.status)
	case rw.timeout != nil && rw.mode == modeUnset:
		return upstreamFirstByteTimeout // the status never came
	case rw.timeout != nil:
		return upstreamIdleTimeout
	case rw.cut:
		return upstreamStreamCut
	case rw.badResponse:
		return upstreamBadResponse
	case rw.streamFailed:
		return upstreamStreamError
	}
	return ""
}

// outcome is how the attempt that answered the request ended; nil when no
// backend was asked (the request was refused or answered by louter).
func (q *chatRequest) outcome() *attemptOutcome {
	if q.rw == nil {
		return nil
	}
	return &q.rw.result
}

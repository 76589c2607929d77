package caddymodule

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/louter/louter/translate"
)

// The canned feature exists only in tests: an answerer and an observer
// registered here and nowhere else, so that integration_answerer_test.go
// can prove the answerer seam (answerer.go) through a real Caddy. If
// serving it needs an edit of a production file, the seam is missing
// something.
//
//   - "canned" answers a request whose last user text contains
//     CannedMarker with CannedText, and passes every other one.
//   - "guard" refuses a request whose last user text contains
//     RefuseMarker with a 400 naming the messages.
//   - The observer notes each attempt an answerer served (AnsweredAttempts).

// The markers and the canned answer, for the integration tests.
const (
	CannedMarker = "[answer:canned]"
	RefuseMarker = "[answer:refuse]"
	CannedText   = "a canned answer, no backend asked"
	GuardMessage = "guard: this request is refused"
)

func init() {
	registerAnswerer("canned", func(*Louter) answerer { return cannedAnswerer{} })
	registerAnswerer("guard", func(*Louter) answerer { return guardAnswerer{} })
	registerWatcher(func(*Louter) attemptWatcher { return watchAnswered })
}

type cannedAnswerer struct{}

func (cannedAnswerer) answer(_ context.Context, q *answerQuestion) (*translate.Response, *translate.Error) {
	// The bytes first: every request of every test in the package asks,
	// and one without the marker is passed without a decode.
	if !bytes.Contains(q.Body, []byte(CannedMarker)) || !strings.Contains(q.lastUserText(), CannedMarker) {
		return nil, nil
	}
	return &translate.Response{
		Parts:      []translate.Part{{Type: translate.PartText, Text: CannedText}},
		StopReason: translate.StopEndTurn,
		Usage:      translate.Usage{InputTokens: 11, OutputTokens: 7},
	}, nil
}

type guardAnswerer struct{}

func (guardAnswerer) answer(_ context.Context, q *answerQuestion) (*translate.Response, *translate.Error) {
	if !bytes.Contains(q.Body, []byte(RefuseMarker)) || !strings.Contains(q.lastUserText(), RefuseMarker) {
		return nil, nil
	}
	return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: GuardMessage, Param: "messages"}
}

// AnsweredAttempt is what the canned feature's observer saw of an attempt
// an answerer served.
type AnsweredAttempt struct {
	Protocol, Backend string
	Status            int
	Stream, Final     bool
	Events            int // onEvent calls
	Responses         int // onResponse calls
	FirstContent      bool
}

var answered struct {
	mu   sync.Mutex
	list []AnsweredAttempt
}

// AnsweredAttempts returns and forgets what the observer saw.
func AnsweredAttempts() []AnsweredAttempt {
	answered.mu.Lock()
	defer answered.mu.Unlock()
	list := answered.list
	answered.list = nil
	return list
}

// watchAnswered registers an observer on the attempts an answerer serves.
func watchAnswered(_ *http.Request, rw *responseWriter) {
	if strings.HasPrefix(rw.backend.name, "answer:") {
		// The client's protocol is the attempt's from the start; how
		// the attempt ended comes with onEnd.
		rw.addObserver(&answeredObserver{a: AnsweredAttempt{Protocol: string(rw.client.Protocol())}}, hookBackendHeader|hookEvent|hookResponse|hookFirstContent|hookEnd)
	}
}

type answeredObserver struct {
	nopObserver
	a AnsweredAttempt
}

func (o *answeredObserver) onBackendHeader(_ *responseWriter, status int) { o.a.Status = status }
func (o *answeredObserver) onEvent(*responseWriter, *translate.Event)     { o.a.Events++ }
func (o *answeredObserver) onResponse(*responseWriter, *translate.Response) {
	o.a.Responses++
}
func (o *answeredObserver) onFirstContent(*responseWriter) { o.a.FirstContent = true }

func (o *answeredObserver) onEnd(out *attemptOutcome, final bool) {
	o.a.Backend, o.a.Stream, o.a.Final = out.Backend, out.Stream, final
	answered.mu.Lock()
	answered.list = append(answered.list, o.a)
	answered.mu.Unlock()
}

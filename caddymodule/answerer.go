package caddymodule

import (
	"context"
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// answerer is a gateway feature that may answer a chat request in place of
// a backend: a response cache, a guardrail, the replay of a stored
// response. It is asked after routing, once per client request (not per
// attempt of a fallback chain), and either passes (nil, nil), answers with
// a complete response, or refuses with an error in the client's protocol.
//
// louter serves an answer as it serves a backend's: encoded in the client's
// protocol by the client's codec (a JSON body, or for a streaming client
// the events the response is equivalent to, translate.ResponseEvents,
// written and flushed one by one), through the same response writer, so
// the same observers see it (metrics, tracing, the exchange record, the
// ops feed, the watchers), the client's limits admit and settle it, and
// the ledger records it. It is marked as answered by the answerer named n:
// the attempt's backend is "answer:n" wherever a backend is named (the
// backend label of louter_requests_total and the other series, the
// ledger's backend, louter_backend in the access log, the trace's
// louter.backend), so a dashboard split by backend shows what each
// answerer served; its backend model is the client's model.
//
// The contract, in the style of translate/codec.go:
//
//   - Passing. (nil, nil) passes: the next answerer is asked, and when all
//     pass the request goes to its backend as if no answerer were
//     registered. An answerer that cannot read the request (q.request
//     fails) passes, and the backend's translation reports the error.
//   - Answering. A non-nil response answers. Its Usage is what the limits
//     settle and the ledger records (an answer that cost nothing reports
//     none and is counted as the request's estimate, as a backend that
//     reports no usage is); leave its ID empty to get a fresh id in the
//     client protocol's shape (msg_…, chatcmpl-…, resp_…), and its Model
//     empty for the client's model.
//   - Refusing. A non-nil error refuses: the client gets it as an error in
//     its protocol (translate.ClientStatus), counted as rejected, not as a
//     backend failure. The response is then ignored.
//   - Order. Answerers are asked in the order they were registered; the
//     first that does not pass decides. The client's limits are applied
//     to the answer after it is given: a request they refuse is refused
//     whatever the answer, and a request every answerer passes is admitted
//     once, by its backend attempt, as without answerers.
//   - Aliasing. q and what it holds (the body, the header, the decoded
//     request) belong to louter and are valid only during the call: an
//     answerer copies what it keeps and modifies nothing. The response
//     belongs to louter once returned: the answerer must not touch it
//     again (a cache returns a copy of what it holds).
//   - Concurrency. answer is called concurrently, from every request in
//     flight, on the request's goroutine; ctx is the client request's and
//     is done when the client goes away. An answerer that waits (a remote
//     cache) honours ctx.
//
// A feature registers itself once, from an init function, with
// registerAnswerer; it needs no edit of the handler.
type answerer interface {
	answer(ctx context.Context, q *answerQuestion) (*translate.Response, *translate.Error)
}

// answerQuestion is what an answerer is asked about: the client's request
// as routed. It lives in the chatRequest, so asking allocates nothing.
type answerQuestion struct {
	// Protocol is the client's protocol.
	Protocol translate.Protocol
	// Model is the model the client asked for; Route the pattern of the
	// route that matched it; Backend the name of the backend routing chose
	// (the route's, or a route condition's).
	Model, Route, Backend string
	// Client is the name of the client key the request came with ("" when
	// the handler has no client keys or the request is anonymous).
	Client string
	// Stream reports whether the client asked for a stream (the body's
	// stream member, or the URL for Gemini).
	Stream bool
	// Header and Body are the client's, as sent: read only.
	Header http.Header
	Body   []byte

	q       *chatRequest
	ir      *translate.Request // the body decoded, once asked for
	irErr   *translate.Error
	decoded bool
}

// request returns the client's request decoded to the IR by the client's
// codec, decoding it on the first call only: an answerer that decides on
// the body's bytes alone (a cache keyed on them) costs no decode. The
// request is louter's and is read only; the backend's translation reuses
// it when every answerer passes.
func (q *answerQuestion) request() (*translate.Request, *translate.Error) {
	if !q.decoded {
		q.decoded = true
		if ir := q.q.ir; ir != nil {
			q.ir = ir // decoded already for a route condition
		} else if ir, err := q.q.client.DecodeRequest(q.Body); err != nil {
			q.irErr = asError(err, http.StatusBadRequest)
		} else {
			q.ir = ir
		}
	}
	return q.ir, q.irErr
}

// lastUserText is the text of the request's last user message, "" when it
// has none or the request does not decode: what a guardrail or a test
// answerer most often looks at.
func (q *answerQuestion) lastUserText() string {
	ir, _ := q.request()
	if ir == nil {
		return ""
	}
	for i := len(ir.Messages) - 1; i >= 0; i-- {
		m := &ir.Messages[i]
		if m.Role != translate.RoleUser {
			continue
		}
		var b strings.Builder
		for j := range m.Parts {
			if m.Parts[j].Type == translate.PartText {
				b.WriteString(m.Parts[j].Text)
			}
		}
		return b.String()
	}
	return ""
}

// answererRow is a registered answerer: its name, which marks what it
// answered ("answer:" + name), and the function that makes it for a
// handler being provisioned.
type answererRow struct {
	name string
	// provision returns the answerer for handler l, or nil when l's
	// config does not use the feature; it is called once per Provision.
	provision func(l *Louter) answerer
}

// namedAnswerer is one of a handler's answerers.
type namedAnswerer struct {
	name    string
	backend string // "answer:" + name
	a       answerer
}

// answererRows are the registered answerers, in registration order.
var answererRows []answererRow

// registerAnswerer registers a feature's answerer under name, from an
// init function. provision is called at every handler's Provision and
// returns the handler's answerer, or nil when its config does not use the
// feature. A name registered twice panics, as a protocol row does.
func registerAnswerer(name string, provision func(l *Louter) answerer) {
	for _, row := range answererRows {
		if row.name == name {
			panic("caddymodule: answerer " + name + " registered twice")
		}
	}
	answererRows = append(answererRows, answererRow{name: name, provision: provision})
}

// watcherRows make the attempt watchers of registered features: each is
// called at every handler's Provision and returns the handler's watcher,
// or nil.
var watcherRows []func(l *Louter) attemptWatcher

// registerWatcher registers a feature's observer of attempts (an
// attemptWatcher, attempt_hooks.go), from an init function.
func registerWatcher(provision func(l *Louter) attemptWatcher) {
	watcherRows = append(watcherRows, provision)
}

// provisionFeatures makes the registered features' answerers and
// watchers for l.
func (l *Louter) provisionFeatures() {
	for _, row := range answererRows {
		if a := row.provision(l); a != nil {
			l.answerers = append(l.answerers, namedAnswerer{name: row.name, backend: "answer:" + row.name, a: a})
		}
	}
	for _, provision := range watcherRows {
		if w := provision(l); w != nil {
			l.watchers = append(l.watchers, w)
		}
	}
}

// answer asks l's answerers about the routed request q, whose backend is
// t. done reports that one answered or refused and the client has been
// answered; otherwise the request goes on to its backend.
func (l *Louter) answer(w http.ResponseWriter, r *http.Request, q *chatRequest, t routeTarget) (done bool, err error) {
	if len(l.answerers) == 0 {
		return false, nil // the usual case: nothing to ask
	}
	ask := &q.ask
	stream := q.streamMember
	if streamFromURL := q.ep.streamFromURL; streamFromURL != nil {
		stream, _ = streamFromURL(r)
	}
	*ask = answerQuestion{
		Protocol: q.ep.protocol, Model: q.model, Route: q.route.Match, Backend: t.backend.name,
		Client: metricClientName(l.access, clientOf(r)), Stream: stream,
		Header: r.Header, Body: q.body, q: q,
	}
	for i := range l.answerers {
		na := &l.answerers[i]
		resp, refusal := na.a.answer(r.Context(), ask)
		if resp == nil && refusal == nil {
			continue
		}
		return true, l.serveAnswer(w, r, q, na, resp, refusal) // answer_serve.go
	}
	if q.ir == nil {
		q.ir = ask.ir // the backend's translation takes the decode over
	}
	ask.q, ask.ir, ask.Header, ask.Body = nil, nil, nil, nil
	return false, nil
}

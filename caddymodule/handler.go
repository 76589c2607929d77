package caddymodule

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/record"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// nopNext is the next handler of the upstream handlers. reverse_proxy calls
// it only when a handle_response route falls through, and then there is
// nothing more to do.
var nopNext = caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (l *Louter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) (err error) {
	// One classification decides everything below: what is checked is
	// what is served (surface.go).
	req := classifyRequest(r)
	if req.action == actNext {
		if l.UnknownPaths != unknownPathsNotFound || r.Method == http.MethodOptions {
			return next.ServeHTTP(w, r) // not an API request: the site's other handlers decide
		}
		req = unknownPath(r) // unknown_paths not_found: a 404 in an API's shape (surface.go)
	}
	if req.action == actProbe {
		// An agent checking that the gateway is up (Claude Code's HEAD
		// /api/hello): nothing to authenticate, nothing to say.
		w.WriteHeader(http.StatusOK)
		return nil
	}
	r, ok := l.authenticate(w, r, req) // client keys (client_keys.go)
	if !ok {
		return nil
	}
	if done, err := l.stateful.ServeState(w, r, req.protocol, req.api); done {
		return err // stored responses, the WebSocket, compaction (internal/stateful)
	}
	if done, err := l.serveSurface(w, r, req); done {
		return err // model lists, non-chat passthrough, wrong paths (surface.go)
	}
	if req.action == actElsewhere {
		l.serveCountTokens(w, r, req) // Anthropic's count_tokens, Gemini's countTokens (count_tokens.go)
		return nil
	}
	return l.serveChat(w, r, req, next)
}

// serveChat serves an authenticated chat request: ServeHTTP's main path,
// which a WebSocket session (internal/stateful/responses_ws.go) also runs
// once per turn.
func (l *Louter) serveChat(w http.ResponseWriter, r *http.Request, req apiRequest, next caddyhttp.Handler) (err error) {
	ep, pathModel, ok := req.chat(r.Method)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	client, ok := translate.Lookup(ep.protocol)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	// The record learns what the request did and publishes it at the end:
	// metrics, access-log fields, placeholders (exchange_record.go).
	x := l.beginExchange(w, r, ep.protocol)
	w = x
	q := &chatRequest{x: x} // filled in once the request is routed

	// w itself unless record is set (record_capture.go).
	w = l.startRecording(w, r, q)
	defer func() { x.end(q.outcome(), q.dropped, r.Context().Err() != nil) }()
	defer l.finishRecording(q, r)
	defer q.settle(r.Context()) // client_limits.go

	body, e := l.readBody(r)
	q.recordClientBody(r, body)
	if e != nil {
		return l.reject(w, client, e)
	}
	// A stateful protocol's stored turns: the history a continuation
	// names is put back into the body, and the answer is kept
	// (internal/stateful).
	if turn, te := l.stateful.Continue(r, ep.protocol, ep.stateful, body); te != nil {
		return l.reject(w, client, te)
	} else if turn != nil {
		if turn.Detach {
			return l.stateful.RunBackground(w, r, ep.protocol, client, body) // internal/stateful/background.go
		}
		body, q.continues, q.stored = turn.Body, turn.EchoPrevious(), turn.Keep
		w = turn.Capture(r.Context(), w)
		defer turn.Save(r.Context())
		defer turn.Finish() // before save: the answer's last bytes
		if turn.Trigger {
			return l.stateful.ServeCompactionTrigger(w, r, turn, client) // internal/stateful/compact.go
		}
	}
	// One pass over the body, for both paths: it finds the members louter
	// routes by and edits, refuses duplicates of them, and validates the
	// body but for the system prompt and the messages, which the decoder
	// validates as it reads them, or newAttempt before a body is passed on
	// (translate.ScanTopLevelDeferred). An answer given before either is
	// given only if the body is JSON (rejectValid).
	top, te := translate.ScanTopLevelDeferred(ep.protocol, body, func(model string) bool {
		return l.decodesFor(ep.protocol, cmp.Or(pathModel, model))
	})
	if te != nil {
		return l.reject(w, client, te)
	}
	rejectValid := func(te *translate.Error) error {
		if ve := top.Validate(body); ve != nil {
			te = ve
		}
		return l.reject(w, client, te)
	}
	if check := ep.checkRequest; check != nil {
		// What the client's own API refuses, refused whatever the
		// backend (Anthropic's max_tokens and 2026-10-21:
		// anthropic_agents.go).
		if te := check(r.Header, body, &top); te != nil {
			return rejectValid(te)
		}
	}
	model := pathModel
	if model == "" {
		m := top.Model
		if m.Type != gjson.String || m.Str == "" {
			return rejectValid(&translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "louter: the request names no model", Param: "model"})
		}
		model = m.Str
	}
	route, ok := l.route(model)
	if !ok {
		return rejectValid(translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: no backend is configured for model %q", model)))
	}
	q.ep, q.client, q.body, q.model, q.pathModel, q.route, q.top = ep, client, body, model, pathModel, route, &top
	q.streamMember = top.Stream.Type == gjson.True
	t := routeTarget{backend: route.backend, rename: route.Rename}
	byCondition := false
	if len(route.When) > 0 {
		// A condition may pick another backend (route_conditions.go); it
		// then serves alone, without the route's fallbacks.
		t.backend, t.rename, q.ir, byCondition = l.applyConditions(route, ep.protocol, client, r.Header, body, model)
		l.metrics.routeDecision(route.Match, t.backend.name, byCondition)
	}
	q.conversation = newConversation(ep.protocol, r.Header, &top, body) // conversation_key.go
	if done, err := l.answer(w, r, q, t); done {
		return err // a feature answered in place of a backend (answerer.go)
	}
	if len(route.Fallbacks) > 0 && !byCondition {
		return l.serveChain(w, r, q, route) // fallback.go
	}
	_, err = l.serveBackend(w, r, q, t, false)
	return err
}

// chatRequest is a client's chat request as read and routed, before it is
// rewritten for a backend.
type chatRequest struct {
	ep           *protocolRow // the client protocol's (protocols.go)
	client       translate.Codec
	body         []byte      // the client's body; never modified, so each attempt starts from it; nil once released (request_release.go)
	streamMember bool        // the body's stream member is true
	model        string      // the model the client asked for
	pathModel    string      // the model named in the path (Gemini), or ""
	route        *ModelRoute // the route that matched; its pattern is the metrics' model label
	// ir is the request decoded early for a route condition, or nil. The
	// first attempt's translation takes it over (and changes it), so it
	// is cleared then: a later attempt decodes body afresh.
	ir           *translate.Request
	conversation *conversation // the conversation key (conversation_key.go)
	// continues is the previous_response_id a stored-responses turn
	// served, which the client's response objects echo (internal/stateful/turn.go).
	continues string
	// stored: the turn's answer is kept, which its response objects
	// echo as store.
	stored bool

	// top is what the scan of body found, with where the members a
	// passthrough edits are (passthrough_body.go).
	top *translate.TopLevel

	// What the exchange record publishes at the end (exchange_record.go):
	// the response writer of the attempt that answered (nil when no
	// backend was asked), whose outcome the record, the recording and the
	// limits read (q.outcome, attempt_outcome.go), and the fields its
	// translation left out.
	x       *exchangeRecord
	rw      *responseWriter
	dropped []string

	// The client's and route's limits taken at the first attempt
	// (client_limits.go).
	grant    *grant
	admitted bool

	// rec records the exchange when record is set (record_capture.go).
	rec *record.Capture

	ask answerQuestion // what the answerers are asked about (answerer.go)
}

// serveBackend sends the request to one backend and answers the client.
// When canFallBack is set and the attempt fails before the client received
// anything, in a way another backend may not (fallback_gate.go), nothing is
// written and the failure is returned for the next backend of the chain.
//
// The gateway features that watch the attempt register on its writer as
// they start (attempt_hooks.go); each step below is one feature's or the
// translation's.
func (l *Louter) serveBackend(w http.ResponseWriter, r *http.Request, q *chatRequest, t routeTarget, canFallBack bool) (failure *attemptFailure, err error) {
	a, te := l.newAttempt(w, r, q, t)
	if te != nil {
		if ve := q.top.Validate(q.body); ve != nil {
			te = ve // not JSON: the scan's answer, not the decoder's or another check's
		}
		return nil, l.reject(w, q.client, te) // no backend was asked: q.rw stays nil
	}
	if cm := a.rw.clientReq.ContextManagement; cm != nil && cm.Paused {
		q.rw = nil                                            // no backend is asked
		return nil, answerPaused(w, q.client, a.rw.clientReq) // compact_edit.go
	}
	rw := a.rw
	gate := gateFallback(rw, canFallBack) // fallback_gate.go
	// GenAI attributes on the tracing handler's span and a span for this
	// attempt (tracing.go); nil when the request is not traced. Only the
	// attempt that answers puts its response on the request's span.
	trace := traceAttempt(r, q.ep.protocol, a.backend, rw, a.backendModel, a.body)
	defer func() { rw.hookEnd(failure == nil) }()
	if !l.admitAttempt(w, r, q, &a) { // client_limits.go
		return nil, nil // refused: no backend was asked
	}
	r = l.backendRequest(r, q, &a)
	q.watchServerToolDrops(rw) // server_tool_drops.go
	l.watchAttempt(r, rw)      // features beyond louter's own (attempt_hooks.go)
	defer l.recoverBackendCut(r, q, &a, gate, &failure, &err)
	ur, timers := l.startStreamTimers(rw, r) // stream_timers.go
	if timers != nil {
		defer timers.stop()
	}
	ur = trace.startAttempt(ur, a.backend, a.backendModel)
	uerr := a.backend.upstream.ServeHTTP(rw, ur, nopNext)
	return l.finishAttempt(w, r, q, &a, gate, uerr)
}

// attempt is one backend attempt of a request, as serveBackend's steps
// share it.
type attempt struct {
	backend      *Backend
	backendModel string
	body         []byte        // the body for the backend, until the request to send carries it
	sw           *secretWriter // the client's writer, scrubbed of the keys
	rw           *responseWriter
}

// newAttempt makes the attempt's response writer and the body for its
// backend: the client's body edited (passthrough) or translated. The
// error, when not nil, is the client's answer: the backend is not asked.
func (l *Louter) newAttempt(w http.ResponseWriter, r *http.Request, q *chatRequest, t routeTarget) (attempt, *translate.Error) {
	ep, client, body, model, pathModel := q.ep, q.client, q.body, q.model, q.pathModel
	b := t.backend
	backendModel := t.upstream(q.route, model) // fallback.go
	q.x.route(b, q.route.Match, model, backendModel)
	q.rw = nil
	if te := checkBackendModel(b, backendModel, backendModel != model); te != nil {
		return attempt{}, te // a name bound for the backend's URL (model_name.go)
	}

	// Every answer from here on goes through the scrubber: no key, the
	// backend's or the client's, reaches the client in an error.
	sw := newSecretWriter(w, append(redact.ClientSecrets(r.Header, r.URL.RawQuery), b.apiKey)...)
	rw := newResponseWriter(sw)
	rw.client, rw.backend, rw.logger = client, b, l.logger
	// A backend with a dialect needs its answers parsed even for clients of
	// its own protocol.
	rw.passthrough = b.passesThrough(ep.protocol)

	// Gemini says in the URL, not the body, whether to stream, and in
	// which framing the client wants the stream.
	var urlStream *bool
	if streamFromURL := ep.streamFromURL; streamFromURL != nil {
		s, jsonArray := streamFromURL(r)
		urlStream = &s
		if jsonArray && !rw.passthrough {
			rw.out = &stream.JSONArrayOutput{}
			rw.jsonArray = true
		}
		rw.passArray = jsonArray && rw.passthrough
	}

	if rw.passthrough {
		// The body goes on: what the scan skipped is validated first
		// (translate.ScanTopLevelDeferred).
		if te := q.top.Validate(body); te != nil {
			return attempt{}, te
		}
		bodyBackendModel := backendModel
		if pathModel != "" {
			bodyBackendModel = model // the model is in the path: renamed there, not in the body
		}
		rw.wantStream = q.streamMember
		if urlStream != nil {
			rw.wantStream = *urlStream
		}
		// A stream whose usage is counted asks the backend for it when
		// the protocol reports it only on request (client_limits.go).
		wantUsage := rw.wantStream && l.access.countsUsage(clientOf(r), q.route)
		var te *translate.Error
		body, rw.hideUsage, te = passthroughBody(body, q.top, model, bodyBackendModel, b.MaxTokens, wantUsage) // passthrough_body.go
		if te != nil {
			return attempt{}, te
		}
		rw.clientReq = &translate.Request{Model: model, Stream: rw.wantStream}
		if refusesSampling(b, backendModel) {
			body, rw.clientReq.Dropped = rowOf(b.Protocol).sampling.strip(body) // anthropic_agents.go
		}
	} else {
		var te *translate.Error
		ir := q.ir
		q.ir = nil // taken over by this attempt's translation
		body, rw.clientReq, te = l.translateRequest(r, client, b, body, ir, model, backendModel, urlStream)
		if te != nil {
			return attempt{}, te
		}
		body = withCacheKey(body, rowOf(b.Protocol).cacheKeyMember, r, q.conversation) // cache_key.go
		rw.wantStream = rw.clientReq.Stream
	}
	rw.clientReq.PreviousResponseID, rw.clientReq.Stored = q.continues, q.stored
	sw.stream = rw.wantStream
	q.rw, q.dropped = rw, rw.clientReq.Dropped
	q.x.streaming(rw.wantStream)
	return attempt{backend: b, backendModel: backendModel, body: body, sw: sw, rw: rw}, nil
}

// backendRequest rewrites the client's request for the attempt's backend
// and returns the request to send it: the body, path and headers
// (request_rewrite.go), the credential, the conversation key. The request's
// copies are let go of once the answer's first content is out
// (request_release.go), and a recording records what is sent
// (record_capture.go).
func (l *Louter) backendRequest(r *http.Request, q *chatRequest, a *attempt) *http.Request {
	b, rw := a.backend, a.rw
	cred, dropped := rewriteRequest(r, backendRequest{backend: b, body: a.body, model: a.backendModel, stream: rw.wantStream, passthrough: rw.passthrough})
	if len(dropped) > 0 {
		q.dropped = append(slices.Clip(q.dropped), dropped...)
		l.logDropped(dropped, q.ep.protocol, b)
	}
	if q.ep.requestID {
		rw.addObserver(requestIDObserver{}, hookBackendHeader) // anthropic_agents.go
	}
	q.releaseOnContent(r, rw)
	r = b.attachCredential(r, cred)
	r = a.sw.collectAuthSecrets(r, b, q.rec)                 // what the auth module signs with is scrubbed too (auth_secrets.go)
	setConversation(r, q.conversation, b.conversationHeader) // after the header allowlist, for lb_policy header
	q.recordBackendRequest(r, b, a.backendModel, a.body, rw)
	// The request holds the body now: the attempt, which lives as long as
	// the response, must not keep it from being let go of.
	a.body = nil

	if c := l.logger.Check(zapcore.DebugLevel, "routing request"); c != nil {
		c.Write(
			zap.String("client", string(q.ep.protocol)),
			zap.String("backend", b.name),
			zap.String("backend_protocol", string(b.Protocol)),
			zap.String("model", q.model),
			zap.String("backend_model", a.backendModel),
			zap.Bool("stream", rw.wantStream),
			zap.Bool("passthrough", rw.passthrough),
		)
	}
	return r
}

// recoverBackendCut is deferred around the upstream handler, which may
// panic. gate is the attempt's fallback gate, nil when no other backend
// may take over; failure and err are serveBackend's results.
//
// reverse_proxy panics with http.ErrAbortHandler when copying the response
// fails after the status was written, whichever side failed. When the
// client's connection failed or the client went away (its context is
// done), aborting is right: the panic goes on, and net/http drops the
// connection. But when the backend's connection failed mid-body, the
// client is still there and would see a truncated stream it cannot tell
// from a finished one; so louter ends the response properly instead — an
// error event in the client's protocol, or an error response when nothing
// was sent yet — and returns normally.
func (l *Louter) recoverBackendCut(r *http.Request, q *chatRequest, a *attempt, gate *fallbackGate, failure **attemptFailure, err *error) {
	v := recover()
	if v == nil {
		return
	}
	rw := a.rw
	if v == http.ErrAbortHandler && r.Context().Err() == nil && gate != nil {
		if f := gate.failedBeforeContent(rw, errors.New("the backend connection failed")); f != nil {
			*failure, *err = f, nil
			return // nothing reached the client: the next backend takes over
		}
	}
	if v == http.ErrAbortHandler && r.Context().Err() == nil && rw.abort() {
		l.logger.Warn("backend connection failed during the response", zap.String("backend", a.backend.name), zap.String("model", q.model))
		a.sw.close()
		*err = nil
		return
	}
	panic(v)
}

// finishAttempt answers the client once the upstream handler has returned
// with uerr, or returns the failure a fallback chain moves on from (gate
// is the attempt's fallback gate, nil when no other backend may take
// over).
func (l *Louter) finishAttempt(w http.ResponseWriter, r *http.Request, q *chatRequest, a *attempt, gate *fallbackGate, uerr error) (*attemptFailure, error) {
	rw, b := a.rw, a.backend
	if gate != nil && r.Context().Err() == nil { // a client that has gone is not served by another backend either
		if f := gate.failedBeforeContent(rw, uerr); f != nil {
			f.retryAfter = retryAfter(rw.header, time.Now())
			return f, nil
		}
	}
	if te := rw.timedOut(); te != nil && rw.mode == modeUnset {
		// first_byte_timeout: nothing reached the client, which gets an
		// error status in its protocol.
		l.logger.Warn("backend sent no response in time", zap.String("backend", b.name), zap.String("model", q.model), zap.String("error", te.Message))
		q.x.upstreamKind = upstreamFirstByteTimeout
		return nil, l.reject(w, q.client, te)
	}
	if rw.mode == modeUnset {
		// Nothing was written: the backend could not be reached (the
		// error says why), or the upstream handler wrote nothing at all.
		if uerr == nil {
			uerr = errors.New("the upstream handler wrote no response")
		}
		lvl := zapcore.ErrorLevel
		if r.Context().Err() != nil {
			lvl = zapcore.DebugLevel // the client went away; nothing failed on our side
		}
		if c := l.logger.Check(lvl, "backend request failed"); c != nil {
			c.Write(zap.String("backend", b.name), zap.String("model", q.model), zap.Error(uerr))
		}
		if r.Context().Err() == nil {
			q.x.upstreamKind = upstreamUnreachable
		}
		_ = l.reject(a.sw, q.client, upstreamError(uerr, b.name))
		a.sw.close()
		return nil, nil
	}
	rw.finish()
	a.sw.close()
	if uerr != nil {
		l.logger.Warn("upstream handler reported an error after responding", zap.String("backend", b.name), zap.Error(uerr))
	}
	return nil, nil
}

// reject answers with an error in the client's protocol. A client that has
// gone cannot be answered, so the write error is not reported.
func (l *Louter) reject(w http.ResponseWriter, client translate.Codec, e *translate.Error) error {
	if c := l.logger.Check(zapcore.DebugLevel, "rejecting request"); c != nil {
		c.Write(zap.Int("status", errorStatus(client, e)), zap.String("message", e.Message))
	}
	_ = httpx.WriteError(w, client, e)
	return nil
}

// translateRequest decodes the client's request and encodes it for the
// backend, applying the rename and the max_tokens cap
// (translate.TranslateRequest, which record's Replay replays through). It
// also returns the client's request as the client-side encoders need it:
// with the model name the client asked for. urlStream, when set, is
// whether to stream as the URL says (Gemini), which the body cannot tell.
// ir, when not nil, is body already decoded for a route condition, used
// instead of decoding again. r is the client's request, through whose
// chat path a compact_20260112 edit asks for its summary (compact_edit.go).
func (l *Louter) translateRequest(r *http.Request, client translate.Codec, b *Backend, body []byte, ir *translate.Request, model, backendModel string, urlStream *bool) ([]byte, *translate.Request, *translate.Error) {
	out, clientReq, err := translate.TranslateRequest(body, ir, &translate.RequestRoute{
		Client: client, Backend: b.codec, Dialect: b.Dialect,
		Model: model, BackendModel: backendModel, MaxTokens: b.MaxTokens, Stream: urlStream,
		// For a stream whose client expects the input early
		// (translate.UsageTimingCodec), counted as the backend counts.
		CountInput:     func(req *translate.Request) int { return tokencount.Quick(req, rowOf(b.Protocol).tokenFraming) },
		Edit:           backendEdit(b, backendModel),
		ContextEditing: b.contextEditing(),         // context_editing.go
		Summarize:      l.editSummarizer(r, model), // compact_edit.go
		ServerTools:    b.ServerTools,
	})
	if err != nil {
		return nil, nil, asError(err, http.StatusBadRequest)
	}
	l.logDropped(clientReq.Dropped, client.Protocol(), b)
	return out, clientReq, nil
}

// logDropped logs at debug what a request for backend b left out.
func (l *Louter) logDropped(dropped []string, client translate.Protocol, b *Backend) {
	for _, d := range dropped {
		if c := l.logger.Check(zapcore.DebugLevel, "not translated"); c != nil {
			c.Write(zap.String("field", d), zap.String("from", string(client)), zap.String("to", string(b.Protocol)))
		}
	}
}

// backendEdit is what a request translated for backend b (asked for
// model) needs left out beyond translation: the sampling parameters the
// backend refuses, and Claude Code's billing line unless the backend keeps
// it (translate.BackendEdit). nil when nothing.
func backendEdit(b *Backend, model string) func(*translate.Request) {
	return translate.BackendEdit(refusesSampling(b, model), !b.KeepBillingHeader)
}

// refusesSampling reports whether backend b refuses temperature, top_p and
// top_k for model (its row's sampling rule).
func refusesSampling(b *Backend, model string) bool {
	s := rowOf(b.Protocol).sampling
	return s != nil && s.refuses(b, model)
}

package caddymodule

import (
	"net/http"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// serveAnswer serves what answerer na gave for q (answerer.go): resp, or
// the refusal when it is not nil. It is serveBackend's attempt with the
// backend's steps left out: the attempt's writer, its observers and the
// limits are the same, and the backend is the answerer's stand-in, named
// "answer:" + its name.
func (l *Louter) serveAnswer(w http.ResponseWriter, r *http.Request, q *chatRequest, na *namedAnswerer, resp *translate.Response, refusal *translate.Error) error {
	ask := &q.ask
	defer func() { ask.q, ask.ir, ask.Header, ask.Body = nil, nil, nil, nil }()
	b := &Backend{name: na.backend, Protocol: q.ep.protocol, codec: q.client}
	q.x.route(b, q.route.Match, q.model, q.model)

	sw := newSecretWriter(w, redact.ClientSecrets(r.Header, r.URL.RawQuery)...)
	rw := newResponseWriter(sw)
	rw.client, rw.backend, rw.logger = q.client, b, l.logger
	rw.wantStream = ask.Stream
	if streamFromURL := q.ep.streamFromURL; streamFromURL != nil {
		if _, jsonArray := streamFromURL(r); jsonArray {
			rw.out = &stream.JSONArrayOutput{}
			rw.jsonArray = true
		}
	}
	// The client's request as the client encoders read it: its model,
	// its stream options, the stored-responses members it echoes.
	req := &translate.Request{}
	if ir, _ := ask.request(); ir != nil {
		c := *ir
		req = &c
	}
	req.Model, req.Stream = strings.Clone(q.model), rw.wantStream
	req.PreviousResponseID, req.Stored = q.continues, q.stored
	rw.clientReq = req
	sw.stream = rw.wantStream
	q.rw, q.dropped = rw, nil
	q.x.streaming(rw.wantStream)

	a := attempt{backend: b, backendModel: q.model, sw: sw, rw: rw}
	traceAttempt(r, q.ep.protocol, b, rw, q.model, q.body) // tracing.go
	defer rw.hookEnd(true)
	if !l.admitAttempt(w, r, q, &a) { // client_limits.go
		return nil // refused: the answer is not given
	}
	l.watchAttempt(r, rw)
	if c := l.logger.Check(zapcore.DebugLevel, "answered in place of a backend"); c != nil {
		c.Write(zap.String("client", string(q.ep.protocol)), zap.String("answerer", na.name),
			zap.String("model", q.model), zap.Bool("stream", rw.wantStream), zap.Bool("refused", refusal != nil))
	}
	rw.writeAnswer(resp, refusal)
	sw.close()
	return nil
}

// writeAnswer writes an answerer's answer to the client, as the writer
// writes a translated backend answer: resp as the client's JSON, or for a
// streaming client as the events it is equivalent to, each written and
// flushed as it is encoded; or refusal, when not nil, as an error in the
// client's protocol. The observers see the answer as they see a backend's:
// onBackendHeader with its status, onEvent for each event of a stream,
// onResponse for a JSON answer, onClientWrite and onFirstContent.
func (rw *responseWriter) writeAnswer(resp *translate.Response, refusal *translate.Error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.finished = true
	if refusal != nil {
		// modeJSON rather than modeError: the exchange record counts
		// the request as rejected, not as a backend's failure.
		rw.mode, rw.status = modeJSON, errorStatus(rw.client, refusal)
		rw.hookBackendHeader(rw.status)
		rw.respondError(refusal)
		return
	}
	rw.status = http.StatusOK
	rw.hookBackendHeader(rw.status)
	if !rw.wantStream {
		rw.mode = modeJSON
		rw.usage, rw.hasUsage, rw.stop = resp.Usage, true, resp.StopReason
		rw.count.response(resp)
		rw.hookResponse(resp)
		rw.respondResponse(resp)
		return
	}
	rw.mode = modeStream
	stripEntityHeaders(rw.header)
	rw.setClientStreamHeaders()
	rw.commit(rw.status)
	enc := rw.client.NewStreamEncoder(rw.clientReq)
	events := translate.ResponseEvents(nil, resp)
	for i := range events {
		if rw.clientErr != nil {
			break // the client has gone
		}
		rw.observe(&events[i]) // usage, stop, first content, the count, onEvent
		enc.Encode(rw.out, &events[i])
		rw.writeEnd(rw.out.Bytes())
		rw.out.Reset()
		rw.hookFirstContent()
	}
	stream.EndOutput(rw.out)
	if rw.clientErr == nil {
		rw.writeEnd(rw.out.Bytes())
	}
	stream.ReleaseOutput(rw.out)
}

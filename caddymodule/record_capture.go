package caddymodule

import (
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/record"
	"github.com/louter/louter/translate"
)

// The handler's hooks into a recording (record_config.go turns it on).
// Each hook is a nil check when recording is off: q.rec is nil.
//
//   - startRecording wraps the client's writer: the client response.
//   - recordClientBody: the client request, once read.
//   - recordBackendRequest: what serveBackend sends, after rewriteRequest;
//     it also registers the capture as an observer of the attempt
//     (backendCapture), which records the backend response as
//     reverse_proxy delivers it.
//   - finishRecording queues the exchange for the writer.

// startRecording starts recording the exchange when record is set, and
// returns the writer to answer the client through: w wrapped in a tap, or
// w itself.
func (l *Louter) startRecording(w http.ResponseWriter, r *http.Request, q *chatRequest) http.ResponseWriter {
	rc := l.recording
	if rc == nil {
		return w
	}
	var id string
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		id, _ = repl.GetString("http.request.uuid")
	}
	q.rec = record.NewCapture(q.x.start, id, record.Endpoint{Protocol: q.x.client, Path: r.URL.Path}, rc.limit, recordedHeader)
	q.rec.Scrub(rc.keys...)
	q.rec.Scrub(redact.ClientSecrets(r.Header, r.URL.RawQuery)...)
	return &recordTap{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, c: q.rec}
}

// recordClientBody records the client's request.
func (q *chatRequest) recordClientBody(r *http.Request, body []byte) {
	if q.rec != nil {
		q.rec.ClientRequest(r.Method, r.URL.Path, recordedQuery(r.URL.RawQuery), r.Header, body)
	}
}

// recordBackendRequest records the request about to be sent to backend b
// and has rw's observer record the response.
func (q *chatRequest) recordBackendRequest(r *http.Request, b *Backend, backendModel string, body []byte, rw *responseWriter) {
	if q.rec == nil {
		return
	}
	rb := &record.Backend{
		Name: b.name, Protocol: b.Protocol, Path: r.URL.Path,
		Model: q.model, BackendModel: backendModel,
		MaxTokens: b.MaxTokens, Dialect: b.Dialect, Passthrough: rw.passthrough,
		DropSampling: refusesSampling(b, backendModel), KeepBillingHeader: b.KeepBillingHeader,
		ServerTools:       b.ServerTools,
		ContextManagement: b.ContextManagement,
	}
	if member := rowOf(b.Protocol).cacheKeyMember; member != "" && !rw.passthrough { // cache_key.go
		if k := gjson.GetBytes(body, member); k.Exists() {
			rb.CacheKeyMember, rb.CacheKey = member, k.String()
		}
	}
	q.rec.BackendRequest(rb, r.Method, r.URL.Path, recordedQuery(r.URL.RawQuery), r.Header, body)
	rw.addObserver((*backendCapture)(q.rec), hookBackendHeader|hookBackendWrite)
}

// backendCapture is a recording's observer of an attempt: it records the
// backend's status, headers and body as the response writer receives
// them. It is the capture itself, so registering it allocates nothing.
type backendCapture record.Capture

func (c *backendCapture) onBackendHeader(rw *responseWriter, status int) {
	(*record.Capture)(c).BackendHeader(status, rw.header)
}

func (c *backendCapture) onBackendWrite(_ *responseWriter, p []byte) {
	(*record.Capture)(c).BackendWrite(p)
}

func (*backendCapture) onEvent(*responseWriter, *translate.Event)       {}
func (*backendCapture) onResponse(*responseWriter, *translate.Response) {}
func (*backendCapture) onClientWrite(*responseWriter)                   {}
func (*backendCapture) onFirstContent(*responseWriter)                  {}
func (*backendCapture) onEnd(*attemptOutcome, bool)                     {}

// finishRecording hands the exchange to the writer.
func (l *Louter) finishRecording(q *chatRequest, r *http.Request) {
	if q.rec == nil {
		return
	}
	var reason string
	out := q.outcome()
	switch {
	case r.Context().Err() != nil:
		reason = "the client went away"
	case out != nil && out.Cut:
		reason = record.ErrBackendCut
	case q.x.upstreamKind != "":
		reason = "upstream error: " + q.x.upstreamKind
	}
	l.recording.writer.Submit(q.rec.Finish(q.x.stream, q.dropped, reason))
}

// recordedHeader says which headers a recording keeps: never a credential
// or a cookie; the headers louter forwards or a protocol defines, the
// SDKs' telemetry, rate-limit and request-id headers, and the mock's.
func recordedHeader(name string) bool {
	name = http.CanonicalHeaderKey(name)
	switch {
	case redact.IsCredentialHeader(name), name == "Set-Cookie":
		return false
	case forwardedHeaders[name], name == "Retry-After", name == "Request-Id", name == "Cache-Control":
		return true
	}
	for _, row := range protocolRows {
		if row.ownHeaders[name] {
			return true
		}
		for _, prefix := range row.recordedPrefixes {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		}
	}
	for _, prefix := range [...]string{sdkHeaderPrefix, "X-Mock-"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// recordedQuery is a raw query with the values of credential parameters
// redacted.
func recordedQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, pair := range parts {
		if k, _, ok := strings.Cut(pair, "="); ok && redact.IsCredentialParam(k) {
			parts[i] = k + "=" + redact.Marker
		}
	}
	return strings.Join(parts, "&")
}

// recordTap records what is written to the client. It sits below the
// secret writer, so it sees the scrubbed bytes.
type recordTap struct {
	caddyhttp.ResponseWriterWrapper
	c *record.Capture
}

// WriteHeader records the status and the headers as they are sent.
func (t *recordTap) WriteHeader(status int) {
	t.c.ClientHeader(status, t.Header())
	t.ResponseWriterWrapper.WriteHeader(status)
}

// Write records a chunk of the client's body.
func (t *recordTap) Write(p []byte) (int, error) {
	t.c.ClientHeader(http.StatusOK, t.Header()) // ignored once a status was recorded
	t.c.ClientWrite(p)
	return t.ResponseWriterWrapper.Write(p)
}

// ReadFrom sends what it reads through Write; the promoted
// ResponseWriterWrapper.ReadFrom would skip the recording.
func (t *recordTap) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{t}, r)
}

// Interface guards
var (
	_ http.ResponseWriter                       = (*recordTap)(nil)
	_ io.ReaderFrom                             = (*recordTap)(nil)
	_ interface{ Unwrap() http.ResponseWriter } = (*recordTap)(nil)
	_ attemptObserver                           = (*backendCapture)(nil)
)

package caddymodule

import (
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

// exchangeRecord gathers what one generation request did and publishes it
// three ways when the request ends: louter's Prometheus metrics, fields of
// Caddy's access log, and placeholders ({http.louter.*}) for the handlers
// and log directives that run after louter. What is known before the
// backend is asked (protocols, backend, models, stream) is published as
// soon as the route is chosen, so a deferred `header` can use it.
//
// It wraps the client's response writer to learn the status the client
// got, whichever path answered.
type exchangeRecord struct {
	caddyhttp.ResponseWriterWrapper
	status int // the status written to the client; 0: none yet

	metrics *louterMetrics
	repl    *caddy.Replacer
	extra   *caddyhttp.ExtraLogFields
	start   time.Time

	client       translate.Protocol
	backend      string // the configured backend name; empty before routing
	model        string // the matched route's pattern (the metric label)
	clientModel  string // the model the client asked for (not a label: clients choose it)
	backendModel string
	stream       bool
	streamOpen   bool // counted in louter_streams_open

	routed       bool
	upstreamKind string // louter_upstream_errors_total's kind, when the backend failed
	aborted      bool   // the backend's connection failed mid-response
}

// beginExchange starts the record of a request of client protocol p.
func (l *Louter) beginExchange(w http.ResponseWriter, r *http.Request, p translate.Protocol) *exchangeRecord {
	x := &exchangeRecord{
		ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		metrics:               l.metrics,
		start:                 time.Now(),
		client:                p,
	}
	x.repl, _ = r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	x.extra, _ = r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	x.set("client", string(p))
	if x.extra != nil {
		x.extra.Set(zap.String("louter_client", string(p)))
	}
	return x
}

// WriteHeader notes the status the client gets.
func (x *exchangeRecord) WriteHeader(status int) {
	if x.status == 0 && status >= 200 {
		x.status = status
	}
	x.ResponseWriter.WriteHeader(status)
}

// Write notes the implied 200 of a body written without a status.
func (x *exchangeRecord) Write(p []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.ResponseWriter.Write(p)
}

// route records the route chosen for the request and publishes it.
func (x *exchangeRecord) route(route *ModelRoute, clientModel, backendModel string) {
	x.routed = true
	x.backend, x.model = route.backend.name, route.Match
	x.clientModel, x.backendModel = clientModel, backendModel
	x.set("backend", x.backend)
	x.set("model", clientModel)
	x.set("backend_model", backendModel)
	if x.extra != nil {
		x.extra.Set(zap.String("louter_backend", x.backend))
		x.extra.Set(zap.String("louter_model", clientModel))
		x.extra.Set(zap.String("louter_backend_model", backendModel))
	}
}

// streaming records whether the client asked for a stream, known once the
// request is decoded, just before the backend is asked.
func (x *exchangeRecord) streaming(stream bool) {
	x.stream = stream
	x.set("stream", strconv.FormatBool(stream))
	if x.extra != nil {
		x.extra.Set(zap.Bool("louter_stream", stream))
	}
	if stream && x.metrics != nil {
		x.streamOpen = true
		x.metrics.streamsOpen.WithLabelValues(string(x.client), x.backend).Inc()
	}
}

// set sets the placeholder {http.louter.NAME}.
func (x *exchangeRecord) set(name string, v any) {
	if x.repl != nil {
		x.repl.Set("http.louter."+name, v)
	}
}

// end publishes the record. rw is the response writer of the backend
// exchange, nil when louter answered without asking a backend; dropped is
// what the translation left out; gone is whether the client went away.
func (x *exchangeRecord) end(rw *responseWriter, dropped []string, gone bool) {
	now := time.Now()
	outcome := outcomeOK
	var usage translate.Usage
	var hasUsage bool
	var ttft time.Duration
	var stop translate.StopReason
	if rw != nil {
		usage, hasUsage, stop = rw.usage, rw.hasUsage, rw.stop
		if !rw.firstContent.IsZero() {
			ttft = rw.firstContent.Sub(x.start)
		}
		if x.upstreamKind == "" {
			x.upstreamKind = rw.failureKind(x.aborted)
		}
	}
	switch {
	case gone || (rw != nil && rw.clientErr != nil):
		outcome = outcomeCanceled
	case x.upstreamKind != "":
		outcome = outcomeUpstreamError
	case !x.routed || rw == nil || x.status >= 400:
		outcome = outcomeRejected
	}

	x.set("outcome", outcome)
	x.set("dropped", len(dropped))
	if stop != "" {
		x.set("stop_reason", string(stop))
	}
	if ttft > 0 {
		x.set("ttft_ms", ttft.Milliseconds())
	}
	if hasUsage {
		x.set("input_tokens", usage.InputTokens)
		x.set("output_tokens", usage.OutputTokens)
		x.set("cache_read_tokens", usage.CacheReadTokens)
		x.set("cache_write_tokens", usage.CacheWriteTokens)
		x.set("reasoning_tokens", usage.ReasoningTokens)
	}
	if x.extra != nil {
		x.extra.Set(zap.String("louter_outcome", outcome))
		if x.upstreamKind != "" {
			x.extra.Set(zap.String("louter_upstream_error", x.upstreamKind))
		}
		if len(dropped) > 0 {
			x.extra.Set(zap.Int("louter_dropped", len(dropped)))
		}
		if stop != "" {
			x.extra.Set(zap.String("louter_stop_reason", string(stop)))
		}
		if ttft > 0 {
			x.extra.Set(zap.Float64("louter_ttft", ttft.Seconds()))
		}
		if hasUsage {
			x.extra.Set(zap.Int("louter_input_tokens", usage.InputTokens))
			x.extra.Set(zap.Int("louter_output_tokens", usage.OutputTokens))
			x.extra.Set(zap.Int("louter_cache_read_tokens", usage.CacheReadTokens))
			x.extra.Set(zap.Int("louter_cache_write_tokens", usage.CacheWriteTokens))
			x.extra.Set(zap.Int("louter_reasoning_tokens", usage.ReasoningTokens))
		}
	}

	m := x.metrics
	if m == nil {
		return
	}
	client := string(x.client)
	m.requests.WithLabelValues(client, x.backend, x.model, codeClass(x.status), outcome).Inc()
	m.duration.WithLabelValues(client, x.backend, x.model).Observe(now.Sub(x.start).Seconds())
	if x.streamOpen {
		m.streamsOpen.WithLabelValues(client, x.backend).Dec()
	}
	if ttft > 0 {
		m.ttft.WithLabelValues(client, x.backend, x.model).Observe(ttft.Seconds())
	}
	if hasUsage {
		addTokens(m, client, x.backend, x.model, "input", usage.InputTokens)
		addTokens(m, client, x.backend, x.model, "output", usage.OutputTokens)
		addTokens(m, client, x.backend, x.model, "cache_read", usage.CacheReadTokens)
		addTokens(m, client, x.backend, x.model, "cache_write", usage.CacheWriteTokens)
		addTokens(m, client, x.backend, x.model, "reasoning", usage.ReasoningTokens)
	}
	if x.upstreamKind != "" {
		m.upstreamError.WithLabelValues(x.backend, x.upstreamKind).Inc()
	}
	for _, d := range dropped {
		m.dropped.WithLabelValues(client, x.backend, droppedLabel(d)).Inc()
	}
}

// addTokens counts n tokens of a kind; a zero count is not looked up.
func addTokens(m *louterMetrics, client, backend, model, kind string, n int) {
	if n > 0 {
		m.tokens.WithLabelValues(client, backend, model, kind).Add(float64(n))
	}
}

// failureKind is the upstream error kind of a response that was handled:
// the backend's error status, an undecodable answer, or a broken stream;
// empty when the backend answered well. aborted is whether its connection
// failed mid-response.
func (rw *responseWriter) failureKind(aborted bool) string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	switch {
	case rw.mode == modeError || rw.mode == modePassError:
		return statusKind(rw.status)
	case rw.timeout != nil:
		return upstreamIdleTimeout
	case aborted:
		return upstreamStreamCut
	case rw.badResponse:
		return upstreamBadResponse
	case rw.streamFailed:
		return upstreamStreamError
	}
	return ""
}

// Interface guards
var _ http.ResponseWriter = (*exchangeRecord)(nil)

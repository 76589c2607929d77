package caddymodule

import (
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/translate"
)

// exchangeRecord gathers what one generation request did and publishes it
// three ways: louter's Prometheus metrics and fields of Caddy's access log
// when the request ends, and placeholders ({http.louter.*}) for the
// handlers and log directives that run after louter. The placeholders are
// answered from the record when asked (a replacer provider), so they cost
// nothing unless used; what is known before the backend is asked
// (protocols, backend, models, stream) is there as soon as the route is
// chosen, for a deferred `header`, and the rest once the request ends, for
// log_append and the access log.
//
// It wraps the client's response writer to learn the status the client
// got, whichever path answered.
type exchangeRecord struct {
	caddyhttp.ResponseWriterWrapper
	status int // the status written to the client; 0: none yet

	metrics *louterMetrics
	series  *routeSeries // the metrics' children of the route, once looked up (seriesOf)
	start   time.Time

	client       translate.Protocol
	clientName   string // the metrics' client_name label (metricClientName)
	backend      string // the configured backend name; empty before routing
	model        string // the matched route's pattern (the metric label)
	clientModel  string // the model the client asked for (not a label: clients choose it)
	backendModel string
	stream       bool
	streamKnown  bool
	streamOpen   bool // counted in louter_streams_open

	routed       bool
	upstreamKind string // louter_upstream_errors_total's kind, when the backend failed

	// Known when the request ends.
	ended    bool
	outcome  string
	usage    translate.Usage
	hasUsage bool
	ttft     time.Duration
	stop     translate.StopReason
	dropped  int
}

// beginExchange starts the record of a request of client protocol p.
func (l *Louter) beginExchange(w http.ResponseWriter, r *http.Request, p translate.Protocol) *exchangeRecord {
	x := &exchangeRecord{
		ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		metrics:               l.metrics,
		start:                 time.Now(),
		client:                p,
		clientName:            metricClientName(l.access, clientOf(r)),
	}
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(x.placeholder)
	}
	// One inline field that writes the record's fields when the access
	// log is written: each Add costs an allocation, and the line is
	// written after the request ended.
	if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		extra.Add(zap.Inline(x))
	}
	return x
}

// placeholderPrefix starts the names of louter's placeholders.
const placeholderPrefix = "http.louter."

// placeholder answers {http.louter.*} from the record. A placeholder not
// known yet (the backend before routing, the tokens before the end) is
// empty.
func (x *exchangeRecord) placeholder(key string) (any, bool) {
	name, ok := strings.CutPrefix(key, placeholderPrefix)
	if !ok {
		return nil, false
	}
	switch name {
	case "client":
		return string(x.client), true
	case "backend":
		return x.backend, true
	case "model":
		return x.clientModel, true
	case "backend_model":
		return x.backendModel, true
	case "stream":
		if !x.routed {
			return "", true
		}
		return x.stream, true
	case "outcome":
		return x.outcome, true
	case "upstream_error":
		return x.upstreamKind, true
	case "stop_reason":
		return string(x.stop), true
	case "dropped":
		return x.endInt(x.dropped, x.ended), true
	case "ttft_ms":
		return x.endInt(int(x.ttft.Milliseconds()), x.ttft > 0), true
	case "input_tokens":
		return x.endInt(x.usage.InputTokens, x.hasUsage), true
	case "output_tokens":
		return x.endInt(x.usage.OutputTokens, x.hasUsage), true
	case "cache_read_tokens":
		return x.endInt(x.usage.CacheReadTokens, x.hasUsage), true
	case "cache_write_tokens":
		return x.endInt(x.usage.CacheWriteTokens, x.hasUsage), true
	case "reasoning_tokens":
		return x.endInt(x.usage.ReasoningTokens, x.hasUsage), true
	}
	return nil, false
}

// endInt is a number placeholder: n when known, else empty.
func (x *exchangeRecord) endInt(n int, known bool) any {
	if !known {
		return ""
	}
	return n
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

// route records the backend an attempt goes to and the pattern of the
// route that matched (the model label), and publishes them. Each attempt
// of a fallback chain calls it again.
func (x *exchangeRecord) route(b *Backend, pattern, clientModel, backendModel string) {
	if x.streamOpen {
		// An earlier attempt of a fallback chain opened the stream on its
		// backend's series; it moves to this one's (streaming reopens it).
		x.seriesOf().streamsOpen.Dec()
		x.streamOpen = false
	}
	x.series = nil // another backend's
	x.routed = true
	x.backend, x.model = b.name, pattern
	x.clientModel, x.backendModel = clientModel, backendModel
	x.upstreamKind = "" // what an earlier attempt met is not this one's
}

// streaming records whether the client asked for a stream, known once the
// request is decoded, just before the backend is asked.
func (x *exchangeRecord) streaming(stream bool) {
	x.stream, x.streamKnown = stream, true
	if stream && x.metrics != nil {
		x.streamOpen = true
		x.seriesOf().streamsOpen.Inc()
	}
}

// seriesOf is the metrics' children of the request's client, backend and
// route, looked up once per attempt: the lookup hashes four label values.
// x.metrics is not nil.
func (x *exchangeRecord) seriesOf() *routeSeries {
	if x.series == nil {
		x.series = x.metrics.seriesFor(x.seriesKey())
	}
	return x.series
}

// seriesKey is the key of the request's series.
func (x *exchangeRecord) seriesKey() seriesKey {
	return seriesKey{string(x.client), x.clientName, x.backend, x.model}
}

// end publishes the record. out is how the backend attempt that answered
// ended (attempt_outcome.go), nil when louter answered without asking a
// backend; dropped is what the translation left out; gone is whether the
// client went away.
func (x *exchangeRecord) end(out *attemptOutcome, dropped []string, gone bool) {
	now := time.Now()
	outcome := outcomeOK
	if out != nil {
		x.usage, x.hasUsage, x.stop = out.Usage, out.HasUsage, out.Stop
		if !out.FirstContent.IsZero() {
			x.ttft = out.FirstContent.Sub(x.start)
		}
		if x.upstreamKind == "" {
			x.upstreamKind = out.Failure
		}
	}
	usage, hasUsage, ttft := x.usage, x.hasUsage, x.ttft
	switch {
	case gone || (out != nil && out.ClientGone):
		outcome = outcomeCanceled
	case x.upstreamKind != "":
		outcome = outcomeUpstreamError
	case !x.routed || out == nil || x.status >= 400:
		outcome = outcomeRejected
	}
	x.ended, x.outcome, x.dropped = true, outcome, len(dropped)
	m := x.metrics
	if m == nil {
		return
	}
	client := string(x.client)
	s := x.seriesOf()
	s.request(m, x.seriesKey(), codeClass(x.status), outcome)
	s.duration.Observe(now.Sub(x.start).Seconds())
	if x.streamOpen {
		s.streamsOpen.Dec()
	}
	if ttft > 0 {
		s.ttft.Observe(ttft.Seconds())
	}
	if hasUsage {
		// In tokenKinds order; a zero count is not added.
		for i, n := range [...]int{usage.InputTokens, usage.OutputTokens, usage.CacheReadTokens, usage.CacheWriteTokens, usage.ReasoningTokens} {
			if n > 0 {
				s.tokens[i].Add(float64(n))
			}
		}
		if r, ok := cacheHitRatio(usage); ok {
			m.cacheHit.WithLabelValues(x.backend).Observe(r)
		}
	}
	if x.upstreamKind != "" {
		m.upstreamError.WithLabelValues(x.backend, x.upstreamKind).Inc()
	}
	for _, d := range dropped {
		m.dropped.WithLabelValues(client, x.backend, droppedLabel(d)).Inc()
	}
}

// MarshalLogObject writes the record's access-log fields: those known so
// far, which, when the access log is written, is all of them.
func (x *exchangeRecord) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("louter_client", string(x.client))
	if x.routed {
		enc.AddString("louter_backend", x.backend)
		enc.AddString("louter_model", x.clientModel)
		enc.AddString("louter_backend_model", x.backendModel)
	}
	if x.streamKnown {
		enc.AddBool("louter_stream", x.stream)
	}
	if !x.ended {
		return nil
	}
	enc.AddString("louter_outcome", x.outcome)
	if x.upstreamKind != "" {
		enc.AddString("louter_upstream_error", x.upstreamKind)
	}
	if x.dropped > 0 {
		enc.AddInt("louter_dropped", x.dropped)
	}
	if x.stop != "" {
		enc.AddString("louter_stop_reason", string(x.stop))
	}
	if x.ttft > 0 {
		enc.AddFloat64("louter_ttft", x.ttft.Seconds())
	}
	if x.hasUsage {
		enc.AddInt("louter_input_tokens", x.usage.InputTokens)
		enc.AddInt("louter_output_tokens", x.usage.OutputTokens)
		enc.AddInt("louter_cache_read_tokens", x.usage.CacheReadTokens)
		enc.AddInt("louter_cache_write_tokens", x.usage.CacheWriteTokens)
		enc.AddInt("louter_reasoning_tokens", x.usage.ReasoningTokens)
		if r, ok := cacheHitRatio(x.usage); ok {
			enc.AddFloat64("louter_cache_hit_ratio", r)
		}
	}
	return nil
}

// Interface guards
var (
	_ http.ResponseWriter     = (*exchangeRecord)(nil)
	_ zapcore.ObjectMarshaler = (*exchangeRecord)(nil)
)

// cacheHitRatio is the share of the input the backend read from its
// prompt cache, for louter_prefix_cache_hit_ratio and the log field
// louter_cache_hit_ratio; false when the usage reports no input.
func cacheHitRatio(u translate.Usage) (float64, bool) {
	if u.InputTokens <= 0 {
		return 0, false
	}
	return min(float64(u.CacheReadTokens)/float64(u.InputTokens), 1), true
}

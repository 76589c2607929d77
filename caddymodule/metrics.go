package caddymodule

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/louter/louter/translate"
)

// louterMetrics are louter's Prometheus collectors, registered in the
// registry of the Caddy config that provisions the handler, so they appear
// wherever Caddy serves its metrics (the admin endpoint's /metrics, the
// metrics handler). Labels are bounded: protocols, configured backend names
// and configured route patterns, client names from the key table (others
// as "other", see metricClientName), outcome and kind enums; never a raw
// client string.
type louterMetrics struct {
	requests      *prometheus.CounterVec   // client, client_name, backend, model, code_class, outcome
	tokens        *prometheus.CounterVec   // client, client_name, backend, model, kind
	ttft          *prometheus.HistogramVec // client, backend, model
	duration      *prometheus.HistogramVec // client, backend, model
	streamsOpen   *prometheus.GaugeVec     // client, backend
	upstreamError *prometheus.CounterVec   // backend, kind
	dropped       *prometheus.CounterVec   // client, backend, field
	refusals      *prometheus.CounterVec   // client_name, limit
	authRefusals  *prometheus.CounterVec   // client, reason
	fallbacks     *prometheus.CounterVec   // model, from, to, kind
	decisions     *prometheus.CounterVec   // model, backend, by
	spendM        spendMetrics             // metrics_spend.go
	cacheHit      *prometheus.HistogramVec // backend

	// series caches the children of one client, backend and model, so a
	// request looks its labels up once (seriesFor) rather than once per
	// metric: Prometheus hashes the label values on every lookup.
	series sync.Map // seriesKey → *routeSeries
}

type seriesKey struct{ client, clientName, backend, model string }

// routeSeries are the children of the metrics of one client protocol,
// backend and model route. The label sets are bounded, so the cache is.
type routeSeries struct {
	tokens      [len(tokenKinds)]prometheus.Counter
	ttft        prometheus.Observer
	duration    prometheus.Observer
	streamsOpen prometheus.Gauge
	// requests by code class and outcome, made on first use.
	requests sync.Map // [2]string → prometheus.Counter
}

// tokenKinds are the kind labels of louter_tokens_total, in routeSeries
// order.
var tokenKinds = [...]string{"input", "output", "cache_read", "cache_write", "reasoning"}

// seriesFor returns the cached children of a client protocol, client name,
// backend and model.
func (m *louterMetrics) seriesFor(k seriesKey) *routeSeries {
	client, backend, model := k.client, k.backend, k.model
	if s, ok := m.series.Load(k); ok {
		return s.(*routeSeries)
	}
	s := &routeSeries{
		ttft:        m.ttft.WithLabelValues(client, backend, model),
		duration:    m.duration.WithLabelValues(client, backend, model),
		streamsOpen: m.streamsOpen.WithLabelValues(client, backend),
	}
	for i, kind := range tokenKinds {
		s.tokens[i] = m.tokens.WithLabelValues(client, k.clientName, backend, model, kind)
	}
	actual, _ := m.series.LoadOrStore(k, s)
	return actual.(*routeSeries)
}

// request counts a request of the series.
func (s *routeSeries) request(m *louterMetrics, k seriesKey, class, outcome string) {
	ck := [2]string{class, outcome}
	c, ok := s.requests.Load(ck)
	if !ok {
		c, _ = s.requests.LoadOrStore(ck, m.requests.WithLabelValues(k.client, k.clientName, k.backend, k.model, class, outcome))
	}
	c.(prometheus.Counter).Inc()
}

// Label values of louter_requests_total's outcome.
const (
	outcomeOK            = "ok"             // the client got a complete answer
	outcomeRejected      = "rejected"       // louter refused the request before any backend was asked
	outcomeUpstreamError = "upstream_error" // the backend failed: an error status, no answer, a broken stream
	outcomeCanceled      = "canceled"       // the client went away before the answer was complete
)

// Kinds of louter_upstream_errors_total.
const (
	upstreamUnreachable      = "unreachable"        // no response: dial or transport failure
	upstreamFirstByteTimeout = "first_byte_timeout" // first_byte_timeout fired
	upstreamIdleTimeout      = "idle_timeout"       // stream_idle_timeout cut the response
	upstreamRateLimited      = "rate_limited"       // status 429
	upstreamOverloaded       = "overloaded"         // status 503 or 529
	upstreamStatus5xx        = "status_5xx"         // another 5xx status
	upstreamStatus4xx        = "status_4xx"         // another 4xx status (400, 401, 404, ...)
	upstreamStatusOther      = "status_other"       // a redirect or another status no API client can use
	upstreamBadResponse      = "bad_response"       // a response that could not be decoded or translated
	upstreamStreamCut        = "stream_cut"         // the backend's connection failed mid-response
	upstreamStreamError      = "stream_error"       // an error event, a malformed or an unfinished stream
)

// durationBuckets cover LLM answers: a cached short reply in tens of
// milliseconds up to a long agent turn of several minutes.
var durationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}

// ttftBuckets cover the time to the first token, which matters below a
// second and rarely exceeds a minute.
var ttftBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 60}

func newLouterMetrics() *louterMetrics {
	const ns = "louter"
	rl := []string{"client", "backend", "model"}
	return &louterMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "requests_total",
			Help: "Generation requests louter handled, by client protocol, client name, backend, model route, status class of the answer and outcome.",
		}, []string{"client", "client_name", "backend", "model", "code_class", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "tokens_total",
			Help: "Tokens the backends reported, by kind: input (all input, cached included), output, cache_read, cache_write, reasoning (part of output).",
		}, []string{"client", "client_name", "backend", "model", "kind"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "time_to_first_token_seconds",
			Help:    "Time from the request's arrival to the first content sent to a streaming client.",
			Buckets: ttftBuckets,
		}, rl),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "request_duration_seconds",
			Help:    "Time from the request's arrival to the end of louter's answer.",
			Buckets: durationBuckets,
		}, rl),
		streamsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "streams_open",
			Help: "Streaming requests in progress.",
		}, []string{"client", "backend"}),
		upstreamError: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "upstream_errors_total",
			Help: "Backend failures by kind: unreachable, first_byte_timeout, idle_timeout, rate_limited, overloaded, status_5xx, status_4xx, status_other, bad_response, stream_cut, stream_error.",
		}, []string{"backend", "kind"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "dropped_fields_total",
			Help: "Request fields left out in translation, by top-level field (\"unknown\" for fields louter does not know).",
		}, []string{"client", "backend", "field"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "limit_refusals_total",
			Help: "Requests a client or route limit refused, by client name and limit: requests, tokens, concurrent, budget, store_unavailable (the Redis store failed and on_error is closed).",
		}, []string{"client_name", "limit"}),
		authRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "auth_refusals_total",
			Help: "Requests the client key table refused, by client protocol and reason: missing_key, invalid_key, model_not_allowed.",
		}, []string{"client", "reason"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "fallbacks_total",
			Help: "Attempts of a fallback chain that failed before the client received content and left the request to the next backend, by model route, failed backend, next backend and upstream error kind.",
		}, []string{"model", "from", "to", "kind"}),
		cacheHit: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "prefix_cache_hit_ratio",
			Help:    "Share of a request's input tokens the backend read from its prompt (prefix) cache, per request with input usage: cache_read / input. A backend that reports no cached tokens shows 0.",
			Buckets: prometheus.LinearBuckets(0, 0.1, 11),
		}, []string{"backend"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "route_decisions_total",
			Help: "Requests of model routes with when conditions, by model route, chosen backend and what chose it: condition (a when line held) or route (none did).",
		}, []string{"model", "backend", "by"}),
	}
}

// fellBack counts an attempt of a fallback chain that failed and left the
// request to the next backend: a fallback, and the backend's upstream
// error. m may be nil (no metrics registry).
func (m *louterMetrics) fellBack(model, from, to, kind string) {
	if m == nil {
		return
	}
	m.fallbacks.WithLabelValues(model, from, to, kind).Inc()
	m.upstreamError.WithLabelValues(from, kind).Inc()
}

// routeDecision counts the backend a route with conditions chose; by is
// "condition" or "route". m may be nil.
func (m *louterMetrics) routeDecision(model, backend string, byCondition bool) {
	if m == nil {
		return
	}
	by := "route"
	if byCondition {
		by = "condition"
	}
	m.decisions.WithLabelValues(model, backend, by).Inc()
}

// metricsRegistration serializes registering: handlers of one config are
// provisioned one after the other, but nothing promises it.
var metricsRegistration sync.Mutex

// registerMetrics registers louter's collectors in reg and returns the ones
// to use. Every louter handler of a config shares one set: the first
// registers its collectors, the others find them already registered and
// take those. A new config comes with a new registry, so a reload starts
// afresh, as Caddy's own http metrics do, and nothing is kept per registry.
func registerMetrics(reg prometheus.Registerer) (*louterMetrics, error) {
	metricsRegistration.Lock()
	defer metricsRegistration.Unlock()
	m := newLouterMetrics()
	var err error
	m.requests, err = register(reg, m.requests)
	if err != nil {
		return nil, err
	}
	if m.tokens, err = register(reg, m.tokens); err != nil {
		return nil, err
	}
	if m.ttft, err = register(reg, m.ttft); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.streamsOpen, err = register(reg, m.streamsOpen); err != nil {
		return nil, err
	}
	if m.upstreamError, err = register(reg, m.upstreamError); err != nil {
		return nil, err
	}
	if m.dropped, err = register(reg, m.dropped); err != nil {
		return nil, err
	}
	if m.refusals, err = register(reg, m.refusals); err != nil {
		return nil, err
	}
	if m.authRefusals, err = register(reg, m.authRefusals); err != nil {
		return nil, err
	}
	if m.fallbacks, err = register(reg, m.fallbacks); err != nil {
		return nil, err
	}
	if m.decisions, err = register(reg, m.decisions); err != nil {
		return nil, err
	}
	if err := m.registerSpend(reg); err != nil {
		return nil, err
	}
	if m.cacheHit, err = register(reg, m.cacheHit); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector of the same description
// already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// codeClass is the status class label of a status: "2xx", "4xx", ...
func codeClass(status int) string {
	switch {
	case status >= 500:
		return "5xx"
	case status >= 400:
		return "4xx"
	case status >= 300:
		return "3xx"
	case status >= 200:
		return "2xx"
	}
	return "none" // nothing was written: the client went away first
}

// statusKind is the upstream error kind of a backend's error status.
func statusKind(status int) string {
	switch {
	case status == 429:
		return upstreamRateLimited
	case status == 503 || status == 529:
		return upstreamOverloaded
	case status >= 500:
		return upstreamStatus5xx
	case status >= 400:
		return upstreamStatus4xx
	}
	return upstreamStatusOther
}

// maxDroppedLabels bounds the field label of louter_dropped_fields_total.
// The labels are top-level field names the codecs name: a member the
// client named that its protocol does not define is recorded with
// translate.DropUnknown and counted as "unknown". The bound is a backstop
// should a codec ever name a dropped field after the client's input: past
// this many distinct names the rest are counted as "other".
const maxDroppedLabels = 64

var droppedLabels struct {
	seen sync.Map // label → struct{}
	n    atomic.Int32
}

// droppedLabel is the metric label of an ir.Dropped entry ("field: reason"):
// the top-level field, or "unknown" for a field the decoder did not know.
// A field that is not valid UTF-8, which Prometheus refuses with a panic,
// is "other" (the request scan refuses such bodies before any decoder).
func droppedLabel(entry string) string {
	field, reason, _ := strings.Cut(entry, ": ")
	if reason == translate.DropUnknown {
		return "unknown"
	}
	field, _, _ = strings.Cut(field, ".")
	if _, ok := droppedLabels.seen.Load(field); ok {
		return field
	}
	if !utf8.ValidString(field) {
		return "other"
	}
	if droppedLabels.n.Add(1) > maxDroppedLabels {
		droppedLabels.n.Add(-1)
		return "other"
	}
	if _, loaded := droppedLabels.seen.LoadOrStore(field, struct{}{}); loaded {
		droppedLabels.n.Add(-1)
	}
	return field
}

// limitStoreUnavailable is louter_limit_refusals_total's limit label of a
// request refused because the limit store failed (on_error closed).
const limitStoreUnavailable = "store_unavailable"

// metricClientName is the client_name label of a request's client: empty
// without a key table or client, the configured name of a client in the
// key table, and "other" for an identity another module established that
// names no configured client (free-form, so not a label of its own).
func metricClientName(a *access, c *clientEntry) string {
	if c == nil {
		return ""
	}
	if c.managed || a != nil && a.byName[c.name] == c {
		return c.name // a name the operator gave, in the config or the keys API
	}
	return "other"
}

package caddymodule

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/louter/louter/limits"
)

// The spend counters are the ledger's lines as Prometheus counters: what
// this instance served, by client name, backend and model route, so a
// dashboard sums spend across instances with sum(rate(...)). The labels
// are bounded as the ledger's keys are: client_name is a name from the key
// table (config or managed keys; another module's identity counts as
// "other"), backend a configured backend, model the pattern of the
// configured route that served the request. The shared, persistent view is
// the admin read (GET /louter/usage); these counters start at zero with
// each config, as Caddy's own do.

// spendMetrics are the louter_spend_* collectors.
type spendMetrics struct {
	usd      *prometheus.CounterVec // client_name, backend, model
	tokens   *prometheus.CounterVec // client_name, backend, model, kind
	requests *prometheus.CounterVec // client_name, backend, model
	// series caches the children of a label set, so a request hashes its
	// labels once, not once per counter; the label sets are bounded, so
	// it is.
	series *sync.Map // [3]string → *spendSeries
}

// spendSeries are the counters of one client, backend and model.
type spendSeries struct {
	usd, requests prometheus.Counter
	tokens        [4]prometheus.Counter // spendKinds order
}

// spendKinds are louter_spend_tokens_total's kind labels.
var spendKinds = [4]string{"input", "output", "cache_read", "cache_write"}

func newSpendMetrics() spendMetrics {
	const ns = "louter"
	l := []string{"client_name", "backend", "model"}
	return spendMetrics{
		usd: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "spend_usd_total",
			Help: "What clients' requests cost, in US dollars at the configured prices, by client name, backend and model route.",
		}, l),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "spend_tokens_total",
			Help: "Tokens clients' requests were billed for, by client name, backend, model route and kind: input (all input, cached included), output, cache_read, cache_write.",
		}, append(l, "kind")),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "spend_requests_total",
			Help: "Clients' requests that were billed (an answer began), by client name, backend and model route.",
		}, l),
	}
}

// registerSpend registers m's spend collectors in reg (or takes those
// already there).
func (m *louterMetrics) registerSpend(reg prometheus.Registerer) error {
	s := newSpendMetrics()
	var err error
	if s.usd, err = register(reg, s.usd); err != nil {
		return err
	}
	if s.tokens, err = register(reg, s.tokens); err != nil {
		return err
	}
	if s.requests, err = register(reg, s.requests); err != nil {
		return err
	}
	s.series = new(sync.Map)
	m.spendM = s
	return nil
}

// spend counts one billed request. m may be nil.
func (m *louterMetrics) spend(clientName, backend, model string, u limits.Usage, costMicro int64) {
	if m == nil || m.spendM.usd == nil {
		return
	}
	if clientName == "" {
		clientName = "other"
	}
	if backend == "" {
		backend = "other"
	}
	s := &m.spendM
	k := [3]string{clientName, backend, model}
	v, ok := s.series.Load(k)
	if !ok {
		ss := &spendSeries{usd: s.usd.WithLabelValues(k[:]...), requests: s.requests.WithLabelValues(k[:]...)}
		for i, kind := range spendKinds {
			ss.tokens[i] = s.tokens.WithLabelValues(clientName, backend, model, kind)
		}
		v, _ = s.series.LoadOrStore(k, ss)
	}
	ss := v.(*spendSeries)
	ss.requests.Inc()
	ss.usd.Add(float64(max(costMicro, 0)) / 1e6)
	for i, n := range [4]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite} {
		if n > 0 {
			ss.tokens[i].Add(float64(n))
		}
	}
}

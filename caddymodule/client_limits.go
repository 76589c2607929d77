package caddymodule

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// This file applies the limits of clients and routes to chat requests:
// admit before the backend is called (on an estimate of the input),
// settle after the response with the usage the backend reported, and
// record the usage in the ledger (ledger_admin.go serves it).

// counters are the limiter's counters and the ledger, kept in a
// caddy.UsagePool so they survive config reloads: a reload does not give
// every client a fresh window or clear the ledger.
type counters struct {
	limiter     *limits.Limiter
	ledger      *limits.Ledger
	storeErrors atomic.Int64
}

// Destruct implements caddy.Destructor.
func (*counters) Destruct() error { return nil }

// countersPool holds the process's counters under countersKey.
var countersPool = caddy.NewUsagePool()

const countersKey = "louter.counters"

// sharedCounters returns the process's limiter and ledger, and the
// function that releases this handler's hold on them (its Cleanup calls
// it: a config being loaded holds them before the old one lets go, so a
// reload keeps them).
func sharedCounters() (*limits.Limiter, *limits.Ledger, *atomic.Int64, func()) {
	v, _, _ := countersPool.LoadOrNew(countersKey, func() (caddy.Destructor, error) {
		return &counters{
			limiter: &limits.Limiter{Store: limits.NewMemoryStore(nil)},
			ledger:  limits.NewLedger(time.Now()),
		}, nil
	})
	c := v.(*counters)
	return c.limiter, c.ledger, &c.storeErrors, func() { _, _ = countersPool.Delete(countersKey) }
}

// grant is an admitted request's hold on its limits.
type grant struct {
	a            *access
	logger       *zap.Logger
	metrics      *louterMetrics // nil: none
	client       *clientEntry
	route        string // the route's pattern: the ledger's key (the client's model is not: clients choose it)
	model        string // the client's
	backendModel string
	estimate     int64
	holds        []*limits.Reservation
	alerts       []int // budget_alert percentage of each hold; 0: none
}

// admitAttempt applies the client's and route's limits once per client
// request, at its first attempt (ServeHTTP settles them with the answering
// one), and has the answer counted when its usage counts (usage_settle.go).
// A refused request has been answered: false, and q.rw is cleared (no
// backend was asked).
func (l *Louter) admitAttempt(w http.ResponseWriter, r *http.Request, q *chatRequest, a *attempt) bool {
	rw := a.rw
	if !q.admitted {
		g, ok := l.admit(w, r, q.ep.protocol, q.route, q.model, a.backendModel, a.body, rw)
		if !ok {
			q.rw = nil
			return false
		}
		q.grant, q.admitted = g, true
	}
	// What a request whose usage counts answered is counted as it goes,
	// for when the backend reports no usage.
	rw.count.on = l.access.countsUsage(clientOf(r), q.route)
	return true
}

// admit applies the client's model list and the client's and route's
// limits to a chat request. A refused request has been answered (nil
// grant, false). The estimate is the translated request's quick token
// estimate, or a quarter of a passthrough body's bytes.
func (l *Louter) admit(w http.ResponseWriter, r *http.Request, p translate.Protocol, route *ModelRoute, model, backendModel string, body []byte, rw *responseWriter) (*grant, bool) {
	a := l.access
	if a == nil {
		return nil, true
	}
	c := clientOf(r)
	if c != nil && !c.allows(model) {
		l.countAuthRefusal(p, authModel)
		writeAuthError(w, p, authModel, model)
		return nil, false
	}
	g := &grant{a: a, logger: l.logger, metrics: l.metrics, client: c, route: route.Match, model: model, backendModel: backendModel}
	routePolicy, routeOn := a.routeLimit[route]
	if c == nil && !routeOn {
		return g, true // nothing counts, nothing is recorded
	}
	// The estimate is also what the ledger records of an answer whose
	// backend reported no usage (usage_settle.go).
	if rw.passthrough || rw.clientReq == nil {
		g.estimate = int64(len(body) / 4)
	} else {
		g.estimate = int64(tokencount.Quick(rw.clientReq, rowOf(route.backend.Protocol).tokenFraming))
	}
	if (c == nil || !c.policy.On() && c.modelPolicy(model) == nil) && !routeOn {
		return g, true // nothing to count; the ledger still records
	}
	ctx := r.Context()
	type scope struct {
		name   string
		policy limits.Policy
		alert  int
	}
	var scopes [3]scope
	n := 0
	if c != nil && c.policy.On() {
		scopes[n] = scope{"client " + c.name, c.policy, c.alert}
		n++
	}
	if mp := c.modelPolicy(model); mp != nil {
		// Counted apart from the client's own: "client NAME model GLOB".
		scopes[n] = scope{"client " + c.name + " model " + mp.match, mp.policy, mp.alert}
		n++
	}
	if routeOn {
		scopes[n] = scope{"route " + route.Match, routePolicy, a.routeAlert[route]}
		n++
	}
	for _, s := range scopes[:n] {
		res, ref, err := a.limiter.Reserve(ctx, s.name, s.policy, g.estimate)
		if err != nil {
			// The memory store does not fail; Redis may, and then the
			// configured degraded mode decides. The breaker in front of
			// Redis logs its going down and coming back once each
			// (client_redis.go); per request it is detail.
			a.storeErrors.Add(1)
			if a.failClosed {
				l.logger.Debug("the limit store failed; refusing the request (on_error closed)", zap.String("scope", s.name), zap.Error(err))
				g.cancel(context.WithoutCancel(ctx))
				l.countRefusal(c, limitStoreUnavailable)
				w.Header().Set("Retry-After", "1")
				_ = httpx.WriteError(w, mustCodec(p), translate.NewError(http.StatusServiceUnavailable, "louter: the rate limit store is unavailable"))
				return nil, false
			}
			l.logger.Debug("the limit store failed; admitting the request uncounted (on_error open)", zap.String("scope", s.name), zap.Error(err))
			continue
		}
		if ref != nil {
			g.cancel(context.WithoutCancel(ctx))
			if c := l.logger.Check(zap.DebugLevel, "limit reached"); c != nil {
				c.Write(zap.String("scope", s.name), zap.String("limit", string(ref.Kind)))
			}
			l.countRefusal(c, string(ref.Kind))
			writeLimitError(w, p, ref)
			return nil, false
		}
		g.holds = append(g.holds, res)
		g.alerts = append(g.alerts, s.alert)
	}
	return g, true
}

// settle settles the request's limits once it is over: with the answer of
// the attempt that answered, or, when no backend was asked, by giving back
// what admit took.
func (q *chatRequest) settle(ctx context.Context) {
	switch {
	case q.grant == nil:
	case q.outcome() == nil:
		q.grant.cancel(context.WithoutCancel(ctx))
	default:
		q.grant.settle(ctx, q.outcome())
	}
}

func (g *grant) cancel(ctx context.Context) {
	for _, h := range g.holds {
		h.Cancel(ctx)
	}
}

// settle counts what the request used, once the response has ended with
// out (attempt_outcome.go): the usage the backend reported, or an estimate
// when a response began but reported none (usage_settle.go); nothing when
// the backend was not reached or refused.
func (g *grant) settle(ctx context.Context, out *attemptOutcome) {
	if g == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	u, estimated := out.billedUsage(g.estimate)
	if estimated {
		u.Estimated = true
		if c := g.logger.Check(zap.DebugLevel, "usage estimated: the backend reported none"); c != nil {
			c.Write(zap.String("backend", out.Backend), zap.String("model", g.model),
				zap.Int64("input_tokens", u.Input), zap.Int64("output_tokens", u.Output), zap.Bool("stream_failed", out.StreamFailed))
		}
	}
	tokens := u.Tokens()
	cost := int64(0)
	if price, ok := g.a.price(g.backendModel, g.model); ok {
		cost = price.Cost(u)
	}
	for i, h := range g.holds {
		if err := h.Settle(ctx, tokens, cost); err != nil {
			g.a.storeErrors.Add(1)
			g.logger.Debug("settling the request's limits failed", zap.Error(err))
			continue
		}
		if g.alerts[i] > 0 && cost > 0 {
			g.a.alerts.check(ctx, g.client, h, g.alerts[i]) // budget_alert.go
		}
	}
	if g.client != nil && out.Mode != answerNone {
		backend := out.Backend
		g.a.ledger.Record(limits.LedgerKey{Day: limits.Day(time.Now()), Client: g.client.name, Model: g.route, Backend: backend}, u, cost)
		g.metrics.spend(metricClientName(g.a, g.client), backend, g.route, u, cost) // metrics_spend.go
	}
}

// modelPolicy returns the client's limits for model (the name it asked
// for), or nil. c may be nil.
func (c *clientEntry) modelPolicy(model string) *modelPolicy {
	if c == nil {
		return nil
	}
	for i := range c.modelLimits {
		if globMatch(c.modelLimits[i].match, model) {
			return &c.modelLimits[i]
		}
	}
	return nil
}

// countsUsage reports whether the usage of a request to route is counted:
// by a limit of the route, or because a client made it — the ledger
// records every client's usage and cost, limited or not.
func (a *access) countsUsage(c *clientEntry, route *ModelRoute) bool {
	if a == nil {
		return false
	}
	_, routeOn := a.routeLimit[route]
	return c != nil || routeOn
}

// price returns the first price matching the backend's model, or else
// the client's.
func (a *access) price(models ...string) (limits.Price, bool) {
	for _, m := range models {
		for _, p := range a.prices {
			if globMatch(p.Match, m) {
				return limits.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}, true
			}
		}
	}
	return limits.Price{}, false
}

// mustCodec is the codec of a client protocol louter recognised.
func mustCodec(p translate.Protocol) translate.Codec {
	c, _ := translate.Lookup(p)
	return c
}

// countRefusal counts a request a limit refused in
// louter_limit_refusals_total.
func (l *Louter) countRefusal(c *clientEntry, limit string) {
	if l.metrics != nil {
		l.metrics.refusals.WithLabelValues(metricClientName(l.access, c), limit).Inc()
	}
}

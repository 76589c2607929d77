package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// The bounds on token counting. A counting call costs louter what a chat
// call costs a backend: it holds the body, its decoded form and the
// tokenizer's work, several times the body's size, for seconds of CPU on a
// large one (four concurrent 32 MB calls took half a GiB of heap and
// seconds each). So counting has its own body limit, lower than
// max_request_body's; a fixed number of calls at once, the others waiting
// briefly for a turn; and the client's request rate and concurrency
// limits, as a chat call has.

// defaultMaxCountBody bounds a counting request's body when max_count_body
// is not set: a long agent conversation with a few images fits.
const defaultMaxCountBody = 8 << 20

// minCountConcurrency is the least default number of counting calls at
// once, on a machine with fewer CPUs: a counting call asked of a backend
// mostly waits.
const minCountConcurrency = 4

// defaultCountWait is how long a counting call waits for a turn before it
// is answered 503 with Retry-After.
const defaultCountWait = 2 * time.Second

// provisionCounting sets up the counting bounds' defaults and slots.
func (l *Louter) provisionCounting() {
	l.maxCountBody = l.MaxCountBody
	if l.maxCountBody == 0 {
		l.maxCountBody = min(defaultMaxCountBody, l.MaxRequestBody)
	}
	n := l.CountConcurrency
	if n == 0 {
		n = max(runtime.GOMAXPROCS(0), minCountConcurrency)
	}
	if n > 0 {
		l.countSlots = make(chan struct{}, n)
	}
	if l.countWait == 0 {
		l.countWait = defaultCountWait
	}
}

// validateCounting checks the counting bounds.
func (l *Louter) validateCounting() []error {
	var errs []error
	if l.MaxCountBody < 0 {
		errs = append(errs, fmt.Errorf("max_count_body must not be negative"))
	}
	return errs
}

// countTurn waits for one of the counting slots, at most countWait. It
// returns the function that gives the slot back, or, having answered 503,
// false.
func (l *Louter) countTurn(w http.ResponseWriter, r *http.Request, client translate.Codec) (func(), bool) {
	if l.countSlots == nil {
		return func() {}, true
	}
	release := func() { <-l.countSlots }
	select {
	case l.countSlots <- struct{}{}:
		return release, true
	default:
	}
	t := time.NewTimer(l.countWait)
	defer t.Stop()
	select {
	case l.countSlots <- struct{}{}:
		return release, true
	case <-r.Context().Done():
		return nil, false // the client is gone: nobody reads an answer
	case <-t.C:
	}
	if c := l.logger.Check(zap.DebugLevel, "token counting is busy; refusing the call"); c != nil {
		c.Write(zap.Int("count_concurrency", cap(l.countSlots)))
	}
	w.Header().Set("Retry-After", "1")
	_ = l.reject(w, client, translate.NewError(http.StatusServiceUnavailable,
		fmt.Sprintf("louter: %d token counting calls are already in progress; retry shortly", cap(l.countSlots))))
	return nil, false
}

// admitCount applies the client's request rate and concurrency limits to
// a counting call, in the same counters as its chat calls: the call is a
// request, but uses no tokens and costs nothing, so the token and budget
// limits do not apply. It returns the function that ends the call's hold,
// or, having answered the refusal, false.
func (l *Louter) admitCount(w http.ResponseWriter, r *http.Request, p translate.Protocol) (func(), bool) {
	a := l.access
	c := clientOf(r)
	if a == nil || c == nil {
		return func() {}, true
	}
	policy := limits.Policy{Requests: c.policy.Requests, Concurrent: c.policy.Concurrent}
	if !policy.On() {
		return func() {}, true
	}
	ctx := r.Context()
	res, ref, err := a.limiter.Reserve(ctx, "client "+c.name, policy, 0)
	switch {
	case err != nil:
		a.storeErrors.Add(1)
		if a.failClosed {
			l.logger.Debug("the limit store failed; refusing the count (on_error closed)", zap.String("client", c.name), zap.Error(err))
			l.countRefusal(c, limitStoreUnavailable)
			w.Header().Set("Retry-After", "1")
			_ = httpx.WriteError(w, mustCodec(p), translate.NewError(http.StatusServiceUnavailable, "louter: the rate limit store is unavailable"))
			return nil, false
		}
		l.logger.Debug("the limit store failed; admitting the count uncounted (on_error open)", zap.String("client", c.name), zap.Error(err))
		return func() {}, true
	case ref != nil:
		if ce := l.logger.Check(zap.DebugLevel, "limit reached"); ce != nil {
			ce.Write(zap.String("scope", ref.Scope), zap.String("limit", string(ref.Kind)))
		}
		l.countRefusal(c, string(ref.Kind))
		writeLimitError(w, p, ref)
		return nil, false
	}
	return func() {
		if err := res.Settle(context.WithoutCancel(ctx), 0, 0); err != nil {
			a.storeErrors.Add(1)
			l.logger.Debug("settling the count's limits failed", zap.Error(err))
		}
	}, true
}

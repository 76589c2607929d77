package limits

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Kind names the limit a request met.
type Kind string

// The limits a policy sets.
const (
	KindRequests   Kind = "requests"
	KindTokens     Kind = "tokens"
	KindConcurrent Kind = "concurrent"
	KindBudget     Kind = "budget"
)

// Limiter applies policies to scopes, keeping its counters in a Store.
// Windows are fixed: a window of length W covers [k·W, (k+1)·W) since the
// Unix epoch, the same for every instance sharing the store.
type Limiter struct {
	Store Store
	Clock Clock // nil: the wall clock
}

// Window is the state of one windowed limit after a request was admitted.
type Window struct {
	Limit, Remaining int64
	Reset            time.Time // when the window ends
}

// Refusal says which limit a request met and when to try again.
type Refusal struct {
	Scope string
	Kind  Kind
	Window
	// RetryAfter is how long until the request could pass: the rest of
	// the window, or a second for a concurrency limit.
	RetryAfter time.Duration
	// TooLarge is set when the request alone asks for more tokens than
	// the window holds, so waiting will not help.
	TooLarge bool
}

func (r *Refusal) Error() string {
	switch {
	case r.Kind == KindConcurrent:
		return fmt.Sprintf("%s: %d requests already in progress", r.Scope, r.Limit)
	case r.TooLarge:
		return fmt.Sprintf("%s: the request's estimated tokens exceed the limit of %d per window", r.Scope, r.Limit)
	case r.Kind == KindBudget:
		return fmt.Sprintf("%s: the spend budget of $%.2f is used up until %s", r.Scope, float64(r.Limit)/1e6, r.Reset.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s: %s limit of %d reached, resets at %s", r.Scope, r.Kind, r.Limit, r.Reset.UTC().Format(time.RFC3339))
}

// Reservation is what an admitted request holds until it settles: its
// request count, its estimated tokens, a concurrency slot.
type Reservation struct {
	l        *Limiter
	scope    string
	policy   Policy
	estimate int64
	// The counters taken, for settling or cancelling; "" when not taken.
	reqKey, tokKey, concKey, budgetKey string
	reqTTL, tokTTL, budgetTTL          time.Duration
	// Requests and Tokens are the windows after admission, for the
	// rate-limit headers of the response.
	Requests, Tokens Window

	once sync.Once
}

func (l *Limiter) now() time.Time {
	if l.Clock == nil {
		return time.Now()
	}
	return l.Clock.Now()
}

// windowKey is the counter of scope's kind in the window of length w at
// now, with the window's end and the counter's lifetime.
func windowKey(scope string, k Kind, w time.Duration, now time.Time) (string, time.Time, time.Duration) {
	idx := now.UnixNano() / int64(w)
	end := time.Unix(0, (idx+1)*int64(w))
	return scope + ":" + string(k) + ":" + strconv.FormatInt(int64(w/time.Second), 10) + ":" + strconv.FormatInt(idx, 10), end, end.Sub(now)
}

// Reserve admits one request of scope under p, which is estimated to use
// estimate tokens, or refuses it. Nothing is left counted after a refusal
// or an error. An admitted request must be settled (or cancelled) once.
func (l *Limiter) Reserve(ctx context.Context, scope string, p Policy, estimate int64) (*Reservation, *Refusal, error) {
	res := &Reservation{l: l, scope: scope, policy: p, estimate: max(estimate, 1)}
	ref, err := l.reserve(ctx, res)
	if ref != nil || err != nil {
		res.undo(context.WithoutCancel(ctx))
		return nil, ref, err
	}
	return res, nil, nil
}

// reserve takes res's counters one by one, stopping at the first refusal.
func (l *Limiter) reserve(ctx context.Context, res *Reservation) (*Refusal, error) {
	now, p, scope := l.now(), res.policy, res.scope
	if p.Budget.On() {
		key, end, ttl := windowKey(scope, KindBudget, p.Budget.Window, now)
		spent, err := l.Store.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		if spent >= p.Budget.Limit {
			return &Refusal{Scope: scope, Kind: KindBudget, Window: Window{Limit: p.Budget.Limit, Reset: end}, RetryAfter: end.Sub(now)}, nil
		}
		res.budgetKey, res.budgetTTL = key, ttl
	}
	if p.Requests.On() {
		key, end, ttl := windowKey(scope, KindRequests, p.Requests.Window, now)
		v, ok, err := l.Store.Take(ctx, key, 1, p.Requests.Limit, ttl)
		if err != nil {
			return nil, err
		}
		res.Requests = Window{Limit: p.Requests.Limit, Remaining: max(p.Requests.Limit-v, 0), Reset: end}
		if !ok {
			return &Refusal{Scope: scope, Kind: KindRequests, Window: res.Requests, RetryAfter: end.Sub(now)}, nil
		}
		res.reqKey, res.reqTTL = key, ttl
	}
	if p.Tokens.On() {
		key, end, ttl := windowKey(scope, KindTokens, p.Tokens.Window, now)
		v, ok, err := l.Store.Take(ctx, key, res.estimate, p.Tokens.Limit, ttl)
		if err != nil {
			return nil, err
		}
		res.Tokens = Window{Limit: p.Tokens.Limit, Remaining: max(p.Tokens.Limit-v, 0), Reset: end}
		if !ok {
			return &Refusal{Scope: scope, Kind: KindTokens, Window: res.Tokens, RetryAfter: end.Sub(now), TooLarge: res.estimate > p.Tokens.Limit}, nil
		}
		res.tokKey, res.tokTTL = key, ttl
	}
	if p.Concurrent > 0 {
		key := scope + ":" + string(KindConcurrent)
		v, ok, err := l.Store.Take(ctx, key, 1, p.Concurrent, 0)
		if err != nil {
			return nil, err
		}
		if !ok {
			return &Refusal{Scope: scope, Kind: KindConcurrent, Window: Window{Limit: p.Concurrent, Remaining: max(p.Concurrent-v, 0)}, RetryAfter: time.Second}, nil
		}
		res.concKey = key
	}
	return nil, nil
}

// undo gives back what a refused reservation took.
func (r *Reservation) undo(ctx context.Context) {
	if r.reqKey != "" {
		_, _ = r.l.Store.Add(ctx, r.reqKey, -1, r.reqTTL)
	}
	if r.tokKey != "" {
		_, _ = r.l.Store.Add(ctx, r.tokKey, -r.estimate, r.tokTTL)
	}
	if r.concKey != "" {
		_, _ = r.l.Store.Add(ctx, r.concKey, -1, 0)
	}
}

// Settle counts what the request really used: its tokens replace the
// estimate in the window it was admitted in (a stream that used more than
// estimated is counted in full), its cost goes to the budget, and its
// concurrency slot is freed. Calls after the first do nothing.
func (r *Reservation) Settle(ctx context.Context, tokens, costMicro int64) error {
	if r == nil {
		return nil
	}
	var err error
	r.once.Do(func() {
		if r.tokKey != "" && tokens != r.estimate {
			_, err = r.l.Store.Add(ctx, r.tokKey, tokens-r.estimate, r.tokTTL)
		}
		if r.budgetKey != "" && costMicro > 0 {
			if _, e := r.l.Store.Add(ctx, r.budgetKey, costMicro, r.budgetTTL); err == nil {
				err = e
			}
		}
		if r.concKey != "" {
			if _, e := r.l.Store.Add(ctx, r.concKey, -1, 0); err == nil {
				err = e
			}
		}
	})
	return err
}

// Cancel gives back everything the reservation took, for a request that
// was not sent after all (a later scope refused it).
func (r *Reservation) Cancel(ctx context.Context) {
	if r == nil {
		return
	}
	r.once.Do(func() { r.undo(ctx) })
}

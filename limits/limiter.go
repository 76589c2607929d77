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
	// Lease is how long a concurrency slot in a Leaser store (Redis)
	// stays taken unless its request renews it; 0 means DefaultLease.
	// The memory store needs none: a process that dies takes its
	// counters with it.
	Lease time.Duration
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
		return fmt.Sprintf("%s: the spend budget of %s is used up until %s", r.Scope, FormatUSD(r.Limit), r.Reset.UTC().Format(time.RFC3339))
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
	// slot is the leased concurrency slot's id in the set concKey (a
	// Leaser store), renewed every third of lease until stop closes.
	slot  string
	lease time.Duration
	stop  chan struct{}
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
	// The scope in braces is a Redis Cluster hash tag: a reservation's
	// counters live on one node, so one script can take them all.
	return "{" + scope + "}:" + string(k) + ":" + strconv.FormatInt(int64(w/time.Second), 10) + ":" + strconv.FormatInt(idx, 10), end, end.Sub(now)
}

// Reserve admits one request of scope under p, which is estimated to use
// estimate tokens, or refuses it. Its counters are taken together: on a
// Batcher store (Redis) in one atomic step, else one by one. Nothing is
// left counted after a refusal or an error. An admitted request must be
// settled (or cancelled) once; until then, or until ctx (the request's)
// is done, a leased concurrency slot is renewed in the background.
func (l *Limiter) Reserve(ctx context.Context, scope string, p Policy, estimate int64) (*Reservation, *Refusal, error) {
	res := &Reservation{l: l, scope: scope, policy: p, estimate: max(estimate, 1)}
	ref, err := l.reserve(ctx, res)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	if res.slot != "" {
		res.holdSlot(ctx, l.Store.(Leaser))
	}
	return res, nil, nil
}

// Step is one counter a reservation takes: N units of Key if the sum
// stays at or below Limit, or, with N = 0, a check that Key is below
// Limit (a budget, which is paid after the request). With Slot set (a
// Leaser store) it is a leased concurrency slot instead: Key is a set of
// slots, N is 1, Slot joins the set if it then holds at most Limit live
// ones, and TTL is the lease.
type Step struct {
	Key      string
	N, Limit int64
	TTL      time.Duration
	Slot     string
}

// Delta is one counter a settlement changes; with Slot set, the leased
// slot it removes from the set Key.
type Delta struct {
	Key  string
	N    int64
	TTL  time.Duration
	Slot string
}

// Batcher is a Store that takes several counters in one atomic step and
// changes several at once: one round trip for a networked store.
type Batcher interface {
	// TakeAll checks every step, then, if all pass, takes them. It
	// returns each counter's value (after taking, when admitted) and the
	// index of the first step refused, or -1.
	TakeAll(ctx context.Context, steps []Step) (values []int64, refused int, err error)
	// AddAll applies every delta.
	AddAll(ctx context.Context, deltas []Delta) error
}

// takeAll runs steps on the store: in one call on a Batcher, else one by
// one, giving back what was taken when a step is refused.
func (l *Limiter) takeAll(ctx context.Context, steps []Step) ([]int64, int, error) {
	if b, ok := l.Store.(Batcher); ok {
		return b.TakeAll(ctx, steps)
	}
	values := make([]int64, len(steps))
	for i, s := range steps {
		var ok bool
		var err error
		if s.N == 0 {
			values[i], err = l.Store.Get(ctx, s.Key)
			ok = values[i] < s.Limit
		} else {
			values[i], ok, err = l.Store.Take(ctx, s.Key, s.N, s.Limit, s.TTL)
		}
		if err != nil || !ok {
			var undo []Delta
			for _, t := range steps[:i] {
				if t.N > 0 {
					undo = append(undo, Delta{Key: t.Key, N: -t.N, TTL: t.TTL})
				}
			}
			_ = l.addAll(context.WithoutCancel(ctx), undo)
			if err != nil {
				return nil, 0, err
			}
			return values, i, nil
		}
	}
	return values, -1, nil
}

// addAll applies deltas: in one call on a Batcher, else one by one.
func (l *Limiter) addAll(ctx context.Context, deltas []Delta) error {
	if len(deltas) == 0 {
		return nil
	}
	if b, ok := l.Store.(Batcher); ok {
		return b.AddAll(ctx, deltas)
	}
	var first error
	for _, d := range deltas {
		if _, err := l.Store.Add(ctx, d.Key, d.N, d.TTL); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// reserve takes res's counters in one step; a refusal takes none.
func (l *Limiter) reserve(ctx context.Context, res *Reservation) (*Refusal, error) {
	now, p, scope := l.now(), res.policy, res.scope
	var steps [4]Step
	var kinds [4]Kind
	var ends [4]time.Time
	n := 0
	add := func(k Kind, s Step, end time.Time) {
		steps[n], kinds[n], ends[n] = s, k, end
		n++
	}
	if p.Budget.On() {
		key, end, ttl := windowKey(scope, KindBudget, p.Budget.Window, now)
		add(KindBudget, Step{Key: key, Limit: p.Budget.Limit, TTL: ttl}, end)
	}
	if p.Requests.On() {
		key, end, ttl := windowKey(scope, KindRequests, p.Requests.Window, now)
		add(KindRequests, Step{Key: key, N: 1, Limit: p.Requests.Limit, TTL: ttl}, end)
	}
	if p.Tokens.On() {
		key, end, ttl := windowKey(scope, KindTokens, p.Tokens.Window, now)
		add(KindTokens, Step{Key: key, N: res.estimate, Limit: p.Tokens.Limit, TTL: ttl}, end)
	}
	if p.Concurrent > 0 {
		st := Step{Key: "{" + scope + "}:" + string(KindConcurrent), N: 1, Limit: p.Concurrent}
		if _, ok := l.Store.(Leaser); ok {
			// Its own key: a set of leases, not the counter earlier
			// versions kept under the plain name.
			st.Key += ":leases"
			st.Slot, st.TTL = newSlotID(), l.lease()
		}
		add(KindConcurrent, st, time.Time{})
	}
	if n == 0 {
		return nil, nil
	}
	values, refused, err := l.takeAll(ctx, steps[:n])
	if err != nil {
		return nil, err
	}
	for i := range n {
		st, v := steps[i], values[i]
		win := Window{Limit: st.Limit, Remaining: max(st.Limit-v, 0), Reset: ends[i]}
		switch kinds[i] {
		case KindRequests:
			res.Requests = win
		case KindTokens:
			res.Tokens = win
		}
		if i == refused {
			ref := &Refusal{Scope: scope, Kind: kinds[i], Window: win, RetryAfter: ends[i].Sub(now)}
			switch kinds[i] {
			case KindConcurrent:
				ref.RetryAfter = time.Second
			case KindBudget:
				ref.Remaining = 0
			case KindTokens:
				ref.TooLarge = st.N > st.Limit
			}
			return ref, nil
		}
		if refused >= 0 {
			continue // windows up to the refused step are reported; nothing was taken
		}
		switch kinds[i] {
		case KindBudget:
			res.budgetKey, res.budgetTTL = st.Key, st.TTL
		case KindRequests:
			res.reqKey, res.reqTTL = st.Key, st.TTL
		case KindTokens:
			res.tokKey, res.tokTTL = st.Key, st.TTL
		case KindConcurrent:
			res.concKey, res.slot, res.lease = st.Key, st.Slot, st.TTL
		}
	}
	return nil, nil
}

// undo gives back what the reservation took.
func (r *Reservation) undo(ctx context.Context) {
	var d [3]Delta
	n := 0
	if r.reqKey != "" {
		d[n] = Delta{Key: r.reqKey, N: -1, TTL: r.reqTTL}
		n++
	}
	if r.tokKey != "" {
		d[n] = Delta{Key: r.tokKey, N: -r.estimate, TTL: r.tokTTL}
		n++
	}
	if r.concKey != "" {
		d[n] = Delta{Key: r.concKey, N: -1, Slot: r.slot}
		n++
	}
	_ = r.finish(ctx, d[:n])
}

// Settle counts what the request really used: its tokens replace the
// estimate in the window it was admitted in (a stream that used more than
// estimated is counted in full), its cost goes to the budget, and its
// concurrency slot is freed (a leased slot is retried once in the
// background when the store fails, and expires anyway). Calls after the
// first do nothing.
func (r *Reservation) Settle(ctx context.Context, tokens, costMicro int64) error {
	if r == nil {
		return nil
	}
	var err error
	r.once.Do(func() {
		var d [3]Delta
		n := 0
		if r.tokKey != "" && tokens != r.estimate {
			d[n] = Delta{Key: r.tokKey, N: tokens - r.estimate, TTL: r.tokTTL}
			n++
		}
		if r.budgetKey != "" && costMicro > 0 {
			d[n] = Delta{Key: r.budgetKey, N: costMicro, TTL: r.budgetTTL}
			n++
		}
		if r.concKey != "" {
			d[n] = Delta{Key: r.concKey, N: -1, Slot: r.slot}
			n++
		}
		err = r.finish(ctx, d[:n])
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

// BudgetAlert is a budget's spend crossing a share of it in one window.
type BudgetAlert struct {
	Scope   string
	Percent int
	// Limit and Spent are in micro-dollars.
	Limit, Spent int64
	WindowEnd    time.Time
}

// BudgetAlert checks, after Settle, whether the reservation's budget
// window has reached percent of its limit, and whether this call is the
// first of every process sharing the store to find so in the window: a
// marker counter taken once per window and scope makes it so. It returns
// nil when no alert is due (no budget, under the threshold, or already
// alerted). The check reads the spend once; a caller skips it once it
// alerted for a window.
func (r *Reservation) BudgetAlert(ctx context.Context, percent int) (*BudgetAlert, error) {
	if r == nil || r.budgetKey == "" || percent <= 0 {
		return nil, nil
	}
	spent, err := r.l.Store.Get(ctx, r.budgetKey)
	if err != nil {
		return nil, err
	}
	limit := r.policy.Budget.Limit
	if spent*100 < limit*int64(percent) {
		return nil, nil
	}
	_, first, err := r.l.Store.Take(ctx, r.budgetKey+":alert:"+strconv.Itoa(percent), 1, 1, r.budgetTTL)
	if err != nil || !first {
		return nil, err
	}
	return &BudgetAlert{Scope: r.scope, Percent: percent, Limit: limit, Spent: spent, WindowEnd: r.BudgetWindowEnd()}, nil
}

// Scope is the scope the reservation was made for.
func (r *Reservation) Scope() string { return r.scope }

// BudgetWindowEnd is when the reservation's budget window ends (zero:
// no budget), which a caller keys "already alerted" by.
func (r *Reservation) BudgetWindowEnd() time.Time {
	if r == nil || r.budgetKey == "" {
		return time.Time{}
	}
	w := r.policy.Budget.Window
	return time.Unix(0, (r.l.now().UnixNano()/int64(w)+1)*int64(w))
}

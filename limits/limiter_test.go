package limits

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func newTestLimiter() (*Limiter, *fakeClock) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)} // on a minute boundary
	return &Limiter{Store: NewMemoryStore(clock), Clock: clock}, clock
}

// step is one action of a limiter scenario.
type step struct {
	advance  time.Duration // moved before the action
	estimate int64         // reserve with this estimate
	settle   int64         // when >= 0, settle right away with these tokens
	cost     int64         // micro-dollars settled
	keep     bool          // hold the reservation (concurrency)
	want     Kind          // "" = admitted
	retry    time.Duration // expected RetryAfter when refused
}

// limiterScenarios run against every Store.
var limiterScenarios = []struct {
	name   string
	policy Policy
	steps  []step
}{
	{"requests per window", Policy{Requests: Rate{2, time.Minute}}, []step{
		{estimate: 1, settle: 1},
		{advance: 10 * time.Second, estimate: 1, settle: 1},
		{advance: 5 * time.Second, estimate: 1, settle: -1, want: KindRequests, retry: 45 * time.Second},
		{advance: 45 * time.Second, estimate: 1, settle: 1}, // next window
	}},
	{"tokens reserve the estimate", Policy{Tokens: Rate{100, time.Minute}}, []step{
		{estimate: 60, settle: -1, keep: true},
		{estimate: 50, settle: -1, want: KindTokens, retry: time.Minute},
		{estimate: 40, settle: 40},
	}},
	{"a stream that used more is counted", Policy{Tokens: Rate{100, time.Minute}}, []step{
		{estimate: 10, settle: 95},
		{estimate: 10, settle: -1, want: KindTokens, retry: time.Minute},
		{estimate: 5, settle: 5},
	}},
	{"less than estimated is given back", Policy{Tokens: Rate{100, time.Minute}}, []step{
		{estimate: 90, settle: 10},
		{estimate: 90, settle: 90},
	}},
	{"an estimate over the limit never fits", Policy{Tokens: Rate{100, time.Minute}}, []step{
		{estimate: 101, settle: -1, want: KindTokens, retry: time.Minute},
	}},
	{"concurrent streams", Policy{Concurrent: 2}, []step{
		{estimate: 1, settle: -1, keep: true},
		{estimate: 1, settle: -1, keep: true},
		{estimate: 1, settle: -1, want: KindConcurrent, retry: time.Second},
	}},
	{"budget over a long window", Policy{Budget: Rate{1_000_000, 24 * time.Hour}}, []step{
		{estimate: 1, settle: 1, cost: 600_000},
		{estimate: 1, settle: 1, cost: 600_000}, // admitted while under: budgets settle after
		{advance: time.Hour, estimate: 1, settle: -1, want: KindBudget},
		{advance: 24 * time.Hour, estimate: 1, settle: 1},
	}},
	{"a refused request takes nothing", Policy{Requests: Rate{10, time.Minute}, Tokens: Rate{100, time.Minute}}, []step{
		{estimate: 200, settle: -1, want: KindTokens, retry: time.Minute},
		{estimate: 100, settle: 100},
	}},
}

func TestLimiterScenarios(t *testing.T) {
	for _, tt := range limiterScenarios {
		t.Run(tt.name, func(t *testing.T) {
			l, clock := newTestLimiter()
			runScenario(t, l, clock, tt.policy, tt.steps)
		})
	}
}

// runScenario plays steps against l.
func runScenario(t *testing.T, l *Limiter, clock *fakeClock, policy Policy, steps []step) {
	t.Helper()
	ctx := context.Background()
	for i, s := range steps {
		clock.t = clock.t.Add(s.advance)
		res, ref, err := l.Reserve(ctx, "alice", policy, s.estimate)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		switch {
		case s.want == "" && ref != nil:
			t.Fatalf("step %d: refused: %v", i, ref)
		case s.want != "" && ref == nil:
			t.Fatalf("step %d: admitted, want a %s refusal", i, s.want)
		case ref != nil:
			if ref.Kind != s.want {
				t.Fatalf("step %d: refused for %s, want %s", i, ref.Kind, s.want)
			}
			if s.retry != 0 && ref.RetryAfter != s.retry {
				t.Errorf("step %d: RetryAfter %v, want %v", i, ref.RetryAfter, s.retry)
			}
			continue
		}
		if s.settle >= 0 {
			if err := res.Settle(ctx, s.settle, s.cost); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSettleFreesConcurrencyOnce(t *testing.T) {
	l, _ := newTestLimiter()
	ctx := context.Background()
	p := Policy{Concurrent: 1}
	res, ref, _ := l.Reserve(ctx, "s", p, 1)
	if ref != nil {
		t.Fatal(ref)
	}
	_ = res.Settle(ctx, 1, 0)
	_ = res.Settle(ctx, 1, 0) // a second settle must not free a slot it does not hold
	a, ref, _ := l.Reserve(ctx, "s", p, 1)
	if ref != nil {
		t.Fatalf("slot not freed: %v", ref)
	}
	if _, ref, _ := l.Reserve(ctx, "s", p, 1); ref == nil {
		t.Fatal("two streams admitted under concurrent 1: a double settle freed a slot")
	}
	a.Cancel(ctx)
}

func TestReservationWindowsForHeaders(t *testing.T) {
	l, clock := newTestLimiter()
	res, _, _ := l.Reserve(context.Background(), "s", Policy{Requests: Rate{5, time.Minute}, Tokens: Rate{1000, time.Minute}}, 300)
	if res.Requests.Remaining != 4 || res.Tokens.Remaining != 700 {
		t.Errorf("remaining requests %d tokens %d, want 4 and 700", res.Requests.Remaining, res.Tokens.Remaining)
	}
	if want := clock.t.Add(time.Minute); !res.Tokens.Reset.Equal(want) {
		t.Errorf("reset %v, want %v", res.Tokens.Reset, want)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		err  bool
	}{
		{"100/1m", Rate{100, time.Minute}, false},
		{"2000000/1h", Rate{2000000, time.Hour}, false},
		{"5/m", Rate{5, time.Minute}, false},
		{"10/30d", Rate{10, 30 * 24 * time.Hour}, false},
		{"0/1m", Rate{}, true},
		{"100", Rate{}, true},
		{"100/1ms", Rate{}, true},
		{"x/1m", Rate{}, true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParseBudget(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"50usd/30d", 50_000_000, false},
		{"$12.5/7d", 12_500_000, false},
		{"3/1h", 3_000_000, false},
		{"-1/1d", 0, true},
		{"lots/1d", 0, true},
		{"0.0005usd/1d", 500, false},
		{"0.0000004usd/1d", 0, true}, // rounds to no micro-dollar: the budget would be off
	}
	for _, tt := range tests {
		got, err := ParseBudget(tt.in)
		if (err != nil) != tt.err || got.Limit != tt.want {
			t.Errorf("ParseBudget(%q) = %v, %v; want %d, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// A budget refusal prints the budget so that a small one is legible: whole
// cents as cents, anything finer with the digits it needs.
func TestFormatUSD(t *testing.T) {
	for _, tt := range []struct {
		micro int64
		want  string
	}{
		{50_000_000, "$50.00"},
		{12_500_000, "$12.50"},
		{10_000, "$0.01"},
		{500, "$0.0005"},
		{1, "$0.000001"},
		{12_345_678, "$12.345678"},
		{1_500, "$0.0015"},
		{0, "$0.00"},
		{-500, "-$0.0005"},
	} {
		if got := FormatUSD(tt.micro); got != tt.want {
			t.Errorf("FormatUSD(%d) = %q, want %q", tt.micro, got, tt.want)
		}
	}
	r := &Refusal{Kind: KindBudget, Scope: "client alice", Window: Window{Limit: 500, Reset: time.Unix(0, 0)}}
	if msg := r.Error(); !strings.Contains(msg, "budget of $0.0005 is used up") {
		t.Errorf("refusal %q does not show the $0.0005 budget", msg)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 1.25, Output: 10, CacheRead: 0.125}
	// 1000 uncached input, 2000 cache read, 500 output.
	got := p.Cost(Usage{Input: 3000, Output: 500, CacheRead: 2000})
	if want := int64(1000*1.25 + 500*10 + 2000*0.125); got != want {
		t.Errorf("cost %d micro-USD, want %d", got, want)
	}
}

func TestLedgerReport(t *testing.T) {
	l := NewLedger(time.Unix(0, 0))
	l.Record(lk("alice", "gpt-5"), Usage{Input: 10, Output: 5}, 1500)
	l.Record(lk("alice", "gpt-5"), Usage{Input: 1, Output: 1}, 500)
	l.Record(lk("alice", "claude"), Usage{Input: 2}, 1_000_000)
	rep := l.Report()
	a := rep.Clients["alice"]
	if a == nil || a.Models["gpt-5"].Requests != 2 || a.Models["gpt-5"].InputTokens != 11 {
		t.Fatalf("report %+v", rep)
	}
	if a.CostUSD != 1.002 {
		t.Errorf("total cost %v, want 1.002", a.CostUSD)
	}
}

// Past its bound a ledger folds new pairs into LedgerOther: a known
// client's new model into its own "(other)", a new client into
// "(other)"'s; the totals keep every request, the entries stop growing.
func TestLedgerBounded(t *testing.T) {
	l := NewLedger(time.Unix(0, 0))
	l.maxEntries = 3
	l.Record(lk("alice", "gpt-*"), Usage{Input: 1}, 1)
	l.Record(lk("alice", "claude-*"), Usage{Input: 1}, 1)
	l.Record(lk("bob", "gpt-*"), Usage{Input: 1}, 1) // the third: the ledger is full
	for i := range 100 {
		l.Record(lk("alice", fmt.Sprintf("route-%d", i)), Usage{Input: 1}, 1)
		l.Record(lk(fmt.Sprintf("client-%d", i), "gpt-*"), Usage{Input: 1}, 1)
	}
	l.Record(lk("bob", "gpt-*"), Usage{Input: 1}, 1) // a known pair still counts as itself
	rep := l.Report()
	entries, requests := 0, int64(0)
	for _, c := range rep.Clients {
		for _, e := range c.Models {
			entries++
			requests += e.Requests
		}
	}
	if entries != 5 || len(rep.Clients) != 3 {
		t.Errorf("%d entries of %d clients, want 5 of 3: %+v", entries, len(rep.Clients), rep.Clients)
	}
	if requests != 204 {
		t.Errorf("%d requests in all, want 204", requests)
	}
	if n := rep.Clients["alice"].Models[LedgerOther].Requests; n != 100 {
		t.Errorf("alice's (other): %d requests, want 100", n)
	}
	if n := rep.Clients[LedgerOther].Models[LedgerOther].Requests; n != 100 {
		t.Errorf("(other)'s (other): %d requests, want 100", n)
	}
	if n := rep.Clients["bob"].Models["gpt-*"].Requests; n != 2 {
		t.Errorf("bob's gpt-*: %d requests, want 2", n)
	}
}

// lk is a ledger line of today's day on backend "b".
func lk(client, model string) LedgerKey {
	return LedgerKey{Day: "2026-11-27", Client: client, Model: model, Backend: "b"}
}

package limits

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBreaker walks a breaker through calls at set times. Each step moves
// the clock to at, then makes a call: "ok", "fail" or "cancel" (its
// caller went away) start and end one; "begin" starts one left in flight
// and "end ok" / "end fail" end it. want is how the call was let go:
// "pass" (closed), "probe", or "fast" (failed at once, not tried).
func TestBreaker(t *testing.T) {
	type step struct {
		at       time.Duration
		op, want string
	}
	tests := []struct {
		name     string
		min, max time.Duration
		steps    []step
		downs    int
		ups      []time.Duration // the down times reported
		open     bool
	}{
		{name: "closed lets everything through", steps: []step{
			{0, "ok", "pass"}, {0, "ok", "pass"}, {time.Hour, "ok", "pass"},
		}},
		{name: "a failure opens it for the cool-down", steps: []step{
			{0, "fail", "pass"}, {0, "ok", "fast"}, {999 * time.Millisecond, "ok", "fast"},
		}, downs: 1, open: true},
		{name: "a probe after the cool-down closes it", steps: []step{
			{0, "fail", "pass"}, {time.Second, "ok", "probe"}, {time.Second, "ok", "pass"},
		}, downs: 1, ups: []time.Duration{time.Second}},
		{name: "failed probes double the cool-down up to the cap", min: time.Second, max: 4 * time.Second, steps: []step{
			{0, "fail", "pass"},
			{1 * time.Second, "fail", "probe"}, // next probe 2s later
			{2900 * time.Millisecond, "ok", "fast"},
			{3 * time.Second, "fail", "probe"}, // 4s
			{6900 * time.Millisecond, "ok", "fast"},
			{7 * time.Second, "fail", "probe"}, // capped: 4s
			{10900 * time.Millisecond, "ok", "fast"},
			{11 * time.Second, "ok", "probe"},
			{11 * time.Second, "ok", "pass"},
		}, downs: 1, ups: []time.Duration{11 * time.Second}},
		{name: "one probe at a time", steps: []step{
			{0, "fail", "pass"},
			{time.Second, "begin", "probe"},
			{time.Second, "ok", "fast"},
			{2 * time.Second, "ok", "fast"}, // still in flight
			{2 * time.Second, "end ok", ""},
			{2 * time.Second, "ok", "pass"},
		}, downs: 1, ups: []time.Duration{2 * time.Second}},
		{name: "a cancelled probe tells nothing", steps: []step{
			{0, "fail", "pass"},
			{time.Second, "cancel", "probe"},
			{time.Second, "ok", "probe"}, // no new cool-down
		}, downs: 1, ups: []time.Duration{time.Second}},
		{name: "a cancelled call does not open it", steps: []step{
			{0, "cancel", "pass"}, {0, "ok", "pass"},
		}},
		{name: "failures of calls in flight when it opened count once", steps: []step{
			{0, "begin", "pass"},
			{0, "fail", "pass"},
			{0, "end fail", ""},
			{time.Second, "ok", "probe"},
		}, downs: 1, ups: []time.Duration{time.Second}},
		{name: "a success begun before it opened does not close it", steps: []step{
			{0, "begin", "pass"},
			{0, "fail", "pass"},
			{0, "end ok", ""},
			{0, "ok", "fast"},
		}, downs: 1, open: true},
		{name: "down again after recovering starts from the first cool-down", min: time.Second, max: 8 * time.Second, steps: []step{
			{0, "fail", "pass"},
			{1 * time.Second, "fail", "probe"}, // 2s
			{3 * time.Second, "ok", "probe"},
			{4 * time.Second, "fail", "pass"},
			{5 * time.Second, "ok", "probe"},
		}, downs: 2, ups: []time.Duration{3 * time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1_800_000_000, 0)
			clock := &fakeClock{t: start}
			var downs int
			var ups []time.Duration
			b := &Breaker{Clock: clock, MinCooldown: tt.min, MaxCooldown: tt.max,
				OnDown: func(err error) {
					downs++
					if err == nil || err.Error() != "boom" {
						t.Errorf("OnDown with %v, want the failure", err)
					}
				},
				OnUp: func(d time.Duration) { ups = append(ups, d) },
			}
			var pending bool // the call in flight is the probe
			for i, s := range tt.steps {
				clock.t = start.Add(s.at)
				ctx := context.Background()
				result := func(op string) error {
					switch op {
					case "fail":
						return errors.New("boom")
					case "cancel":
						c, cancel := context.WithCancel(ctx)
						cancel()
						ctx = c
						return fmt.Errorf("redis: %w", context.Canceled)
					}
					return nil
				}
				if rest, ok := strings.CutPrefix(s.op, "end "); ok {
					b.end(ctx, pending, result(rest))
					continue
				}
				probe, err := b.start()
				got := "pass"
				switch {
				case err != nil:
					got = "fast"
					if !errors.Is(err, ErrStoreDown) || !strings.Contains(err.Error(), "boom") {
						t.Errorf("step %d: error %v, want ErrStoreDown with the failure", i, err)
					}
				case probe:
					got = "probe"
				}
				if got != s.want {
					t.Fatalf("step %d (%s at %v): %s, want %s", i, s.op, s.at, got, s.want)
				}
				if err != nil {
					continue
				}
				if s.op == "begin" {
					pending = probe
					continue
				}
				b.end(ctx, probe, result(s.op))
			}
			if downs != tt.downs || fmt.Sprint(ups) != fmt.Sprint(tt.ups) {
				t.Errorf("%d downs and ups %v, want %d and %v", downs, ups, tt.downs, tt.ups)
			}
			if b.Open() != tt.open {
				t.Errorf("open %t, want %t", b.Open(), tt.open)
			}
		})
	}
}

// slowStore is a SharedStore whose every call fails after wait, as a
// Redis that does not answer fails after its timeout.
type slowStore struct {
	SharedStore
	wait  time.Duration
	calls int
}

func (s *slowStore) TakeAll(context.Context, []Step) ([]int64, int, error) {
	s.calls++
	time.Sleep(s.wait)
	return nil, 0, errors.New("i/o timeout")
}

// TestBreakerStoreFailsFast: behind a breaker, a store that is down is
// tried once, not once per reservation.
func TestBreakerStoreFailsFast(t *testing.T) {
	inner := &slowStore{SharedStore: &RedisStore{}, wait: 50 * time.Millisecond}
	l := &Limiter{Store: &BreakerStore{Store: inner, Breaker: &Breaker{MinCooldown: time.Hour}}}
	p := Policy{Requests: Rate{10, time.Minute}}
	start := time.Now()
	for i := 0; i < 100; i++ {
		if _, _, err := l.Reserve(context.Background(), "s", p, 1); err == nil {
			t.Fatal("admitted without a store")
		} else if i > 0 && !errors.Is(err, ErrStoreDown) {
			t.Fatalf("call %d: %v, want ErrStoreDown", i, err)
		}
	}
	if inner.calls != 1 {
		t.Errorf("the store was called %d times, want once", inner.calls)
	}
	if d := time.Since(start); d > 40*inner.wait {
		t.Errorf("100 reservations took %v; the first alone waits %v", d, inner.wait)
	}
}

package limits

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/internal/testredis"
)

// TestRedisStoreScenarios runs the limiter scenarios against a real Redis.
func TestRedisStoreScenarios(t *testing.T) {
	srv := testredis.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	for i, tt := range limiterScenarios {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			l := &Limiter{Store: &RedisStore{Client: client, Prefix: "t" + string(rune('a'+i)) + ":"}, Clock: clock}
			runScenario(t, l, clock, tt.policy, tt.steps)
		})
	}
	t.Run("atomic under contention", func(t *testing.T) {
		// Two stores (two instances) take from one limit at once: exactly
		// the limit is admitted.
		other := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer other.Close()
		stores := []*Limiter{{Store: &RedisStore{Client: client, Prefix: "c:"}}, {Store: &RedisStore{Client: other, Prefix: "c:"}}}
		p := Policy{Requests: Rate{50, time.Hour}}
		var mu sync.Mutex
		admitted := 0
		var wg sync.WaitGroup
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ref, err := stores[i%2].Reserve(ctx, "shared", p, 1)
				if err == nil && ref == nil {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if admitted != 50 {
			t.Errorf("%d admitted, want exactly 50", admitted)
		}
	})
	t.Run("expiry set once", func(t *testing.T) {
		s := &RedisStore{Client: client, Prefix: "e:"}
		if _, _, err := s.Take(ctx, "k", 1, 10, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(ctx, "k", 1, time.Hour); err != nil {
			t.Fatal(err)
		}
		ttl := client.PTTL(ctx, "e:k").Val()
		if ttl <= 0 || ttl > time.Minute {
			t.Errorf("ttl %v, want the first one (≤ 1m)", ttl)
		}
		if v, _ := s.Get(ctx, "k"); v != 2 {
			t.Errorf("value %d, want 2", v)
		}
	})
}

// failingSettle is a RedisStore whose next AddAll fails without reaching
// Redis, as when the server stalls past the timeout as a request ends.
type failingSettle struct {
	*RedisStore
	fail bool
}

func (f *failingSettle) AddAll(ctx context.Context, deltas []Delta) error {
	if f.fail {
		f.fail = false
		return errors.New("i/o timeout")
	}
	return f.RedisStore.AddAll(ctx, deltas)
}

// TestRedisConcurrencyLeases: a concurrency slot in Redis is a lease that
// its live request renews, that a dead holder loses within the lease, and
// whose release is retried when settling fails.
func TestRedisConcurrencyLeases(t *testing.T) {
	srv := testredis.Start(t)
	client := srv.Client(t)
	p := Policy{Concurrent: 1}
	const lease = 600 * time.Millisecond
	// admittedWithin polls l until it admits a request of "s", and
	// returns how long that took, or fails after limit.
	admittedWithin := func(t *testing.T, l *Limiter, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			res, ref, err := l.Reserve(context.Background(), "s", p, 1)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				_ = res.Settle(context.Background(), 1, 0)
				return time.Since(start)
			}
			if time.Since(start) > limit {
				t.Fatalf("slot still taken after %v", time.Since(start))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	t.Run("a dead holder's slot expires", func(t *testing.T) {
		holder := &Limiter{Store: &RedisStore{Client: client, Prefix: "dead:"}, Lease: lease}
		other := &Limiter{Store: &RedisStore{Client: client, Prefix: "dead:"}, Lease: lease}
		// The holder's request context ends without a settlement: its
		// process died, and with it the renewal.
		ctx, die := context.WithCancel(context.Background())
		if _, ref, err := holder.Reserve(ctx, "s", p, 1); ref != nil || err != nil {
			t.Fatal(ref, err)
		}
		die()
		if _, ref, _ := other.Reserve(context.Background(), "s", p, 1); ref == nil || ref.Kind != KindConcurrent {
			t.Fatalf("admitted while the dead holder's lease runs: %v", ref)
		}
		if d := admittedWithin(t, other, lease+time.Second); d > lease+200*time.Millisecond {
			t.Errorf("slot freed after %v, want within the %v lease", d, lease)
		}
	})

	t.Run("a live holder keeps its slot past the lease", func(t *testing.T) {
		holder := &Limiter{Store: &RedisStore{Client: client, Prefix: "live:"}, Lease: lease}
		res, ref, err := holder.Reserve(context.Background(), "s", p, 1)
		if ref != nil || err != nil {
			t.Fatal(ref, err)
		}
		for i := 0; i < 6; i++ { // 3 leases
			time.Sleep(lease / 2)
			if _, ref, _ := holder.Reserve(context.Background(), "s", p, 1); ref == nil {
				t.Fatalf("after %v the renewed slot was taken again", time.Duration(i+1)*lease/2)
			}
		}
		// The set of leases expires too, so an idle client leaves nothing.
		if ttl := client.PTTL(context.Background(), "live:{s}:concurrent:leases").Val(); ttl <= 0 || ttl > lease {
			t.Errorf("lease set ttl %v, want one lease at most", ttl)
		}
		if err := res.Settle(context.Background(), 1, 0); err != nil {
			t.Fatal(err)
		}
		if d := admittedWithin(t, holder, time.Second); d > 100*time.Millisecond {
			t.Errorf("a settled slot was freed after %v, want at once", d)
		}
	})

	t.Run("a failed release is retried", func(t *testing.T) {
		st := &failingSettle{RedisStore: &RedisStore{Client: client, Prefix: "stall:"}}
		holder := &Limiter{Store: st, Lease: time.Minute}
		res, ref, err := holder.Reserve(context.Background(), "s", p, 1)
		if ref != nil || err != nil {
			t.Fatal(ref, err)
		}
		st.fail = true
		if err := res.Settle(context.Background(), 1, 0); err == nil {
			t.Fatal("settle did not fail")
		}
		if d := admittedWithin(t, holder, 3*releaseRetryDelay); d > 2*releaseRetryDelay {
			t.Errorf("released after %v, want about %v", d, releaseRetryDelay)
		}
	})
}

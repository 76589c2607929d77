package limits

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/internal/testredis"
)

// TestRedisStoreScenarios runs the limiter scenarios against a real Redis.
func TestRedisStoreScenarios(t *testing.T) {
	srv := testredis.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
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

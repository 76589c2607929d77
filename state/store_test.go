package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/internal/testredis"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// conformance runs the Store contract against s.
func conformance(t *testing.T, s Store) {
	ctx := context.Background()
	a1 := NewID("resp_")
	a2 := NewID("resp_")
	a3 := NewID("resp_")
	put := func(owner, id, prev, data string) {
		t.Helper()
		if err := s.Put(ctx, Record{ID: id, Owner: owner, Previous: prev, Created: time.UnixMilli(1700000000000), Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	put("alice", a1, "", "one")
	put("alice", a2, a1, "two")
	put("alice", a3, a2, "three")

	chain, err := s.Chain(ctx, "alice", a3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range chain {
		got = append(got, string(r.Data))
	}
	if strings.Join(got, ",") != "one,two,three" || chain[2].Previous != a2 || chain[0].Previous != "" {
		t.Fatalf("chain = %v", got)
	}
	if !chain[0].Created.Equal(time.UnixMilli(1700000000000)) {
		t.Errorf("created = %v", chain[0].Created)
	}
	if _, err := s.Chain(ctx, "alice", a3, 2); !errors.Is(err, ErrChainTooLong) {
		t.Errorf("bounded chain: err = %v", err)
	}
	r, err := s.Get(ctx, "alice", a2)
	if err != nil || string(r.Data) != "two" || r.Previous != a1 || r.Owner != "alice" {
		t.Fatalf("get = %+v, %v", r, err)
	}
	// Another owner sees nothing, not even that the id exists.
	if _, err := s.Get(ctx, "mallory", a2); !errors.Is(err, ErrNotFound) {
		t.Errorf("other owner's get: %v", err)
	}
	if _, err := s.Chain(ctx, "mallory", a3, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("other owner's chain: %v", err)
	}
	if err := s.Delete(ctx, "mallory", a2); !errors.Is(err, ErrNotFound) {
		t.Errorf("other owner's delete: %v", err)
	}
	// Deleting a middle turn breaks the chain through it.
	if err := s.Delete(ctx, "alice", a2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "alice", a2); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted get: %v", err)
	}
	if _, err := s.Chain(ctx, "alice", a3, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("chain through a deleted turn: %v", err)
	}
	if err := s.Delete(ctx, "alice", a2); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "resp_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestMemoryConformance(t *testing.T) { conformance(t, &Memory{}) }

func TestRedisConformance(t *testing.T) {
	srv := testredis.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	conformance(t, &Redis{Client: c, Prefix: "test:"})
	// The TTL is set, and renewed.
	keys, _ := c.Keys(context.Background(), "test:r:*").Result()
	if len(keys) == 0 {
		t.Fatal("no keys")
	}
	for _, k := range keys {
		if ttl := c.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > DefaultTTL {
			t.Errorf("%s: ttl %v", k, ttl)
		}
	}
}

func TestRedisGuardSeesCalls(t *testing.T) {
	srv := testredis.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	calls := 0
	down := errors.New("down")
	s := &Redis{Client: c, Guard: func(ctx context.Context, f func() error) error {
		calls++
		if calls > 1 {
			return down
		}
		return f()
	}}
	if err := s.Put(context.Background(), Record{ID: "x", Owner: "o", Data: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "o", "x"); !errors.Is(err, down) {
		t.Errorf("guarded get: %v", err)
	}
}

func TestMemoryTTL(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	m := &Memory{TTL: time.Hour, Clock: clk}
	ctx := context.Background()
	_ = m.Put(ctx, Record{ID: "a", Owner: "o", Data: []byte("x")})
	_ = m.Put(ctx, Record{ID: "b", Owner: "o", Previous: "a", Data: []byte("y")})
	clk.Add(50 * time.Minute)
	if _, err := m.Chain(ctx, "o", "b", 0); err != nil { // renews both
		t.Fatal(err)
	}
	clk.Add(50 * time.Minute)
	if _, err := m.Get(ctx, "o", "a"); err != nil {
		t.Fatalf("renewed record expired: %v", err)
	}
	clk.Add(61 * time.Minute)
	if _, err := m.Get(ctx, "o", "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired get: %v", err)
	}
	if _, err := m.Chain(ctx, "o", "b", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired chain: %v", err)
	}
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Errorf("expired records still held: %d, %d bytes", m.Len(), m.Bytes())
	}
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	data := make([]byte, 1000)
	one := (&Record{ID: "r0", Owner: "o", Data: data}).size()
	m := &Memory{MaxBytes: 3 * one, Clock: clk}
	ctx := context.Background()
	for i := range 3 {
		_ = m.Put(ctx, Record{ID: fmt.Sprint("r", i), Owner: "o", Data: data})
	}
	_, _ = m.Get(ctx, "o", "r0") // r1 is now the least recently used
	_ = m.Put(ctx, Record{ID: "r3", Owner: "o", Data: data})
	if _, err := m.Get(ctx, "o", "r1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("r1 not evicted: %v", err)
	}
	for _, id := range []string{"r0", "r2", "r3"} {
		if _, err := m.Get(ctx, "o", id); err != nil {
			t.Errorf("%s evicted: %v", id, err)
		}
	}
	if m.Bytes() > m.MaxBytes {
		t.Errorf("bytes %d > max %d", m.Bytes(), m.MaxBytes)
	}
	// A record larger than the bound is not kept at all.
	_ = m.Put(ctx, Record{ID: "big", Owner: "o", Data: make([]byte, 4*one)})
	if _, err := m.Get(ctx, "o", "big"); !errors.Is(err, ErrNotFound) {
		t.Errorf("oversized record kept")
	}
}

// TestChainCostsLinearBytes: a 200-turn conversation, each turn stored once
// with a reference to its predecessor, costs the sum of its turns, not 200².
func TestChainCostsLinearBytes(t *testing.T) {
	m := &Memory{}
	ctx := context.Background()
	const turns, perTurn = 200, 2000
	prev := ""
	for range turns {
		id := NewID("resp_")
		_ = m.Put(ctx, Record{ID: id, Owner: "o", Previous: prev, Data: make([]byte, perTurn)})
		prev = id
	}
	chain, err := m.Chain(ctx, "o", prev, 0)
	if err != nil || len(chain) != turns {
		t.Fatalf("chain: %d, %v", len(chain), err)
	}
	limit := int64(turns * (perTurn + 400))
	if b := m.Bytes(); b > limit {
		t.Errorf("200 turns cost %d bytes, more than %d (linear)", b, limit)
	}
	t.Logf("200 turns of %d bytes: %d bytes stored (%.2f× the data)", perTurn, m.Bytes(), float64(m.Bytes())/float64(turns*perTurn))
}

func TestNewIDUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID("resp_")
		if seen[id] || len(id) != len("resp_")+32 {
			t.Fatalf("id %q", id)
		}
		seen[id] = true
	}
}

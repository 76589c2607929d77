package limits

import (
	"context"
	"testing"
	"time"

	"github.com/louter/louter/internal/testredis"
)

// Two ledgers (two instances) record into one Redis: a query from either
// sees the sum, filtered; Close writes what is queued; records made while
// Redis is down are kept and written once it is back.
func TestRedisLedgerShared(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	c1, c2 := srv.Client(t), srv.Client(t)
	// A flush interval far longer than the test: only Close writes.
	a := NewRedisLedger(c1, "rl:", nil, time.Hour, 0, time.Second)
	b := NewRedisLedger(c2, "rl:", nil, time.Hour, 0, time.Second)
	day1, day2 := "2026-11-26", "2026-11-27"
	for range 3 {
		a.Record(LedgerKey{day1, "alice", "gpt-*", "oai"}, Usage{Input: 10, Output: 2, CacheRead: 4}, 100)
		b.Record(LedgerKey{day1, "alice", "gpt-*", "oai"}, Usage{Input: 1, Output: 1, Estimated: true}, 5)
	}
	b.Record(LedgerKey{day2, "bob", "claude-*", "anth"}, Usage{Input: 7, CacheWrite: 3}, 1_500_000)
	if a.Pending() != 3 || b.Pending() != 4 {
		t.Errorf("pending %d and %d, want 3 and 4", a.Pending(), b.Pending())
	}
	a.Close()
	b.Close()
	if a.Pending() != 0 || a.Lost() != 0 || b.Lost() != 0 {
		t.Errorf("after close: pending %d, lost %d and %d", a.Pending(), a.Lost(), b.Lost())
	}
	// A fresh ledger (a restarted instance) reads what both wrote.
	r := NewRedisLedger(c1, "rl:", nil, time.Hour, 0, time.Second)
	defer r.Close()
	rows, err := r.Query(ctx, LedgerFilter{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	want := LedgerEntry{Requests: 6, InputTokens: 33, OutputTokens: 9, CacheReadTokens: 12, CostMicro: 315, CostUSD: 0.000315, EstimatedRequests: 3}
	if rows[0].LedgerKey != (LedgerKey{day1, "alice", "gpt-*", "oai"}) || rows[0].LedgerEntry != want {
		t.Errorf("row 0: %+v, want %+v", rows[0], want)
	}
	for _, tt := range []struct {
		f    LedgerFilter
		want int
	}{
		{LedgerFilter{Client: "bob"}, 1},
		{LedgerFilter{Backend: "oai"}, 1},
		{LedgerFilter{Model: "nope"}, 0},
		{LedgerFilter{From: day2}, 1},
		{LedgerFilter{To: day1}, 1},
		{LedgerFilter{From: day1, To: day2, Client: "alice"}, 1},
	} {
		got, err := r.Query(ctx, tt.f)
		if err != nil || len(got) != tt.want {
			t.Errorf("filter %+v: %d rows (%v), want %d", tt.f, len(got), err, tt.want)
		}
	}
	since, err := r.Since(ctx)
	if err != nil || Day(since) != day1 {
		t.Errorf("since %v %v, want %s", since, err, day1)
	}

	// Redis down: the record waits; back: it is written at the next flush.
	w := NewRedisLedger(c1, "rl:", &Breaker{MinCooldown: 10 * time.Millisecond}, 20*time.Millisecond, 0, 200*time.Millisecond)
	defer w.Close()
	srv.Stop()
	w.Record(LedgerKey{day2, "carol", "m", "b"}, Usage{Input: 1}, 1)
	for deadline := time.Now().Add(5 * time.Second); w.Errors() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if w.Pending() != 1 || w.Errors() == 0 {
		t.Errorf("with redis down: pending %d, errors %d, want 1 and some", w.Pending(), w.Errors())
	}
	srv.Restart() // empty: only the new record is there
	deadline := time.Now().Add(5 * time.Second)
	for w.Pending() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got, err := w.Query(ctx, LedgerFilter{Client: "carol"})
	if err != nil || len(got) != 1 || got[0].Requests != 1 || w.Lost() != 0 {
		t.Errorf("after redis came back: %+v %v, lost %d", got, err, w.Lost())
	}
}

// The memory ledger filters as Redis does, and forgets days past
// MemoryLedgerDays once it is full.
func TestMemoryLedgerQuery(t *testing.T) {
	l := NewLedger(time.Unix(0, 0))
	l.Record(LedgerKey{"2026-01-01", "alice", "gpt-*", "oai"}, Usage{Input: 1}, 1)
	l.Record(LedgerKey{"2026-11-27", "alice", "gpt-*", "azure"}, Usage{Input: 1}, 1)
	l.Record(LedgerKey{"2026-11-27", "bob", "gpt-*", "oai"}, Usage{Input: 1}, 1)
	rows, _ := l.Query(context.Background(), LedgerFilter{Backend: "oai"})
	if len(rows) != 2 || rows[0].Day != "2026-01-01" {
		t.Errorf("backend oai: %+v", rows)
	}
	rows, _ = l.Query(context.Background(), LedgerFilter{From: "2026-11-01", Client: "alice"})
	if len(rows) != 1 || rows[0].Backend != "azure" {
		t.Errorf("alice from november: %+v", rows)
	}
	l.maxEntries = 3
	l.Record(LedgerKey{"2026-11-28", "carol", "m", "b"}, Usage{Input: 1}, 1)
	rows, _ = l.Query(context.Background(), LedgerFilter{})
	if len(rows) != 3 || rows[0].Day != "2026-11-27" || rows[2].Client != "carol" {
		t.Errorf("after the full ledger dropped january: %+v", rows)
	}
}

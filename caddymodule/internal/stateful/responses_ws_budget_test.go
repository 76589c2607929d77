package stateful

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/louter/louter/state"
)

// TestWSAccount: the process's account of the WebSocket sessions counts
// what their turns hold, drops the least recently used session's turns
// whole when a Put passes websocket_total_bytes, caps a client's sessions,
// and gives everything back on close.
func TestWSAccount(t *testing.T) {
	ctx := context.Background()
	var a wsAccount
	turn := func(id, prev string) state.Record {
		return state.Record{ID: id, Owner: "o", Previous: prev, Data: make([]byte, 1000)}
	}
	var probe state.Memory
	_ = probe.Put(ctx, turn("resp_1", ""))
	one := probe.Bytes() // what one turn costs
	_ = probe.Put(ctx, turn("resp_2", "resp_1"))
	next := probe.Bytes() - one // and one continuing it
	total := 3*one + one/2

	open := func(owner string) *socketMemory {
		t.Helper()
		m, n := a.open(owner, 2, 1<<20, total, time.Hour)
		if m == nil {
			t.Fatalf("%s's session refused with %d open", owner, n)
		}
		return m
	}
	s1, s2, bob := open("alice"), open("alice"), open("bob")
	if m, n := a.open("alice", 2, 1<<20, total, time.Hour); m != nil || n != 2 {
		t.Fatalf("alice's third session: %v, %d open; want a refusal, 2 open", m, n)
	}
	if s1.mem.MaxBytes != total {
		t.Errorf("a session's own bound is %d, want websocket_total_bytes (%d) when websocket_max_bytes is larger", s1.mem.MaxBytes, total)
	}
	drops := 0
	for _, m := range []*socketMemory{s1, s2, bob} {
		m.onDrop = func(n int) { drops += n }
	}
	for _, m := range []*socketMemory{s1, s2, bob} {
		if err := m.Put(ctx, turn("resp_1", "")); err != nil {
			t.Fatal(err)
		}
	}
	if held, n := a.held(); held != 3*one || n != 3 || drops != 0 {
		t.Fatalf("three sessions of one turn each: %d bytes, %d sessions, %d drops; want %d, 3, 0", held, n, drops, 3*one)
	}
	// s1 is used again, then grows past the total: s2, now the least
	// recently used, loses its turns; s1 and bob keep theirs.
	if _, err := s1.Chain(ctx, "o", "resp_1", 0); err != nil {
		t.Fatal(err)
	}
	if err := s1.Put(ctx, turn("resp_2", "resp_1")); err != nil {
		t.Fatal(err)
	}
	if held, _ := a.held(); held != 2*one+next || drops != 1 {
		t.Errorf("past the total: %d bytes held, %d drops; want %d, 1", held, drops, 2*one+next)
	}
	if _, err := s2.Chain(ctx, "o", "resp_1", 0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("the least recently used session's turn: %v, want not found", err)
	}
	for _, m := range []*socketMemory{s1, bob} {
		if c, err := m.Chain(ctx, "o", "resp_1", 0); err != nil || len(c) != 1 {
			t.Errorf("a session used since kept %d turns, %v", len(c), err)
		}
	}
	if c, err := s1.Chain(ctx, "o", "resp_2", 0); err != nil || len(c) != 2 {
		t.Errorf("the growing session's chain: %d turns, %v", len(c), err)
	}
	// The session whose turns were dropped keeps working.
	if err := s2.Put(ctx, turn("resp_3", "")); err != nil {
		t.Fatal(err)
	}
	if c, err := s2.Chain(ctx, "o", "resp_3", 0); err != nil || len(c) != 1 {
		t.Errorf("a new turn on the dropped session: %d turns, %v", len(c), err)
	}
	if held, _ := a.held(); held > total {
		t.Errorf("%d bytes held, past the total %d", held, total)
	}
	// Closing gives everything back, and frees the client's places.
	for _, m := range []*socketMemory{s1, s2, bob} {
		m.close()
		m.close() // twice is harmless
	}
	if held, n := a.held(); held != 0 || n != 0 || len(a.perOwner) != 0 {
		t.Errorf("all closed: %d bytes, %d sessions, owners %v", held, n, a.perOwner)
	}
	if err := s1.Put(ctx, turn("resp_4", "")); err != nil {
		t.Error(err)
	}
	if held, _ := a.held(); held != 0 {
		t.Errorf("a Put on a closed session is counted: %d", held)
	}
	open("alice").close()
}

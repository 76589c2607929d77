package mock

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalCaddyfileReplay(t *testing.T) {
	var m Mock
	err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`louter_mock {
		replay ../../testdata/recordings/codex.jsonl
		replay_timing
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Replay != "../../testdata/recordings/codex.jsonl" || !m.ReplayTiming {
		t.Errorf("got %+v", m)
	}
	for _, bad := range []string{"louter_mock {\n replay\n}", "louter_mock {\n replay a b\n}", "louter_mock {\n replay_timing yes\n}"} {
		if err := new(Mock).UnmarshalCaddyfile(caddyfile.NewTestDispenser(bad)); err == nil || !strings.Contains(err.Error(), "wrong argument count") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func TestReplaySetPick(t *testing.T) {
	m := &Mock{Replay: "../../testdata/recordings/codex.jsonl"}
	if err := m.provisionReplay(); err != nil {
		t.Fatal(err)
	}
	s := m.replay
	if len(s.records) != 2 {
		t.Fatalf("%d records", len(s.records))
	}
	// The second record's body, spaced out, picks it first; then the
	// protocol picks the other one; then none is left.
	second := s.records[1]
	if got := s.pick("openai_chat", append([]byte("  "), second.BackendRequest.Body...)); got != second {
		t.Fatalf("picked %v, want the record with the same body", got)
	}
	if got := s.pick("anthropic", []byte(`{}`)); got != nil {
		t.Fatalf("an anthropic request got %s", got.ID)
	}
	if got := s.pick("openai_chat", []byte(`{}`)); got != s.records[0] {
		t.Fatalf("picked %v, want the first record left", got)
	}
	if got := s.pick("openai_chat", []byte(`{}`)); got != nil {
		t.Fatalf("picked %s from a used-up recording", got.ID)
	}
	if err := (&Mock{Replay: "missing.jsonl"}).provisionReplay(); err == nil {
		t.Error("a missing recording was accepted")
	}
}

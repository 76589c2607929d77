package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/loadbench/results"
	"github.com/louter/louter/internal/testcaddy"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain), so that
// the replay test needs no build step.
const caddyProcessEnv = "LOUTER_LOADBENCH_RUN_CADDY"

func TestMain(m *testing.M) { testcaddy.Main(m, caddyProcessEnv) }

// recordings are the project's three agent recordings, from this package.
var recordings = strings.ReplaceAll(defaultReplay, "testdata/", "../../testdata/")

// TestLoadSessions checks that every recorded turn is ready to replay:
// both requests carry the turn's tag where the upstream finds it, and
// the context grows from turn to turn.
func TestLoadSessions(t *testing.T) {
	sessions, err := loadSessions(recordings)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 {
		t.Fatalf("got %d sessions, want 3", len(sessions))
	}
	for _, s := range sessions {
		if len(s.turns) < 2 {
			t.Errorf("%s: %d turns, want a multi-turn session", s.name, len(s.turns))
		}
		for i, tu := range s.turns {
			if got := turnOf(tu.caddyBody); got != tu.id {
				t.Errorf("%s turn %d: the backend request's tag says %d, want %d", s.name, i+1, got, tu.id)
			}
			if !strings.HasPrefix(tu.louterPath, "/v1") {
				t.Errorf("%s turn %d: louter path %q", s.name, i+1, tu.louterPath)
			}
			if len(tu.events) < 3 {
				t.Errorf("%s turn %d: %d upstream events", s.name, i+1, len(tu.events))
			}
			if i > 0 && len(tu.louterBody) <= len(s.turns[i-1].louterBody) {
				t.Errorf("%s turn %d: %d bytes, not more than the turn before's %d", s.name, i+1, len(tu.louterBody), len(s.turns[i-1].louterBody))
			}
		}
	}
	if _, err := loadSessions("../../testdata/bench/loadbench.json"); err == nil {
		t.Error("a file that is no recording was accepted")
	}
}

// TestReplayMode runs the session-replay mode briefly, end to end: this
// test binary as Caddy's plain proxy and as louter, every recorded turn
// sent and its stream checked, one row per session, turn and
// concurrency; and with -before (this binary again), louter's twin from
// the "older" binary measured in the same rows.
func TestReplayMode(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	t.Run("current", func(t *testing.T) { testReplayMode(t, "") })
	t.Run("before", func(t *testing.T) { testReplayMode(t, os.Args[0]) })
}

func testReplayMode(t *testing.T, before string) {
	cfg := config{
		replay: recordings, sessions: 2, reps: 1, conc: []int{1, 2},
		caddy: os.Args[0], env: []string{caddyProcessEnv + "=1"},
		gomaxprocs: 1, timeout: 30 * time.Second, before: before,
	}
	res, err := replay(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Errors != 0 || res.Header.Validated == 0 {
		t.Fatalf("%d of %d turns failed", res.Header.Errors, res.Header.Validated)
	}
	if len(res.Replay) != 3*2*2 { // sessions × turns × concurrencies
		t.Fatalf("got %d rows, want 12", len(res.Replay))
	}
	for _, r := range res.Replay {
		if r.Samples != 2 || r.LouterTTFBms <= 0 || r.CaddyTTFBms <= 0 || r.LouterP99ms < r.LouterTTFBms || r.LouterRSSMiB <= 0 {
			t.Errorf("implausible row %+v", r)
		}
		if ran := r.BeforeTTFBms > 0 && r.BeforeP99ms >= r.BeforeTTFBms && r.BeforeRSSMiB > 0; ran != (before != "") {
			t.Errorf("-before %q, row %+v", before, r)
		}
	}
	bins := res.Header.Binaries
	if before != "" && (len(bins) != 2 || len(bins[1].Targets) != 1 || bins[1].Targets[0] != "louter-replay@before") {
		t.Errorf("binaries %+v, want the twin from the older one", bins)
	}
	var out strings.Builder
	printReplay(&out, res)
	if !strings.Contains(out.String(), "| claude-code (anthropic) | 2/2 |") {
		t.Errorf("the table lacks claude-code's second turn:\n%s", out.String())
	}
	if got := strings.Contains(out.String(), "| claude-code (anthropic) | 2/2 | 2 | "); got != (before != "") {
		t.Errorf("-before %q: the before/after table is there: %v:\n%s", before, got, out.String())
	}
	// The results file reads back.
	f := t.TempDir() + "/replay.json"
	if err := results.Write(f, res); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if back, err := results.Read(in); err != nil || len(back.Replay) != len(res.Replay) {
		t.Fatalf("read back: %v", err)
	}
}

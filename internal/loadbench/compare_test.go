package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/loadbench/results"
)

// TestWithBefore checks which targets get a twin from the older binary
// and what each twin is measured against.
func TestWithBefore(t *testing.T) {
	ts := withBefore(selectTargets(targets(bodies{}, "u"), "big,small"), "/old/caddy")
	var got []string
	for _, tg := range ts {
		got = append(got, tg.name+"<"+tg.baseline+">"+tg.bin)
	}
	want := []string{
		"caddy-big<>",
		"louter-big<caddy-big>",
		"louter-big@before<caddy-big>/old/caddy",
		"louter-big-observed<louter-big>",
		"louter-big-observed@before<louter-big@before>/old/caddy",
		"caddy-small<>",
		"louter-small<caddy-small>",
		"louter-small@before<caddy-small>/old/caddy",
		"caddy-small-observed<caddy-small>",
		"louter-small-observed<louter-small>",
		"louter-small-observed@before<louter-small@before>/old/caddy",
	}
	if !slices.Equal(got, want) {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := find(ts, "louter-big@before").label; l != "louter, Anthropic client → OpenAI Chat backend (before)" {
		t.Errorf("twin's label %q", l)
	}
	if find(ts, "louter-big").bin != "" {
		t.Error("withBefore changed the original target")
	}
}

// TestPrintBeforeAfter checks the comparison's tables from synthetic
// results: CPU before → after with the change paired per repetition, the
// ratios to Caddy of both, the memory per stream of both, the skipped
// targets; and that a run without -before prints none of it.
func TestPrintBeforeAfter(t *testing.T) {
	ts := withBefore(selectTargets(targets(bodies{}, "u"), "big"), "/old")
	cpu := map[string][]float64{ // per repetition
		"caddy-big": {500, 400}, "louter-big": {1000, 900}, "louter-big@before": {1250, 1000},
		"louter-big-observed": {1100, 990}, "louter-big-observed@before": {1250, 1100},
	}
	var phases []results.Phase
	for rep := 1; rep <= 2; rep++ {
		for _, tg := range ts {
			p := results.Phase{Target: tg.name, Conc: 16, Rep: rep, CPUPerReq: cpu[tg.name][rep-1], P99ms: 20, TTFBms: 2, RSSMiB: 90}
			if strings.HasSuffix(tg.name, beforeSuffix) {
				p.P99ms, p.TTFBms, p.RSSMiB = 30, 3, 80
			}
			phases = append(phases, p)
		}
	}
	res := &results.Results{
		Header: results.Header{Conc: []int{16}, Reps: 2, Binaries: []results.Binary{
			{Role: "current", Path: "/new", Version: "v2.11.9", Louter: "(devel)", Revision: "abc", Modified: true},
			{Role: "before", Path: "/old", SHA256: "c1daee55c5a7"},
		}, Skipped: []results.Skipped{{Target: "louter-pass@before", Reason: "unrecognized subdirective"}}},
		Summary: summarize(phases, ts, 243),
		Memory: []results.Memory{
			{Target: "caddy-big", Label: "Caddy", Stall: 5, PerStreamMiB: 0.1},
			{Target: "louter-big", Label: "louter", Stall: 5, PerStreamMiB: 0.2, IdleMiB: 30},
			{Target: "louter-big@before", Label: "louter (before)", Stall: 5, PerStreamMiB: 0.25, IdleMiB: 28},
		},
	}
	out := markdownHas(t, res,
		"- current: `/new`, Caddy v2.11.9, louter (devel), revision abc, uncommitted changes\n",
		"- before: `/old`, sha256 c1daee55c5a7\n",
		// 1000/1250 and 900/1000: 0.80 and 0.90, median 0.85.
		"| louter-big | 16 | 1,125 → 950 | **-15.0 %** (0.80, 0.90) | 2.50 → 2.12 | 30.00 → 20.00 | 3.00 → 2.00 | 80.0 → 90.0 |\n",
		"| louter-big-observed | 16 | 1,175 → 1,045 | **-11.0 %** (0.88, 0.90) | 1.05 → 1.10 |",
		"| louter-big | 5 | 0.250 → 0.200 | **-20.0 %** | 28.0 → 30.0 |\n",
		"| louter, Anthropic client → OpenAI Chat backend (before) | 1,125 | **2.50** (2.50, 2.50; to caddy-big) |",
		"| louter (before) | 5 | 0 | 28.0 | 0.0 | 0.250 | **2.50** | 0 |", // its ratio to Caddy
		"- `louter-pass@before`: unrecognized subdirective\n",
		"louter-big@before, Caddy `tracing` + `metrics` at c=16",
	)
	if strings.Contains(out, "| louter, 100 KB request, Caddy `tracing` + `metrics` on (before) |") {
		t.Errorf("the observed twin is in the issue's table:\n%s", out)
	}

	res.Header.Binaries, res.Header.Skipped = res.Header.Binaries[:1], nil
	var b strings.Builder
	printBeforeAfter(&b, res)
	if b.Len() != 0 {
		t.Errorf("without -before: %q", b.String())
	}
}

// TestBeforeRun runs the benchmark briefly, end to end, with this test
// binary as the current Caddy and, as the -before binary, a script that
// runs it too but, like an older build, rejects the `tracing` directive:
// the observed twin is skipped with Caddy's error and the run goes on,
// the other twin is measured in the same repetitions, and the results
// say which binary each target ran from.
func TestBeforeRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	old := filepath.Join(t.TempDir(), "old-caddy")
	script := "#!/bin/sh\n" +
		`if [ "$1" = run ] && grep -q tracing "$3"; then echo "Error: adapting config using caddyfile: Caddyfile:6: unrecognized directive: tracing" >&2; exit 1; fi` + "\n" +
		`exec "` + os.Args[0] + `" "$@"` + "\n"
	if err := os.WriteFile(old, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config{
		requests: 20, reps: 2, conc: []int{2}, paced: 4, pace: 100 * time.Microsecond, only: "big",
		fixture: "../../testdata/bench/claude_code_100k.json", caddy: os.Args[0], before: old,
		env: []string{caddyProcessEnv + "=1"}, gomaxprocs: 1, timeout: 30 * time.Second,
	}
	r, err := newRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.run()
	r.close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Errors != 0 || res.Header.Validated == 0 {
		t.Fatalf("%d of %d responses failed", res.Header.Errors, res.Header.Validated)
	}
	if s := res.Header.Skipped; len(s) != 1 || s[0].Target != "louter-big-observed@before" || !strings.HasPrefix(s[0].Reason, "caddy exited before it listened") || !strings.HasSuffix(s[0].Reason, "unrecognized directive: tracing") {
		t.Errorf("skipped %+v, want louter-big-observed@before with Caddy's error", s)
	}
	bins := res.Header.Binaries
	if len(bins) != 2 || bins[0].Role != "current" || bins[1].Role != "before" || bins[1].Path != old ||
		!slices.Equal(bins[0].Targets, []string{"caddy-big", "louter-big", "louter-big-observed"}) ||
		!slices.Equal(bins[1].Targets, []string{"louter-big@before"}) {
		t.Fatalf("binaries %+v", bins)
	}
	// A test binary's Caddy version is "unknown"; louter is its main module.
	if b := bins[0]; b.Version == "" || b.Louter == "" || len(b.SHA256) != 12 {
		t.Errorf("the current binary's build: %+v", b)
	}
	rows := map[string]results.Summary{}
	for _, s := range res.Summary {
		rows[s.Target+map[bool]string{true: " paced"}[s.Paced]] = s
	}
	for _, name := range []string{"louter-big", "louter-big paced"} {
		after, before := rows[name], rows[strings.Replace(name, "louter-big", "louter-big@before", 1)]
		if before.Baseline != "caddy-big" || len(before.Ratios) != 2 || len(after.Changes) != 2 || after.Change <= 0 {
			t.Errorf("%s: before %+v, after %+v; want both against caddy-big and the change paired per repetition", name, before, after)
		}
	}
	markdownHas(t, res, "| louter-big | 2 | ", "| louter-big | 2 paced | ", "- `louter-big-observed@before`: ")
}

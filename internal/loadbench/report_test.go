package main

import (
	"strings"
	"testing"

	"github.com/louter/louter/internal/loadbench/results"
)

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 979: "979", 1007: "1,007", 11657.4: "11,657", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestIntList(t *testing.T) {
	if got, err := intList("1, 16,"); err != nil || len(got) != 2 || got[0] != 1 || got[1] != 16 {
		t.Errorf("intList = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "x", "1,-2"} {
		if _, err := intList(bad); err == nil {
			t.Errorf("intList(%q): no error", bad)
		}
	}
}

// TestPrintMarkdown checks the tables carry the rows and columns
// and the tracing cost line.
func TestPrintMarkdown(t *testing.T) {
	ts := targets(bodies{}, "u")
	var phases []results.Phase
	for rep := 1; rep <= 2; rep++ {
		for _, c := range []int{1, 16} {
			for i, tg := range ts {
				phases = append(phases, results.Phase{Target: tg.name, Conc: c, Rep: rep, CPUPerReq: float64(1000 + 100*i), Requests: 5})
			}
		}
	}
	res := &results.Results{
		Header:  results.Header{Conc: []int{1, 16}, Reps: 2},
		Summary: summarize(phases, ts, 243),
		Memory: []results.Memory{
			{Target: "caddy-big", Label: "Caddy big", Stall: 5, Streams: 10, PerStreamMiB: 0.125},
			{Target: "louter-big", Label: "louter big", Stall: 5, Streams: 10, PerStreamMiB: 0.25},
		},
	}
	out := markdownHas(t, res,
		"| target | c=1 CPU µs/req | c=16 CPU µs/req | ratio at c=16 (per repetition) |",
		"| Caddy `reverse_proxy`, same bytes in OpenAI form | 1,000 | 1,000 | 1.0 (baseline) |",
		"| louter, Anthropic client → OpenAI Chat backend | 1,100 | 1,100 | **1.10** (1.10, 1.10; to caddy-big) |",
		"louter-small, Caddy `tracing` + `metrics` at c=16: 1,700 µs/req against 1,500 µs/req without, **+13.3 %**",
		"Of that, Caddy's own (its plain proxy: +14.3 %) is about 200 µs/req; louter adds about 0 µs/req, **+0.0 %** of louter's CPU (per repetition: 1.00, 1.00).",
		"louter-big, Caddy `tracing` + `metrics` at c=1: 1,200 µs/req against 1,100 µs/req without, **+9.1 %**",
		"| louter big | 5 | 10 | 0.0 | 0.0 | 0.250 | **2.00** | 0 |",
	)
	if strings.Contains(out, "| louter, ~1 KB request, Caddy `tracing` + `metrics` on |") || strings.Contains(out, "| Caddy `reverse_proxy`, ~1 KB request, `tracing` + `metrics` on |") {
		t.Errorf("the observed target is in the issue's table:\n%s", out)
	}
}

// TestLouterShare checks louter's share of the tracing cost is paired per
// repetition: louter's rise less Caddy's, scaled to louter's CPU.
func TestLouterShare(t *testing.T) {
	obs := results.Summary{Ratios: []float64{1.20, 1.10}}
	caddy := results.Summary{Ratio: 1.15, Ratios: []float64{1.10, 1.20}}
	want := "Of that, Caddy's own (its plain proxy: +15.0 %) is about 60 µs/req; louter adds about 30 µs/req, **+5.0 %** of louter's CPU (per repetition: 1.13, 0.97).\n"
	if got := louterShare(obs, caddy, 600, 400); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := louterShare(obs, results.Summary{}, 600, 400); got != "" {
		t.Errorf("without Caddy's ratios: %q", got)
	}
}

// markdownHas prints res as printMarkdown does and fails t for each of
// wants the output lacks; it returns the output.
func markdownHas(t *testing.T, res *results.Results, wants ...string) string {
	t.Helper()
	var b strings.Builder
	printMarkdown(&b, res)
	out := b.String()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	return out
}

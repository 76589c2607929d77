package main

import (
	"slices"
	"testing"

	"github.com/louter/louter/internal/loadbench/results"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.xs)
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
		if !slices.Equal(in, tt.xs) {
			t.Errorf("median reordered its input: %v", tt.xs)
		}
	}
}

// TestSummarize checks the medians and that ratios pair each repetition
// with the baseline's phase of the same repetition and concurrency.
func TestSummarize(t *testing.T) {
	ts := []*target{{name: "caddy", label: "Caddy"}, {name: "louter", label: "louter", baseline: "caddy"}}
	phases := []results.Phase{
		{Target: "caddy", Conc: 16, Rep: 1, CPUPerReq: 100, TTFBms: 1, P99ms: 10, Requests: 10},
		{Target: "louter", Conc: 16, Rep: 1, CPUPerReq: 300, TTFBms: 2, P99ms: 12, Requests: 10, Errors: 1},
		{Target: "caddy", Conc: 16, Rep: 2, CPUPerReq: 200, TTFBms: 3, P99ms: 10, Requests: 10},
		{Target: "louter", Conc: 16, Rep: 2, CPUPerReq: 300, TTFBms: 4, P99ms: 14, Requests: 10},
		{Target: "caddy", Conc: 16, Rep: 3, CPUPerReq: 150, TTFBms: 2, P99ms: 10, Requests: 10},
		{Target: "louter", Conc: 16, Rep: 3, CPUPerReq: 300, TTFBms: 3, P99ms: 13, Requests: 10},
		{Target: "caddy", Conc: 1, Rep: 1, CPUPerReq: 50},
		{Target: "louter", Conc: 16, Paced: true, Rep: 1, CPUPerReq: 486},
	}
	got := summarize(phases, ts, 243)
	if len(got) != 4 {
		t.Fatalf("%d rows, want 4 (caddy and louter at c=16, caddy at c=1, louter paced): %+v", len(got), got)
	}
	c, l := got[0], got[1]
	if c.Target != "caddy" || c.CPUPerReq != 150 || c.Ratio != 0 || c.Baseline != "" || c.Label != "Caddy" {
		t.Errorf("caddy row %+v", c)
	}
	if l.Target != "louter" || l.CPUPerReq != 300 || !slices.Equal(l.Ratios, []float64{3, 1.5, 2}) || l.Ratio != 2 {
		t.Errorf("louter row %+v, want ratios 3, 1.5, 2 (median 2)", l)
	}
	if l.AddedTTFB != 1 || l.AddedP99 != 3 || l.Requests != 30 || l.Errors != 1 {
		t.Errorf("louter row: added TTFB %v p99 %v, requests %d errors %d; want 1, 3, 30, 1", l.AddedTTFB, l.AddedP99, l.Requests, l.Errors)
	}
	if p := got[3]; !p.Paced || p.CPUPerEvent != 2 || p.Ratios != nil {
		t.Errorf("paced row %+v: want 2 µs per event and no ratio (no paced baseline)", p)
	}
}

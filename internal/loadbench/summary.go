package main

import (
	"slices"

	"github.com/louter/louter/internal/loadbench/results"
)

// median of xs (0 for none); xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// summarize folds the phases of each target, concurrency and mode into a
// Summary, in the order the targets ran, with ratios paired per
// repetition against the baseline's phase of the same repetition.
func summarize(phases []results.Phase, ts []*target, events int) []results.Summary {
	type key struct {
		target string
		conc   int
		paced  bool
	}
	byKey := map[key][]results.Phase{}
	var order []key
	for _, p := range phases {
		k := key{p.Target, p.Conc, p.Paced}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], p)
	}
	info := map[string]*target{}
	for _, t := range ts {
		info[t.name] = t
	}
	field := func(ps []results.Phase, f func(results.Phase) float64) float64 {
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = f(p)
		}
		return median(xs)
	}
	var out []results.Summary
	sums := map[key]int{} // index in out
	for _, k := range order {
		ps := byKey[k]
		s := results.Summary{Target: k.target, Conc: k.conc, Paced: k.paced}
		if t := info[k.target]; t != nil {
			s.Label, s.Baseline = t.label, t.baseline
		}
		s.CPUPerReq = field(ps, func(p results.Phase) float64 { return p.CPUPerReq })
		s.CPUPerEvent = s.CPUPerReq / float64(events)
		s.RSSMiB = field(ps, func(p results.Phase) float64 { return p.RSSMiB })
		s.P50ms = field(ps, func(p results.Phase) float64 { return p.P50ms })
		s.P99ms = field(ps, func(p results.Phase) float64 { return p.P99ms })
		s.TTFBms = field(ps, func(p results.Phase) float64 { return p.TTFBms })
		for _, p := range ps {
			s.Requests += p.Requests
			s.Errors += p.Errors
		}
		if base, ok := byKey[key{s.Baseline, k.conc, k.paced}]; ok && s.Baseline != "" {
			s.Ratios = pairedRatios(ps, base)
			s.Ratio = median(s.Ratios)
		}
		if prev, ok := byKey[key{k.target + beforeSuffix, k.conc, k.paced}]; ok {
			s.Changes = pairedRatios(ps, prev)
			s.Change = median(s.Changes)
		}
		out = append(out, s)
		sums[k] = len(out) - 1
	}
	// Added latencies once every row has its medians.
	for i := range out {
		s := &out[i]
		if b, ok := sums[key{s.Baseline, s.Conc, s.Paced}]; ok && s.Baseline != "" {
			s.AddedTTFB = s.TTFBms - out[b].TTFBms
			s.AddedP99 = s.P99ms - out[b].P99ms
		}
	}
	return out
}

// pairedRatios are the CPU per request of each phase of ps over that of
// the phase of ref in the same repetition: targets that ran side by side
// saw the same machine, so the ratio cancels its drift.
func pairedRatios(ps, ref []results.Phase) []float64 {
	var out []float64
	for _, p := range ps {
		for _, b := range ref {
			if b.Rep == p.Rep && b.CPUPerReq > 0 {
				out = append(out, p.CPUPerReq/b.CPUPerReq)
			}
		}
	}
	return out
}

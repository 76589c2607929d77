package main

import (
	"encoding/json"
	"os"
	"slices"
)

// Results is the machine-readable output of a run (the -out file), which
// internal/perfchart draws.
type Results struct {
	Header Header `json:"header"`
	// Phases are the raw measurements, one per target, concurrency and
	// repetition, in the order they ran.
	Phases []Phase `json:"phases"`
	// Summary has a row per target and concurrency (and for the paced
	// mode): medians over the repetitions.
	Summary []Summary `json:"summary"`
	// Memory has a row per target and stall point of the memory mode.
	Memory []Memory `json:"memory,omitempty"`
}

// Header describes the machine and the run.
type Header struct {
	Date       string `json:"date"`
	Go         string `json:"go"`
	CPU        string `json:"cpu"`
	NProc      int    `json:"nproc"`
	GOMAXPROCS int    `json:"gomaxprocs"` // of the Caddy processes; 0 = not set
	Commit     string `json:"commit,omitempty"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
	Requests   int    `json:"requests_per_phase"`
	Paced      int    `json:"paced_requests_per_phase"`
	Reps       int    `json:"repetitions"`
	Conc       []int  `json:"concurrency"`
	// Validated and Errors count every response of the run, warm-ups
	// and the memory mode included.
	Validated int `json:"validated"`
	Errors    int `json:"errors"`
}

// Phase is one load against one target.
type Phase struct {
	Target    string  `json:"target"`
	Conc      int     `json:"conc"`
	Paced     bool    `json:"paced,omitempty"`
	Rep       int     `json:"rep"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	CPUPerReq float64 `json:"cpu_us_per_req"`
	RSSMiB    float64 `json:"rss_mib"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	TTFBms    float64 `json:"ttfb_ms"` // median
	WallSec   float64 `json:"wall_s"`
	// FirstError describes the first failed request.
	FirstError string `json:"first_error,omitempty"`
}

// Summary is a target at one concurrency over all repetitions.
type Summary struct {
	Target   string `json:"target"`
	Label    string `json:"label"`
	Baseline string `json:"baseline,omitempty"`
	Conc     int    `json:"conc"`
	Paced    bool   `json:"paced,omitempty"`
	// CPUPerReq is the median of the repetitions' CPU µs per request;
	// CPUPerEvent divides it by the upstream stream's events.
	CPUPerReq   float64 `json:"cpu_us_per_req"`
	CPUPerEvent float64 `json:"cpu_us_per_event"`
	// Ratios are this target's CPU over its baseline's, paired per
	// repetition; Ratio is their median.
	Ratios    []float64 `json:"ratios,omitempty"`
	Ratio     float64   `json:"ratio,omitempty"`
	RSSMiB    float64   `json:"rss_mib"`
	P50ms     float64   `json:"p50_ms"`
	P99ms     float64   `json:"p99_ms"`
	TTFBms    float64   `json:"ttfb_ms"`
	AddedTTFB float64   `json:"added_ttfb_ms"` // over the baseline's, medians
	AddedP99  float64   `json:"added_p99_ms"`
	Requests  int       `json:"requests"`
	Errors    int       `json:"errors"`
}

// Memory is the memory mode's measurement of one target at one stall
// point: streams held open after stall upstream events.
type Memory struct {
	Target  string  `json:"target"`
	Label   string  `json:"label"`
	Stall   int     `json:"stall_after_events"`
	Streams int     `json:"streams"`
	IdleMiB float64 `json:"idle_rss_mib"`
	HeldMiB float64 `json:"held_rss_mib"`
	// PerStreamMiB is (held - idle) / streams.
	PerStreamMiB float64 `json:"per_stream_mib"`
	Errors       int     `json:"errors"`
	FirstError   string  `json:"first_error,omitempty"`
}

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
func summarize(phases []Phase, ts []*target, events int) []Summary {
	type key struct {
		target string
		conc   int
		paced  bool
	}
	byKey := map[key][]Phase{}
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
	field := func(ps []Phase, f func(Phase) float64) float64 {
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = f(p)
		}
		return median(xs)
	}
	var out []Summary
	sums := map[key]int{} // index in out
	for _, k := range order {
		ps := byKey[k]
		s := Summary{Target: k.target, Conc: k.conc, Paced: k.paced}
		if t := info[k.target]; t != nil {
			s.Label, s.Baseline = t.label, t.baseline
		}
		s.CPUPerReq = field(ps, func(p Phase) float64 { return p.CPUPerReq })
		s.CPUPerEvent = s.CPUPerReq / float64(events)
		s.RSSMiB = field(ps, func(p Phase) float64 { return p.RSSMiB })
		s.P50ms = field(ps, func(p Phase) float64 { return p.P50ms })
		s.P99ms = field(ps, func(p Phase) float64 { return p.P99ms })
		s.TTFBms = field(ps, func(p Phase) float64 { return p.TTFBms })
		for _, p := range ps {
			s.Requests += p.Requests
			s.Errors += p.Errors
		}
		if base, ok := byKey[key{s.Baseline, k.conc, k.paced}]; ok && s.Baseline != "" {
			for _, p := range ps {
				for _, b := range base {
					if b.Rep == p.Rep && b.CPUPerReq > 0 {
						s.Ratios = append(s.Ratios, p.CPUPerReq/b.CPUPerReq)
					}
				}
			}
			s.Ratio = median(s.Ratios)
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

// writeJSON writes r to path, indented.
func writeJSON(path string, r *Results) error {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// Package results is the machine-readable output of the load benchmark
// (internal/loadbench), written by it and read by the chart
// (internal/perfchart).
package results

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Results is the output of one run (loadbench's -out file).
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
	// Replay has a row per recorded session, turn and concurrency of the
	// session-replay mode (-replay), which runs alone.
	Replay []Replay `json:"replay,omitempty"`
}

// Header describes the machine and the run.
type Header struct {
	Date       string  `json:"date"`
	Go         string  `json:"go"`
	CPU        string  `json:"cpu"`
	NProc      int     `json:"nproc"`
	GOMAXPROCS int     `json:"gomaxprocs"` // of the Caddy processes; 0 = not set
	Commit     string  `json:"commit,omitempty"`
	LoadBefore string  `json:"loadavg_before"`
	LoadAfter  string  `json:"loadavg_after"`
	Requests   int     `json:"requests_per_phase"`
	Paced      int     `json:"paced_requests_per_phase"`
	PaceMS     float64 `json:"pace_ms"` // between upstream events in the paced mode
	Reps       int     `json:"repetitions"`
	Conc       []int   `json:"concurrency"`
	// Validated and Errors count every response of the run, warm-ups
	// and the memory mode included.
	Validated int `json:"validated"`
	Errors    int `json:"errors"`
	// Binaries are the Caddy binaries the run's targets ran from: the
	// current one (-caddy, or cmd/caddy built for the run) and, with
	// -before, the older one.
	Binaries []Binary `json:"binaries,omitempty"`
	// Skipped are the targets that could not run, with the reason: an
	// older binary (-before) that rejects a target's config is reported
	// here rather than aborting the run.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Binary is a Caddy binary and what the run could learn of its build.
type Binary struct {
	// Role is "current" or "before"; the targets that ran from the
	// older binary have names ending in "@before".
	Role string `json:"role"`
	Path string `json:"path"`
	// SHA256 is the first 12 hex digits of the file's hash: it tells two
	// builds apart when they carry no VCS revision.
	SHA256 string `json:"sha256,omitempty"`
	// Version is `caddy version`'s first word (Caddy's own version).
	Version string `json:"caddy_version,omitempty"`
	// From `caddy build-info`: louter's module version ("(devel)" for a
	// build of the checkout), the VCS revision, whether the checkout had
	// uncommitted changes, and the Go release.
	Louter   string `json:"louter_version,omitempty"`
	Revision string `json:"vcs_revision,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	Go       string `json:"go,omitempty"`
	// Targets are the names of the targets that ran from this binary.
	Targets []string `json:"targets"`
}

// Skipped is a target the run left out, and why.
type Skipped struct {
	Target string `json:"target"`
	Reason string `json:"reason"`
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
	Ratios []float64 `json:"ratios,omitempty"`
	Ratio  float64   `json:"ratio,omitempty"`
	// With -before, a current target's row has its CPU over the same
	// target's from the older binary ("<target>@before"), paired per
	// repetition, and their median: 0.9 is 10 % less CPU than before.
	Changes   []float64 `json:"changes_to_before,omitempty"`
	Change    float64   `json:"change_to_before,omitempty"`
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

// Replay is one turn of a replayed session at one concurrency, louter
// against Caddy's plain reverse_proxy carrying the bytes louter sent the
// backend; latencies pool every repetition.
type Replay struct {
	Session string `json:"session"` // the recording's name
	Client  string `json:"client"`  // the agent's protocol
	Turn    int    `json:"turn"`    // 1-based
	Turns   int    `json:"turns"`   // in the session
	Conc    int    `json:"conc"`
	// RequestKB is the size of the turn's request as the agent sent it.
	RequestKB    float64 `json:"request_kb"`
	CaddyTTFBms  float64 `json:"caddy_ttfb_ms"` // medians
	LouterTTFBms float64 `json:"louter_ttfb_ms"`
	AddedTTFBms  float64 `json:"added_ttfb_ms"`
	CaddyP99ms   float64 `json:"caddy_p99_ms"` // of the whole stream
	LouterP99ms  float64 `json:"louter_p99_ms"`
	AddedP99ms   float64 `json:"added_p99_ms"`
	// The CPU per turn is the process's over the session's phases,
	// divided by the turns it served (every turn of the session alike).
	CaddyCPUPerTurn  float64 `json:"caddy_cpu_us_per_turn"`
	LouterCPUPerTurn float64 `json:"louter_cpu_us_per_turn"`
	// The RSS is the highest seen after the session's phases.
	CaddyRSSMiB  float64 `json:"caddy_rss_mib"`
	LouterRSSMiB float64 `json:"louter_rss_mib"`
	// With -before, the same of louter from the older binary, measured
	// in the same repetitions (0 when it did not run).
	BeforeTTFBms     float64 `json:"before_ttfb_ms,omitempty"`
	BeforeP99ms      float64 `json:"before_p99_ms,omitempty"`
	BeforeCPUPerTurn float64 `json:"before_cpu_us_per_turn,omitempty"`
	BeforeRSSMiB     float64 `json:"before_rss_mib,omitempty"`
	Samples          int     `json:"samples"` // louter's turns measured
	Errors           int     `json:"errors"`  // of the session's phases, every target
}

// Write writes r to path as indented JSON.
func Write(path string, r *Results) error {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// Read decodes a results file. It refuses one without a summary: a run
// that measured nothing has nothing to draw.
func Read(r io.Reader) (*Results, error) {
	var res Results
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("loadbench results: %w", err)
	}
	if len(res.Summary) == 0 && len(res.Replay) == 0 {
		return nil, fmt.Errorf("loadbench results: no summary or replay rows")
	}
	return &res, nil
}

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/loadbench/results"
)

// warmup is the number of requests each target gets before it is
// measured: connection pools, lazily built state, the heap's first growth.
const warmup = 50

// runner holds what a run shares: the binary, the upstream, the span
// receiver, the targets and their processes.
type runner struct {
	cfg     config
	dir     string // temporary: the binary and the Caddyfiles
	bin     string
	up      *harness.Upstream
	sink    *harness.SpanSink
	targets []*target
	skipped []results.Skipped // targets left out (compare.go)
	events  int               // per upstream stream

	mu        sync.Mutex
	procs     []*harness.Process // started and not yet stopped
	clients   map[int]*http.Client
	validated int
	errors    int
}

func newRunner(cfg config) (r *runner, err error) {
	if r, err = newBareRunner(cfg); err != nil {
		return nil, err
	}
	r.events = len(harness.OpenAIChatStream())
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	b, err := loadBodies(cfg.fixture)
	if err != nil {
		return nil, err
	}
	if r.up, err = harness.StartUpstream(); err != nil {
		return nil, err
	}
	if r.sink, err = harness.StartSpanSink(); err != nil {
		return nil, err
	}
	all := targets(b, r.up.Addr)
	if !cfg.reverse {
		all = slices.DeleteFunc(all, func(t *target) bool { return t.reverse })
	}
	r.targets = selectTargets(all, cfg.only)
	if len(r.targets) == 0 {
		return nil, fmt.Errorf("-only %q matches no target", cfg.only)
	}
	if cfg.before != "" {
		r.targets = withBefore(r.targets, cfg.before)
	}
	return r, nil
}

// newBareRunner makes the run's directory and finds or builds Caddy.
func newBareRunner(cfg config) (r *runner, err error) {
	r = &runner{cfg: cfg, clients: map[int]*http.Client{}}
	if r.dir, err = os.MkdirTemp("", "loadbench-"); err != nil {
		return nil, err
	}
	r.bin = cfg.caddy
	if r.bin == "" {
		fmt.Fprintln(os.Stderr, "loadbench: building cmd/caddy")
		if r.bin, err = harness.BuildCaddy(r.dir); err != nil {
			r.close()
			return nil, err
		}
	}
	return r, nil
}

// selectTargets keeps the targets whose names contain one of the
// comma-separated words of only, with their baselines (all for "").
func selectTargets(all []*target, only string) []*target {
	if only == "" {
		return all
	}
	keep := map[string]bool{}
	for _, t := range all {
		for _, w := range strings.Split(only, ",") {
			if w != "" && strings.Contains(t.name, w) {
				for n := t.name; n != ""; {
					keep[n] = true
					n = find(all, n).baseline
				}
			}
		}
	}
	var out []*target
	for _, t := range all {
		if keep[t.name] {
			out = append(out, t)
		}
	}
	return out
}

func find(ts []*target, name string) *target {
	for _, t := range ts {
		if t.name == name {
			return t
		}
	}
	return &target{}
}

// close stops every process and server the run started and removes its
// temporary files. It may run twice (an interrupt).
func (r *runner) close() {
	r.mu.Lock()
	procs := r.procs
	r.procs = nil
	r.mu.Unlock()
	for _, p := range procs {
		p.Stop()
	}
	if r.up != nil {
		_ = r.up.Close()
	}
	if r.sink != nil {
		r.sink.Close()
	}
	if r.dir != "" {
		_ = os.RemoveAll(r.dir)
	}
}

// start runs t in a Caddy process of its own, on fresh ports.
func (r *runner) start(t *target) error {
	ports, err := harness.FreePorts(3)
	if err != nil {
		return err
	}
	t.port, t.metricsPort, t.adminPort = ports[0], ports[1], 0
	if r.profiled(t) {
		t.adminPort = ports[2]
	}
	env := slices.Clone(r.cfg.env)
	if r.cfg.gomaxprocs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", r.cfg.gomaxprocs))
	}
	if t.observed {
		env = append(env, r.sink.TracingEnv()...)
	}
	bin := r.bin
	if t.bin != "" {
		bin = t.bin
	}
	p, err := harness.Start(bin, r.dir, t.caddyfile(), env...)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	r.mu.Lock()
	r.procs = append(r.procs, p)
	r.mu.Unlock()
	t.proc = p
	if err := p.WaitListening(t.port, 15*time.Second); err != nil {
		return fmt.Errorf("%s: %w; its log:\n%.3000s", t.name, err, p.Logs())
	}
	return nil
}

// stop ends t's process.
func (r *runner) stop(t *target) {
	r.mu.Lock()
	r.procs = slices.DeleteFunc(r.procs, func(p *harness.Process) bool { return p == t.proc })
	r.mu.Unlock()
	t.proc.Stop()
}

// client is the HTTP client for loads of concurrency conc.
func (r *runner) client(conc int) *http.Client {
	if c := r.clients[conc]; c != nil {
		return c
	}
	c := harness.NewClient(conc, r.cfg.timeout)
	r.clients[conc] = c
	return c
}

// count adds a load's responses to the run's totals.
func (r *runner) count(res harness.LoadResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.validated += res.Requests
	r.errors += res.Errors
}

// run measures every target at every concurrency, alternating them in
// each repetition, then the paced and memory modes.
func (r *runner) run() (*results.Results, error) {
	res := &results.Results{Header: header(r.cfg)}
	for _, t := range slices.Clone(r.targets) {
		if err := r.start(t); err != nil {
			if !skippable(t) {
				return nil, err
			}
			r.skip(t, reasonOf(t, err))
		}
	}
	top := slices.Max(r.cfg.conc)
	for _, t := range slices.Clone(r.targets) {
		if !slices.Contains(r.targets, t) {
			continue // skipped with its baseline
		}
		lr := harness.Load(r.client(top), t.request(), warmup, top)
		if lr.Errors > 0 && skippable(t) {
			// The warm-up's failures are the reason, not the run's errors.
			r.skip(t, fmt.Sprintf("warm-up: %d of %d requests failed, the first: %s", lr.Errors, lr.Requests, lr.FirstError))
			continue
		}
		r.count(lr)
		if lr.Errors > 0 {
			return nil, fmt.Errorf("%s: warm-up: %d errors, the first: %s; its log:\n%.3000s", t.name, lr.Errors, lr.FirstError, t.proc.Logs())
		}
	}
	res.Header.Binaries = r.binaries()
	for rep := 1; rep <= r.cfg.reps; rep++ {
		for _, c := range r.cfg.conc {
			for _, t := range r.targets {
				p, err := r.phase(t, c, r.cfg.requests, rep, false)
				if err != nil {
					return nil, err
				}
				res.Phases = append(res.Phases, p)
			}
		}
	}
	for _, t := range r.targets {
		if r.profiled(t) {
			if err := r.profileCPU(t, top); err != nil {
				return nil, err
			}
		}
	}
	if r.cfg.paced > 0 {
		paced, err := r.pacedMode(top)
		if err != nil {
			return nil, err
		}
		res.Phases = append(res.Phases, paced...)
	}
	if err := r.checkObserved(); err != nil {
		return nil, err
	}
	for _, t := range r.targets {
		r.stop(t)
	}
	if r.cfg.streams > 0 {
		mem, err := r.memoryMode()
		if err != nil {
			return nil, err
		}
		res.Memory = mem
	}
	res.Summary = summarize(res.Phases, r.targets, r.events)
	res.Header.LoadAfter = loadavg()
	res.Header.Validated, res.Header.Errors = r.validated, r.errors
	res.Header.Skipped = r.skipped
	return res, nil
}

// pacedMode runs Caddy and louter with the big request, the upstream
// events cfg.pace apart, at concurrency conc.
func (r *runner) pacedMode(conc int) ([]results.Phase, error) {
	var ts []*target
	for _, t := range r.targets {
		if t.name == "caddy-big" || strings.TrimSuffix(t.name, beforeSuffix) == "louter-big" {
			ts = append(ts, t)
		}
	}
	r.up.SetPace(r.cfg.pace)
	defer r.up.SetPace(0)
	var out []results.Phase
	for rep := 1; rep <= r.cfg.reps; rep++ {
		for _, t := range ts {
			p, err := r.phase(t, conc, r.cfg.paced, rep, true)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// phase sends n requests to t, conc at a time, and measures its process.
func (r *runner) phase(t *target, conc, n, rep int, paced bool) (results.Phase, error) {
	cpu0, err := t.proc.CPU()
	if err != nil {
		return results.Phase{}, fmt.Errorf("%s: %w; its log:\n%.3000s", t.name, err, t.proc.Logs())
	}
	lr := harness.Load(r.client(conc), t.request(), n, conc)
	cpu1, err := t.proc.CPU()
	if err != nil {
		return results.Phase{}, fmt.Errorf("%s: %w; its log:\n%.3000s", t.name, err, t.proc.Logs())
	}
	rss, err := t.proc.RSS()
	if err != nil {
		return results.Phase{}, err
	}
	r.count(lr)
	p := results.Phase{
		Target: t.name, Conc: conc, Paced: paced, Rep: rep, Requests: n, Errors: lr.Errors,
		CPUPerReq:  float64((cpu1 - cpu0).Microseconds()) / float64(n),
		RSSMiB:     mib(rss),
		P50ms:      ms(harness.Percentile(lr.Latencies, 50)),
		P99ms:      ms(harness.Percentile(lr.Latencies, 99)),
		TTFBms:     ms(harness.Percentile(lr.TTFBs, 50)),
		WallSec:    lr.Wall.Seconds(),
		FirstError: lr.FirstError,
	}
	mode := ""
	if paced {
		mode = " paced"
	}
	fmt.Fprintf(os.Stderr, "rep %d c=%d%s %-26s %8.0f µs/req  p50 %6.2f ms  p99 %6.2f ms  ttfb %5.2f ms  rss %5.1f MiB  errors %d  (%.1fs)\n",
		rep, conc, mode, t.name, p.CPUPerReq, p.P50ms, p.P99ms, p.TTFBms, p.RSSMiB, p.Errors, p.WallSec)
	if lr.Errors > 0 {
		fmt.Fprintf(os.Stderr, "  first error: %s\n", lr.FirstError)
	}
	return p, nil
}

// checkObserved makes sure the observed target really traced and
// counted: its spans reached the receiver and louter's counters are
// served with Caddy's metrics. An older binary's twin (-before) may
// predate those counters: its failure is a warning, not the run's end.
func (r *runner) checkObserved() error {
	for _, t := range r.targets {
		if !t.observed {
			continue
		}
		if err := r.checkObservedOne(t); err != nil && skippable(t) {
			fmt.Fprintf(os.Stderr, "loadbench: warning: %v\n", err)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// checkObservedOne checks one observed target.
func (r *runner) checkObservedOne(t *target) error {
	// The batch span processor exports every 200 ms (TracingEnv).
	for i := 0; i < 100 && r.sink.Spans() == 0; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if r.sink.Spans() == 0 {
		return fmt.Errorf("%s: the OTLP receiver got no spans; its log:\n%.3000s", t.name, t.proc.Logs())
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", t.metricsPort))
	if err != nil {
		return fmt.Errorf("%s: metrics: %w", t.name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if isLouter(t) && !strings.Contains(string(body), "louter_requests_total{") {
		return fmt.Errorf("%s: its metrics lack louter_requests_total:\n%.2000s", t.name, body)
	}
	return nil
}

func mib(b int64) float64        { return float64(b) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/loadbench/results"
)

// memoryTargets are the targets the memory mode measures: Caddy and
// louter with the big and the small request.
// With -before, louter's twins from the older binary follow their
// originals.
var memoryTargets = []string{"caddy-big", "louter-big", "louter-big" + beforeSuffix, "caddy-small", "louter-small", "louter-small" + beforeSuffix}

// memoryMode holds cfg.streams streams open in a fresh process of each
// memory target, stalled upstream after each of cfg.stalls events, and
// measures the RSS they add to the idle (warmed-up) process.
func (r *runner) memoryMode() ([]results.Memory, error) {
	var out []results.Memory
	for _, stall := range r.cfg.stalls {
		for _, name := range memoryTargets {
			t := find(r.targets, name)
			if t.name == "" {
				continue
			}
			m, err := r.holdStreams(t, stall)
			if err != nil && skippable(t) {
				// Its other measurements stand; this one is reported missing.
				r.skipped = append(r.skipped, results.Skipped{Target: t.name, Reason: fmt.Sprintf("memory mode, stall %d: %s", stall, reasonOf(t, err))})
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// holdStreams measures one target at one stall point.
func (r *runner) holdStreams(orig *target, stall int) (results.Memory, error) {
	t := *orig
	if err := r.start(&t); err != nil {
		return results.Memory{}, err
	}
	defer r.stop(&t)
	n := r.cfg.streams
	m := results.Memory{Target: t.name, Label: t.label, Stall: stall, Streams: n}
	lr := harness.Load(r.client(4), t.request(), 20, 4)
	r.count(lr)
	// Let the warm-up's garbage go before the idle figure.
	time.Sleep(time.Second)
	idle, err := t.proc.RSS()
	if err != nil {
		return m, err
	}

	r.up.Stall(stall)
	defer r.up.Release()
	client := harness.NewClient(n, r.cfg.timeout)
	defer client.CloseIdleConnections()
	// n workers, one request each: all n streams open at once.
	done := make(chan harness.LoadResult, 1)
	go func() { done <- harness.Load(client, t.request(), n, n) }()
	// Bounded wait for every stream to reach the stall.
	deadline := time.Now().Add(r.cfg.timeout / 2)
	for r.up.Stalled() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stalled := r.up.Stalled()
	// The events before the stall reach the clients.
	time.Sleep(time.Second)
	held, err := t.proc.RSS()
	if err == nil && r.profiled(&t) {
		err = r.profileHeap(&t, fmt.Sprintf("%s-%d-streams-stall-%d", t.name, n, stall))
	}
	r.up.Release()
	lr = <-done
	r.count(lr)
	m.Errors, m.FirstError = lr.Errors, lr.FirstError
	if err != nil {
		return m, err
	}
	if stalled < n {
		return m, fmt.Errorf("%s: only %d of %d streams reached the stall after %d events; the first error: %s", t.name, stalled, n, stall, m.FirstError)
	}
	m.IdleMiB, m.HeldMiB = mib(idle), mib(held)
	m.PerStreamMiB = (m.HeldMiB - m.IdleMiB) / float64(n)
	fmt.Fprintf(os.Stderr, "memory %-13s stall %3d: idle %6.1f MiB, %d streams %7.1f MiB, %.3f MiB/stream, errors %d\n",
		t.name, stall, m.IdleMiB, n, m.HeldMiB, m.PerStreamMiB, m.Errors)
	return m, nil
}

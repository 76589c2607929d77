package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
)

// profiled reports whether -profile names t (one of its comma-separated
// target names).
func (r *runner) profiled(t *target) bool {
	for _, name := range strings.Split(r.cfg.profile, ",") {
		if name != "" && name == t.name {
			return true
		}
	}
	return false
}

// profileCPU takes a CPU profile of t's process from Caddy's admin pprof
// endpoint over cfg.profileSeconds while loading it at concurrency conc,
// and writes it to <profile-dir>/<target>.cpu.pprof.
func (r *runner) profileCPU(t *target, conc int) error {
	secs := r.cfg.profileSeconds
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second+time.Minute)
	defer cancel()
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		b, err := r.pprof(ctx, t, fmt.Sprintf("profile?seconds=%d", secs))
		done <- result{b, err}
	}()
	// Load until the profile is in, in rounds of a bounded size.
	for {
		select {
		case res := <-done:
			if res.err != nil {
				return fmt.Errorf("%s: CPU profile: %w", t.name, res.err)
			}
			return r.writeProfile(t.name+".cpu.pprof", res.body)
		default:
		}
		lr := harness.Load(r.client(conc), t.request(), 4*conc, conc)
		r.count(lr)
		if ctx.Err() != nil {
			return fmt.Errorf("%s: CPU profile: %w", t.name, ctx.Err())
		}
	}
}

// profileHeap writes the heap profile of t's process now to
// <profile-dir>/<name>.heap.pprof.
func (r *runner) profileHeap(t *target, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// gc=1: the live heap, as after a collection.
	b, err := r.pprof(ctx, t, "heap?gc=1")
	if err != nil {
		return fmt.Errorf("%s: heap profile: %w", t.name, err)
	}
	return r.writeProfile(name+".heap.pprof", b)
}

// pprof gets /debug/pprof/<path> from t's admin endpoint.
func (r *runner) pprof(ctx context.Context, t *target, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", t.adminPort, path), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %.300s", resp.StatusCode, b)
	}
	return b, err
}

func (r *runner) writeProfile(name string, b []byte) error {
	// The directory is made here, not checked before the run: a missing
	// one would lose the profiles of a run that took minutes.
	if err := os.MkdirAll(r.cfg.profileDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(r.cfg.profileDir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loadbench: wrote %s (go tool pprof -top %s)\n", path, path)
	return nil
}

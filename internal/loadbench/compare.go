package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/louter/louter/internal/loadbench/results"
)

// The before/after comparison (-before): every louter target runs a
// second time from an older Caddy binary, as a target of its own named
// "<target>@before", right after the current one in every repetition and
// against the same Caddy baseline (which runs from the current binary
// only: Caddy's proxy is the yardstick, not the subject). Both builds thus
// see the same machine, load and upstream, and the change is paired per
// repetition like the ratios to Caddy. The older binary gets the same
// site config; one that rejects it (a Caddyfile option newer than it) has
// that target skipped, with the reason, rather than the run aborted.

// beforeSuffix ends the name of a target run from the -before binary.
const beforeSuffix = "@before"

// isLouter reports whether t runs louter's handler (not Caddy's plain
// proxy).
func isLouter(t *target) bool { return strings.HasPrefix(t.site, "louter") }

// withBefore returns ts with, right after each louter target, its twin
// run from bin. A twin's baseline is its original's, or that baseline's
// own twin when the baseline is a louter target too (the observed
// target is measured against louter without tracing, of the same build).
func withBefore(ts []*target, bin string) []*target {
	twinned := map[string]bool{}
	for _, t := range ts {
		twinned[t.name] = isLouter(t)
	}
	var out []*target
	for _, t := range ts {
		out = append(out, t)
		if !twinned[t.name] {
			continue
		}
		b := *t
		b.name += beforeSuffix
		b.label += " (before)"
		b.bin = bin
		if twinned[t.baseline] {
			b.baseline += beforeSuffix
		}
		out = append(out, &b)
	}
	return out
}

// skip leaves t out of the run with the reason, and every target measured
// against it: a ratio to a target that did not run means nothing.
func (r *runner) skip(t *target, reason string) {
	if t.proc != nil {
		r.stop(t)
		t.proc = nil
	}
	fmt.Fprintf(os.Stderr, "loadbench: skipping %s: %s\n", t.name, reason)
	r.skipped = append(r.skipped, results.Skipped{Target: t.name, Reason: reason})
	r.targets = slices.DeleteFunc(r.targets, func(x *target) bool { return x == t })
	for _, d := range slices.Clone(r.targets) {
		if d.baseline == t.name {
			r.skip(d, "its baseline "+t.name+" was skipped")
		}
	}
}

// skippable reports whether a failure of t skips it rather than ending
// the run: only a target of the older binary may fail that way.
func skippable(t *target) bool { return t.bin != "" }

// reasonOf shortens t's start failure to its first line, without the
// target's name (the log that follows is for a person at the terminal).
func reasonOf(t *target, err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimPrefix(strings.TrimSuffix(s, "; its log:"), t.name+": ")
}

// binaries describes the binaries the targets ran from, each with the
// names of its targets.
func (r *runner) binaries() []results.Binary {
	cur := describeBinary("current", r.bin, r.cfg.env)
	var before results.Binary
	if r.cfg.before != "" {
		before = describeBinary("before", r.cfg.before, r.cfg.env)
	}
	for _, t := range r.targets {
		if t.bin != "" {
			before.Targets = append(before.Targets, t.name)
		} else {
			cur.Targets = append(cur.Targets, t.name)
		}
	}
	if r.cfg.before == "" {
		return []results.Binary{cur}
	}
	return []results.Binary{cur, before}
}

// describeBinary hashes the binary at path and asks it `caddy version`
// and `caddy build-info`. What it cannot learn stays empty: an old build
// may lack the VCS stamp.
func describeBinary(role, path string, env []string) results.Binary {
	b := results.Binary{Role: role, Path: path}
	if f, err := os.Open(path); err == nil {
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			b.SHA256 = hex.EncodeToString(h.Sum(nil))[:12]
		}
		f.Close()
	}
	if out := caddyOutput(path, env, "version"); len(out) > 0 {
		b.Version = strings.Fields(string(out))[0]
	}
	// build-info prints debug.BuildInfo: "mod <path> <version>" for the
	// main module, "build vcs.revision=<hash>" among the settings.
	sc := bufio.NewScanner(bytes.NewReader(caddyOutput(path, env, "build-info")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "go":
			b.Go = f[1]
		case len(f) >= 3 && f[0] == "mod" && strings.HasPrefix(f[1], "github.com/louter/louter"):
			b.Louter = f[2]
		case len(f) >= 3 && f[0] == "dep" && f[1] == "github.com/louter/louter":
			b.Louter = f[2] // a build with xcaddy: louter is a dependency
		case len(f) == 2 && f[0] == "build":
			k, v, _ := strings.Cut(f[1], "=")
			switch k {
			case "vcs.revision":
				b.Revision = v
			case "vcs.modified":
				b.Modified = v == "true"
			}
		}
	}
	return b
}

// caddyOutput runs `bin arg` briefly and returns its output, nil on error.
func caddyOutput(bin string, env []string, arg string) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, arg)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	return out
}

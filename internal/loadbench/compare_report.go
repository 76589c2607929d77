package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/louter/louter/internal/loadbench/results"
)

// printBeforeAfter writes the -before comparison: the two binaries, then
// per louter target and concurrency its CPU, ratio to its baseline,
// latencies and RSS from the older binary and from the current one, with
// the CPU change paired per repetition, then the memory mode's MiB per
// stream of both, and the targets skipped. It writes nothing for a run
// without -before.
func printBeforeAfter(w io.Writer, res *results.Results) {
	if !printBinaries(w, res.Header) {
		return
	}

	type key struct {
		target string
		conc   int
		paced  bool
	}
	rows := map[key]results.Summary{}
	for _, s := range res.Summary {
		rows[key{s.Target, s.Conc, s.Paced}] = s
	}
	var table strings.Builder
	for _, a := range res.Summary {
		b, ok := rows[key{a.Target + beforeSuffix, a.Conc, a.Paced}]
		if !ok {
			continue
		}
		c := fmt.Sprint(a.Conc)
		if a.Paced {
			c += " paced"
		}
		ratio := "–"
		if a.Baseline != "" {
			ratio = fmt.Sprintf("%.2f → %.2f", b.Ratio, a.Ratio)
		}
		fmt.Fprintf(&table, "| %s | %s | %s → %s | **%+.1f %%** (%s) | %s | %.2f → %.2f | %.2f → %.2f | %.1f → %.1f |\n",
			a.Target, c, num(b.CPUPerReq), num(a.CPUPerReq), (a.Change-1)*100, ratios(a.Changes), ratio,
			b.P99ms, a.P99ms, b.TTFBms, a.TTFBms, b.RSSMiB, a.RSSMiB)
	}
	if table.Len() > 0 {
		fmt.Fprint(w, "\n| target | c | CPU µs/req before → after | CPU change (after/before per repetition) | ratio to baseline before → after | p99 ms before → after | TTFB ms before → after | RSS MiB before → after |\n|---|---|---|---|---|---|---|---|\n")
		fmt.Fprint(w, table.String())
	}

	mem := map[[2]string]results.Memory{} // target, stall
	for _, m := range res.Memory {
		mem[[2]string{m.Target, fmt.Sprint(m.Stall)}] = m
	}
	table.Reset()
	for _, a := range res.Memory {
		b, ok := mem[[2]string{a.Target + beforeSuffix, fmt.Sprint(a.Stall)}]
		if !ok {
			continue
		}
		change := "–"
		if b.PerStreamMiB > 0 {
			change = fmt.Sprintf("**%+.1f %%**", (a.PerStreamMiB/b.PerStreamMiB-1)*100)
		}
		fmt.Fprintf(&table, "| %s | %d | %.3f → %.3f | %s | %.1f → %.1f |\n", a.Target, a.Stall, b.PerStreamMiB, a.PerStreamMiB, change, b.IdleMiB, a.IdleMiB)
	}
	if table.Len() > 0 {
		fmt.Fprint(w, "\n| target | stalled after events | MiB per stream before → after | change | idle MiB before → after |\n|---|---|---|---|---|\n")
		fmt.Fprint(w, table.String())
	}

	printSkipped(w, res.Header)
}

// printBinaries introduces a -before comparison with the binaries it ran
// from, and reports whether there is one.
func printBinaries(w io.Writer, h results.Header) bool {
	if !slices.ContainsFunc(h.Binaries, func(b results.Binary) bool { return b.Role == "before" }) && len(h.Skipped) == 0 {
		return false
	}
	fmt.Fprint(w, "\nBefore/after, the older binary's targets run in the same repetitions and against the same baselines:\n\n")
	for _, b := range h.Binaries {
		fmt.Fprintf(w, "- %s: %s\n", b.Role, describe(b))
	}
	return true
}

func printSkipped(w io.Writer, h results.Header) {
	if len(h.Skipped) > 0 {
		fmt.Fprint(w, "\nSkipped:\n\n")
		for _, s := range h.Skipped {
			fmt.Fprintf(w, "- `%s`: %s\n", s.Target, s.Reason)
		}
	}
}

// printReplayBeforeAfter writes the session replay's -before comparison:
// per recording, turn and concurrency, louter's latencies, CPU per turn
// and RSS from the older binary and the current one.
func printReplayBeforeAfter(w io.Writer, res *results.Results) {
	if !printBinaries(w, res.Header) {
		return
	}
	var table strings.Builder
	for _, r := range res.Replay {
		if r.BeforeCPUPerTurn == 0 && r.BeforeTTFBms == 0 {
			continue // the older binary did not run
		}
		change := "–"
		if r.BeforeCPUPerTurn > 0 {
			change = fmt.Sprintf("**%+.1f %%**", (r.LouterCPUPerTurn/r.BeforeCPUPerTurn-1)*100)
		}
		fmt.Fprintf(&table, "| %s (%s) | %d/%d | %d | %.2f → %.2f | %.2f → %.2f | %s → %s | %s | %.0f → %.0f |\n",
			r.Session, r.Client, r.Turn, r.Turns, r.Conc, r.BeforeTTFBms, r.LouterTTFBms, r.BeforeP99ms, r.LouterP99ms,
			num(r.BeforeCPUPerTurn), num(r.LouterCPUPerTurn), change, r.BeforeRSSMiB, r.LouterRSSMiB)
	}
	if table.Len() > 0 {
		fmt.Fprint(w, "\n| session (client) | turn | c | louter TTFB ms before → after | p99 ms before → after | CPU µs/turn before → after | CPU change | RSS MiB before → after |\n|---|---|---|---|---|---|---|---|\n")
		fmt.Fprint(w, table.String())
	}
	printSkipped(w, res.Header)
}

// describe is a binary's path and what is known of its build.
func describe(b results.Binary) string {
	parts := []string{"`" + b.Path + "`"}
	for _, p := range [][2]string{{"Caddy", b.Version}, {"louter", b.Louter}, {"revision", b.Revision}, {"sha256", b.SHA256}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	if b.Modified {
		parts = append(parts, "uncommitted changes")
	}
	return strings.Join(parts, ", ")
}

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/louter/louter/internal/loadbench/results"
)

// printMarkdown writes the run's tables: the CPU table, the
// latency and RSS details, the paced mode, the cost of tracing and
// metrics, and the memory mode.
func printMarkdown(w io.Writer, res *results.Results) {
	h := res.Header
	fmt.Fprintf(w, "Load benchmark, %s, %s, %s, nproc %d, GOMAXPROCS %d, commit %s, load average %s before, %s after; %d requests per phase, %d repetitions; %d responses validated, %d errors.\n\n",
		h.Date, h.Go, h.CPU, h.NProc, h.GOMAXPROCS, h.Commit, h.LoadBefore, h.LoadAfter, h.Requests, h.Reps, h.Validated, h.Errors)

	rows := map[string]map[int]results.Summary{} // target → conc → unpaced summary
	var names []string
	var paced []results.Summary
	for _, s := range res.Summary {
		if s.Paced {
			paced = append(paced, s)
			continue
		}
		if rows[s.Target] == nil {
			rows[s.Target] = map[int]results.Summary{}
			names = append(names, s.Target)
		}
		rows[s.Target][s.Conc] = s
	}
	top := 0
	for _, c := range h.Conc {
		top = max(top, c)
	}

	// The table (the observed target has a section of its own).
	fmt.Fprint(w, "| target |")
	for _, c := range h.Conc {
		fmt.Fprintf(w, " c=%d CPU µs/req |", c)
	}
	fmt.Fprintf(w, " ratio at c=%d (per repetition) |\n|---|", top)
	fmt.Fprint(w, strings.Repeat("---|", len(h.Conc)+1), "\n")
	for _, n := range names {
		first := rows[n][h.Conc[0]]
		if observed(n) {
			continue
		}
		fmt.Fprintf(w, "| %s |", first.Label)
		for _, c := range h.Conc {
			fmt.Fprintf(w, " %s |", num(rows[n][c].CPUPerReq))
		}
		s := rows[n][top]
		if s.Baseline == "" {
			fmt.Fprint(w, " 1.0 (baseline) |\n")
		} else {
			fmt.Fprintf(w, " **%.2f** (%s; to %s) |\n", s.Ratio, ratios(s.Ratios), s.Baseline)
		}
	}

	fmt.Fprint(w, "\n| target | c | CPU µs/req | RSS after MiB | p50 ms | p99 ms | TTFB ms | added TTFB ms | added p99 ms | requests | errors |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range names {
		for _, c := range h.Conc {
			s := rows[n][c]
			fmt.Fprintf(w, "| %s | %d | %s | %.1f | %.2f | %.2f | %.2f | %s | %s | %d | %d |\n",
				s.Target, c, num(s.CPUPerReq), s.RSSMiB, s.P50ms, s.P99ms, s.TTFBms, added(s, s.AddedTTFB), added(s, s.AddedP99), s.Requests, s.Errors)
		}
	}

	if len(paced) > 0 {
		fmt.Fprintf(w, "\nPaced (upstream events %g ms apart, c=%d):\n\n| target | CPU µs/req | CPU µs per upstream event | ratio (per repetition) | p50 ms | TTFB ms | added TTFB ms | errors |\n|---|---|---|---|---|---|---|---|\n", h.PaceMS, paced[0].Conc)
		for _, s := range paced {
			ratio := "1.0 (baseline)"
			if s.Baseline != "" {
				ratio = fmt.Sprintf("**%.2f** (%s)", s.Ratio, ratios(s.Ratios))
			}
			fmt.Fprintf(w, "| %s | %s | %.1f | %s | %.1f | %.2f | %s | %d |\n",
				s.Label, num(s.CPUPerReq), s.CPUPerEvent, ratio, s.P50ms, s.TTFBms, added(s, s.AddedTTFB), s.Errors)
		}
	}

	for _, n := range names {
		for _, c := range h.Conc {
			s := rows[n][c]
			if !observed(n) {
				continue
			}
			fmt.Fprintf(w, "\n%s, Caddy `tracing` + `metrics` at c=%d: %s µs/req against %s µs/req without, **%+.1f %%** CPU per streamed request (per repetition: %s; issue 14's goal: under 3 %%).\n",
				strings.Replace(n, observedSuffix, "", 1), c, num(s.CPUPerReq), num(rows[s.Baseline][c].CPUPerReq), (s.Ratio-1)*100, ratios(s.Ratios))
			if caddy, ok := rows["caddy-small-observed"][c]; ok && strings.TrimSuffix(n, beforeSuffix) == "louter-small-observed" {
				fmt.Fprint(w, louterShare(s, caddy, rows[s.Baseline][c].CPUPerReq, rows[caddy.Baseline][c].CPUPerReq))
			}
		}
	}

	if len(res.Memory) > 0 {
		fmt.Fprint(w, "\nMemory (streams held open midway, RSS above the idle process):\n\n| target | stalled after events | streams | idle MiB | held MiB | MiB per stream | ratio to Caddy | errors |\n|---|---|---|---|---|---|---|---|\n")
		caddy := map[[2]string]float64{} // size, stall → Caddy's MiB per stream
		for _, m := range res.Memory {
			if strings.HasPrefix(m.Target, "caddy-") {
				caddy[[2]string{strings.TrimPrefix(m.Target, "caddy-"), fmt.Sprint(m.Stall)}] = m.PerStreamMiB
			}
		}
		for _, m := range res.Memory {
			ratio := "1.0"
			if !strings.HasPrefix(m.Target, "caddy-") {
				_, size, _ := strings.Cut(strings.TrimSuffix(m.Target, beforeSuffix), "-")
				if c := caddy[[2]string{size, fmt.Sprint(m.Stall)}]; c > 0 {
					ratio = fmt.Sprintf("**%.2f**", m.PerStreamMiB/c)
				} else {
					ratio = "–"
				}
			}
			fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f | %.3f | %s | %d |\n", m.Label, m.Stall, m.Streams, m.IdleMiB, m.HeldMiB, m.PerStreamMiB, ratio, m.Errors)
		}
	}
	printBeforeAfter(w, res)
}

// num formats µs with thousands separators, as the issue does.
func num(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func ratios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, ", ")
}

// added is a difference to the baseline, or "–" for a baseline.
// louterShare splits the tracing and metrics cost of louter's observed
// target (obs, against louter's CPU per request) into Caddy's own — the
// rise of its plain proxy (caddy, against caddyCPU) — and what louter adds
// on top, paired per repetition: (rise of louter) − (rise of Caddy), as a
// share of louter's CPU.
func louterShare(obs, caddy results.Summary, louterCPU, caddyCPU float64) string {
	n := min(len(obs.Ratios), len(caddy.Ratios))
	if n == 0 || louterCPU <= 0 {
		return ""
	}
	shares := make([]float64, n)
	for i := range n {
		shares[i] = (obs.Ratios[i] - 1) - (caddy.Ratios[i]-1)*caddyCPU/louterCPU
	}
	share := median(shares)
	for i := range shares {
		shares[i]++ // shown as ratios, as the other lines
	}
	return fmt.Sprintf("Of that, Caddy's own (its plain proxy: %+.1f %%) is about %s µs/req; louter adds about %s µs/req, **%+.1f %%** of louter's CPU (per repetition: %s).\n",
		(caddy.Ratio-1)*100, num((caddy.Ratio-1)*caddyCPU), num(share*louterCPU), share*100, ratios(shares))
}

// observedSuffix ends the name of a target run with Caddy's tracing and
// metrics on; its baseline is the same target with them off.
const observedSuffix = "-observed"

// observed reports whether target name is run with tracing and metrics,
// from either binary.
func observed(name string) bool {
	return strings.HasSuffix(strings.TrimSuffix(name, beforeSuffix), observedSuffix)
}

func added(s results.Summary, v float64) string {
	if s.Baseline == "" {
		return "–"
	}
	return fmt.Sprintf("%+.2f", v)
}

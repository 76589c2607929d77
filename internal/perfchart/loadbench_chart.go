package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/louter/louter/internal/loadbench/results"
)

// shortLabels name internal/loadbench's targets in the chart, where the
// tables' labels would not fit.
var shortLabels = map[string]string{
	"caddy-big":             "Caddy, 100 KB in OpenAI form",
	"louter-big":            "louter, 100 KB Anthropic → OpenAI",
	"louter-pass":           "louter passthrough, 100 KB",
	"caddy-small":           "Caddy, 1 KB in OpenAI form",
	"louter-small":          "louter, 1 KB Anthropic → OpenAI",
	"louter-small-observed": "… with tracing + metrics",
	"caddy-small-observed":  "Caddy, 1 KB, tracing + metrics",
	"louter-big-observed":   "louter, 100 KB, tracing + metrics",
	"caddy-anthropic":       "Caddy, 100 KB in Anthropic form",
	"louter-reverse":        "louter, 100 KB OpenAI → Anthropic",
}

// targetColors: Caddy in grey, louter's targets each in a colour of
// their own, the same in every group.
var targetColors = map[string]string{
	"caddy-big":             "#9aa5b1",
	"caddy-small":           "#c3cad1",
	"louter-big":            "#2b7bb9",
	"louter-pass":           "#5a9e4b",
	"louter-small":          "#7fb3dc",
	"louter-small-observed": "#e08a2c",
	"caddy-small-observed":  "#d9c2a0",
	"louter-big-observed":   "#c0661a",
	"caddy-anthropic":       "#9aa5b1",
	"louter-reverse":        "#8e5ea2",
}

// loadbenchChart draws a loadbench results file: CPU per request per
// target at each concurrency and in the paced mode, with each target's
// ratio to its baseline, then the memory mode's MiB per open stream.
func loadbenchChart(res *results.Results) *chart {
	h := res.Header
	c := &chart{
		title: "Proxy process CPU per streamed request (lower is better)",
		subtitles: []string{
			fmt.Sprintf("%s · nproc %d · GOMAXPROCS %d · %s · %s", h.CPU, h.NProc, h.GOMAXPROCS, h.Go, h.Date),
			fmt.Sprintf("load average %s before, %s after", h.LoadBefore, h.LoadAfter),
			fmt.Sprintf("%d requests × %d repetitions a phase, medians · %d responses validated, %d errors", h.Requests, h.Reps, h.Validated, h.Errors),
		},
		valueRoom: 150,
	}
	if h.Commit != "" {
		c.subtitles[0] += " · commit " + h.Commit
	}
	cpu := panel{title: "Whole-process CPU, µs per request (× its baseline)"}
	paced := panel{title: fmt.Sprintf("Upstream events %g ms apart: CPU µs per upstream event", h.PaceMS)}
	for _, s := range res.Summary {
		p, head, v, text := &cpu, fmt.Sprintf("c=%d", s.Conc), s.CPUPerReq, formatUS(s.CPUPerReq)
		if s.Paced {
			p, head, v, text = &paced, fmt.Sprintf("c=%d", s.Conc), s.CPUPerEvent, formatUS(s.CPUPerEvent)
		}
		if s.Baseline != "" && s.Ratio > 0 {
			text += fmt.Sprintf(" (%.2f×)", s.Ratio)
		}
		p.add(head, chartBar{label: label(s.Target), color: color(s.Target), text: text, value: v})
	}
	for _, p := range []panel{cpu, paced} {
		if len(p.groups) > 0 {
			c.panels = append(c.panels, p)
		}
	}
	if len(res.Memory) > 0 {
		c.panels = append(c.panels, memoryPanel(res.Memory))
	}
	return c
}

// memoryPanel draws the memory mode: MiB per open stream, one group per
// stall point, louter's ratio to Caddy with a request of the same size.
func memoryPanel(ms []results.Memory) panel {
	p := panel{title: fmt.Sprintf("Memory, MiB of RSS per open stream (%d streams held; × Caddy's)", ms[0].Streams)}
	caddy := map[string]float64{} // "size stall" → Caddy's MiB per stream
	key := func(m results.Memory) string {
		_, size, _ := strings.Cut(m.Target, "-")
		return fmt.Sprint(size, " ", m.Stall)
	}
	for _, m := range ms {
		if strings.HasPrefix(m.Target, "caddy-") {
			caddy[key(m)] = m.PerStreamMiB
		}
	}
	for _, m := range ms {
		text := fmt.Sprintf("%.3f MiB", m.PerStreamMiB)
		if base := caddy[key(m)]; base > 0 && !strings.HasPrefix(m.Target, "caddy-") {
			text += fmt.Sprintf(" (%.2f×)", m.PerStreamMiB/base)
		}
		p.add(fmt.Sprintf("stalled after %d upstream events", m.Stall), chartBar{label: label(m.Target), color: color(m.Target), text: text, value: max(m.PerStreamMiB, 0)})
	}
	return p
}

// add appends b to the group headed head, made at the end if there is
// none yet.
func (p *panel) add(head string, b chartBar) {
	for i := range p.groups {
		if p.groups[i].head == head {
			p.groups[i].bars = append(p.groups[i].bars, b)
			return
		}
	}
	p.groups = append(p.groups, group{head: head, bars: []chartBar{b}})
}

func label(target string) string {
	if l := shortLabels[target]; l != "" {
		return l
	}
	return target
}

func color(target string) string {
	if c := targetColors[target]; c != "" {
		return c
	}
	return spareColors[0]
}

// writeLoadbenchSVG reads a loadbench results file and draws it.
func writeLoadbenchSVG(w io.Writer, r io.Reader) error {
	res, err := results.Read(r)
	if err != nil {
		return err
	}
	if len(res.Summary) == 0 {
		return fmt.Errorf("loadbench results: no summary rows (a session replay's results are not drawn)")
	}
	return writeChart(w, loadbenchChart(res))
}

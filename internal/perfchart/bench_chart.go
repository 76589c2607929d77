package main

import (
	"fmt"
	"io"
	"strings"
)

// labels names the bars of the e2e ProcessCPU benchmarks' metrics; any
// other metric is shown by its own name.
var labels = map[string]string{
	"plain":    "Caddy reverse_proxy",
	"louter":   "louter, Anthropic → OpenAI Chat",
	"untraced": "louter, without tracing",
	"traced":   "louter, with tracing",
}

// colors of the bars: the baselines in grey, louter in blue, others in
// turn from spareColors.
var colors = map[string]string{"plain": "#9aa5b1", "untraced": "#9aa5b1", "louter": "#2b7bb9", "traced": "#2b7bb9"}

// pairs are the ratios the benchmarks report (measured over baseline) and
// how the chart names them.
var pairs = []struct{ measured, baseline, name string }{
	{"louter", "plain", "louter / Caddy"},
	{"traced", "untraced", "with / without tracing"},
}

var spareColors = []string{"#e08a2c", "#5a9e4b", "#8e5ea2"}

// writeSVG draws a `go test -bench` report as a bar chart, one group per
// benchmark line, bars scaled to the largest value in the whole chart.
func writeSVG(w io.Writer, rep *report) error {
	c := &chart{title: "Caddy process CPU per streamed request (µs, lower is better)", subtitles: subtitles(rep.config)}
	var p panel
	spare := map[string]string{}
	for _, ru := range rep.runs {
		g := group{head: ru.name}
		if name, r := ratioOf(ru); r > 0 {
			g.head += fmt.Sprintf(" — %s = %.2f×", name, r)
		}
		for _, b := range ru.bars {
			label, color := labels[b.metric], colors[b.metric]
			if label == "" {
				label = b.metric
			}
			if color == "" {
				if spare[b.metric] == "" {
					spare[b.metric] = spareColors[len(spare)%len(spareColors)]
				}
				color = spare[b.metric]
			}
			g.bars = append(g.bars, chartBar{label: label, color: color, text: formatUS(b.value), value: b.value})
		}
		p.groups = append(p.groups, g)
	}
	c.panels = []panel{p}
	return writeChart(w, c)
}

// ratioOf names the benchmark's ratio and gives its value: the reported
// "ratio" metric, or the measured bar over its baseline when none is
// reported. The value is 0 when neither is known.
func ratioOf(ru run) (string, float64) {
	value := map[string]float64{}
	for _, b := range ru.bars {
		value[b.metric] = b.value
	}
	for _, p := range pairs {
		m, base := value[p.measured], value[p.baseline]
		if m == 0 || base == 0 {
			continue
		}
		if ru.ratio > 0 {
			return p.name, ru.ratio
		}
		return p.name, m / base
	}
	return "ratio", ru.ratio
}

// subtitles describes the machine and run from the output's header: the
// CPU and platform first, then every other setting (date, load average,
// ...) except the package path.
func subtitles(config []keyValue) []string {
	var machine, other []string
	get := map[string]string{}
	for _, kv := range config {
		get[kv.key] = kv.value
	}
	if get["cpu"] != "" {
		machine = append(machine, get["cpu"])
	}
	if get["goos"] != "" || get["goarch"] != "" {
		machine = append(machine, get["goos"]+"/"+get["goarch"])
	}
	for _, kv := range config {
		switch kv.key {
		case "cpu", "goos", "goarch", "pkg":
		default:
			other = append(other, kv.key+": "+kv.value)
		}
	}
	var lines []string
	for _, l := range [][]string{machine, other} {
		if len(l) > 0 {
			lines = append(lines, strings.Join(l, " · "))
		}
	}
	return lines
}

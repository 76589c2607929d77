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

// Layout, in SVG user units.
const (
	width    = 720
	labelEnd = 236 // right edge of the bar labels
	barStart = 244
	barMax   = width - barStart - 90 // room for the value after the longest bar
	barH     = 22
	rowH     = 30
)

// writeSVG draws rep as a horizontal bar chart, one group per benchmark
// line, bars scaled to the largest value in the whole chart. The output
// depends only on rep, so it can be checked in and compared.
func writeSVG(w io.Writer, rep *report) error {
	maxV := 0.0
	rows := 0
	for _, ru := range rep.runs {
		rows += len(ru.bars)
		for _, b := range ru.bars {
			maxV = max(maxV, b.value)
		}
	}
	sub := subtitles(rep.config)
	top := 38 + 18*len(sub) // below the title and the subtitles
	height := top + len(rep.runs)*(rowH+8) + rows*rowH + 10

	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="16" y="28" font-size="17" font-weight="bold">%s</text>`+"\n", esc("Caddy process CPU per streamed request (µs, lower is better)"))
	for i, line := range sub {
		fmt.Fprintf(&s, `<text x="16" y="%d" fill="#555555">%s</text>`+"\n", 48+18*i, esc(line))
	}
	y := top
	spare := map[string]string{}
	for _, ru := range rep.runs {
		head := ru.name
		if name, r := ratioOf(ru); r > 0 {
			head += fmt.Sprintf(" — %s = %.2f×", name, r)
		}
		y += rowH - 8
		fmt.Fprintf(&s, `<text x="16" y="%d" font-weight="bold">%s</text>`+"\n", y, esc(head))
		y += 16
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
			wBar := 0
			if maxV > 0 {
				wBar = int(float64(barMax)*b.value/maxV + 0.5)
			}
			fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelEnd, y+15, esc(label))
			fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", barStart, y, wBar, barH, color)
			fmt.Fprintf(&s, `<text x="%d" y="%d">%s</text>`+"\n", barStart+wBar+6, y+15, esc(formatUS(b.value)))
			y += rowH
		}
	}
	s.WriteString("</svg>\n")
	_, err := io.WriteString(w, s.String())
	return err
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

func formatUS(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f µs", v)
	}
	return fmt.Sprintf("%.1f µs", v)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(s) }

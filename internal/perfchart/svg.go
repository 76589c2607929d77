package main

import (
	"fmt"
	"io"
	"strings"
)

// labels names the bars of BenchmarkProcessCPUPerStream's metrics; any
// other metric is shown by its own name.
var labels = map[string]string{
	"plain":  "Caddy reverse_proxy",
	"louter": "louter, Anthropic → OpenAI",
}

// colors of the bars: Caddy's own proxy in grey, louter in blue, others
// in turn from the rest.
var colors = map[string]string{"plain": "#9aa5b1", "louter": "#2b7bb9"}

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
	top := 40 + 18*len(sub) + 12
	height := top + len(rep.runs)*(rowH+8) + rows*rowH + 28

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
		if r := ratioOf(ru); r > 0 {
			head += fmt.Sprintf(" — louter / Caddy = %.2f×", r)
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

// ratioOf is the benchmark's reported ratio, or louter's bar over the plain
// proxy's when it reports none; 0 when neither is known.
func ratioOf(ru run) float64 {
	if ru.ratio > 0 {
		return ru.ratio
	}
	var plain, louter float64
	for _, b := range ru.bars {
		switch b.metric {
		case "plain":
			plain = b.value
		case "louter":
			louter = b.value
		}
	}
	if plain > 0 && louter > 0 {
		return louter / plain
	}
	return 0
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

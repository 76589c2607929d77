package main

import (
	"fmt"
	"io"
	"strings"
)

// chart is what writeChart draws: titled panels of horizontal bars.
type chart struct {
	title     string
	subtitles []string
	panels    []panel
	// valueRoom is the room kept right of the longest bar for its
	// value's text (defaultValueRoom when 0).
	valueRoom int
}

// panel is a part of a chart whose bars share one scale (their largest
// value fills barMax), under an optional title.
type panel struct {
	title  string
	groups []group
}

// group is a bold heading and its bars.
type group struct {
	head string
	bars []chartBar
}

// chartBar is one bar: its label on the left, its value's text after it.
type chartBar struct {
	label, color, text string
	value              float64
}

// Layout, in SVG user units.
const (
	width            = 720
	labelEnd         = 236 // right edge of the bar labels
	barStart         = 244
	defaultValueRoom = 90
	barH             = 22
	rowH             = 30
)

// writeChart draws c as SVG. The output depends only on c, so it can be
// checked in and compared.
func writeChart(w io.Writer, c *chart) error {
	rows, heads, titles := 0, 0, 0
	for _, p := range c.panels {
		heads += len(p.groups)
		if p.title != "" {
			titles++
		}
		for _, g := range p.groups {
			rows += len(g.bars)
		}
	}
	top := 38 + 18*len(c.subtitles) // below the title and the subtitles
	height := top + titles*rowH + heads*(rowH+8) + rows*rowH + 10

	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="16" y="28" font-size="17" font-weight="bold">%s</text>`+"\n", esc(c.title))
	for i, line := range c.subtitles {
		fmt.Fprintf(&s, `<text x="16" y="%d" fill="#555555">%s</text>`+"\n", 48+18*i, esc(line))
	}
	barMax := width - barStart - defaultValueRoom
	if c.valueRoom > 0 {
		barMax = width - barStart - c.valueRoom
	}
	y := top
	for _, p := range c.panels {
		maxV := 0.0
		for _, g := range p.groups {
			for _, b := range g.bars {
				maxV = max(maxV, b.value)
			}
		}
		if p.title != "" {
			y += rowH
			fmt.Fprintf(&s, `<text x="16" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y, esc(p.title))
		}
		for _, g := range p.groups {
			y += rowH - 8
			fmt.Fprintf(&s, `<text x="16" y="%d" font-weight="bold">%s</text>`+"\n", y, esc(g.head))
			y += 16
			for _, b := range g.bars {
				wBar := 0
				if maxV > 0 {
					wBar = int(float64(barMax)*b.value/maxV + 0.5)
				}
				fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelEnd, y+15, esc(b.label))
				fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", barStart, y, wBar, barH, b.color)
				fmt.Fprintf(&s, `<text x="%d" y="%d">%s</text>`+"\n", barStart+wBar+6, y+15, esc(b.text))
				y += rowH
			}
		}
	}
	s.WriteString("</svg>\n")
	_, err := io.WriteString(w, s.String())
	return err
}

func formatUS(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f µs", v)
	}
	return fmt.Sprintf("%.1f µs", v)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(s) }

package main

import (
	"bufio"
	"strings"
	"testing"

	"github.com/louter/louter/internal/loadbench/results"
)

// TestLoadbenchChart reads a small results file and checks what the
// chart shows: the panels and groups, each bar's value and its ratio.
func TestLoadbenchChart(t *testing.T) {
	in := `{"header":{"date":"2026-11-25T12:00Z","cpu":"EPYC","nproc":2,"commit":"abc","pace_ms":1},
	"summary":[
	 {"target":"caddy-big","conc":16,"cpu_us_per_req":1007},
	 {"target":"louter-big","baseline":"caddy-big","conc":16,"cpu_us_per_req":3125,"ratio":2.9},
	 {"target":"caddy-big","conc":1,"cpu_us_per_req":2218},
	 {"target":"caddy-big","conc":16,"paced":true,"cpu_us_per_req":7703,"cpu_us_per_event":31.7},
	 {"target":"louter-new","baseline":"caddy-big","conc":16,"paced":true,"cpu_us_per_req":7630,"cpu_us_per_event":31.4,"ratio":0.99}],
	"memory":[
	 {"target":"caddy-big","stall_after_events":5,"streams":1000,"per_stream_mib":0.125},
	 {"target":"louter-big","stall_after_events":5,"streams":1000,"per_stream_mib":0.494}]}`
	res, err := readResults(in)
	if err != nil {
		t.Fatal(err)
	}
	c := loadbenchChart(res)
	type row struct{ panel, group, label, text string }
	var got []row
	for _, p := range c.panels {
		for _, g := range p.groups {
			for _, b := range g.bars {
				got = append(got, row{p.title, g.head, b.label, b.text})
			}
		}
	}
	cpu, paced, mem := "Whole-process CPU, µs per request (× its baseline)", "Upstream events 1 ms apart: CPU µs per upstream event", "Memory, MiB of RSS per open stream (1000 streams held; × Caddy's)"
	want := []row{
		{cpu, "c=16", "Caddy, 100 KB in OpenAI form", "1007 µs"},
		{cpu, "c=16", "louter, 100 KB Anthropic → OpenAI", "3125 µs (2.90×)"},
		{cpu, "c=1", "Caddy, 100 KB in OpenAI form", "2218 µs"},
		{paced, "c=16", "Caddy, 100 KB in OpenAI form", "31.7 µs"},
		{paced, "c=16", "louter-new", "31.4 µs (0.99×)"},
		{mem, "stalled after 5 upstream events", "Caddy, 100 KB in OpenAI form", "0.125 MiB"},
		{mem, "stalled after 5 upstream events", "louter, 100 KB Anthropic → OpenAI", "0.494 MiB (3.95×)"},
	}
	if len(got) != len(want) {
		t.Fatalf("bars %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bar %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if !strings.Contains(c.subtitles[0], "EPYC · nproc 2") || !strings.Contains(c.subtitles[0], "commit abc") {
		t.Errorf("subtitles %q", c.subtitles)
	}
}

// TestDraw checks that draw tells the two input formats apart and
// reports bad input.
func TestDraw(t *testing.T) {
	tests := []struct{ name, in, want, wantErr string }{
		{"bench output", "BenchmarkP-2 10 5 ns/op 3 louter-cpu-µs/req 2 plain-cpu-µs/req\n", "Caddy process CPU per streamed request", ""},
		{"loadbench results after blank lines", "\n  \n" + `{"header":{},"summary":[{"target":"caddy-big","conc":1,"cpu_us_per_req":1}]}`, "Proxy process CPU per streamed request", ""},
		{"empty", " \n", "", "empty input"},
		{"results without a summary", `{"header":{}}`, "", "no summary or replay rows"},
		{"a replay without a summary", `{"header":{},"replay":[{"session":"s","turn":1}]}`, "", "no summary rows"},
		{"broken JSON", `{"header":`, "", "loadbench results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := draw(&out, bufio.NewReader(strings.NewReader(tt.in)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out.String(), tt.want) {
				t.Fatalf("error %v, output %.200s; want one containing %q", err, out.String(), tt.want)
			}
		})
	}
}

func readResults(s string) (*results.Results, error) { return results.Read(strings.NewReader(s)) }

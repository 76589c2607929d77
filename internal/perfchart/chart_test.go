package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata")

// TestChartGolden draws each testdata/*.txt benchmark output and
// testdata/*.json loadbench results file and compares the SVG with
// testdata/*.svg (rewritten with -update).
func TestChartGolden(t *testing.T) {
	txt, err1 := filepath.Glob("testdata/*.txt")
	js, err2 := filepath.Glob("testdata/*.json")
	if err1 != nil || err2 != nil || len(txt) == 0 || len(js) == 0 {
		t.Fatalf("want .txt and .json inputs in testdata: %v %v", txt, js)
	}
	for _, in := range append(txt, js...) {
		t.Run(filepath.Base(in), func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got bytes.Buffer
			if err := draw(&got, bufio.NewReader(f)); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".svg"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the drawing of %s (run with -update if the change is meant):\n%s", golden, in, got.String())
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in  string
		wantRuns  int
		wantBars  int // in the first run
		wantRatio float64
		wantName  string
		wantErr   string
	}{
		{
			name:     "reported ratio",
			in:       "goos: linux\nBenchmarkP-2 10 5 ns/op 1.5 ratio 3 louter-cpu-µs/req 2 plain-cpu-µs/req\n",
			wantRuns: 1, wantBars: 2, wantRatio: 1.5, wantName: "louter / Caddy",
		},
		{
			name:     "ratio computed from the bars",
			in:       "BenchmarkP 10 5 ns/op 3 louter-cpu-µs/req 2 plain-cpu-µs/req\n",
			wantRuns: 1, wantBars: 2, wantRatio: 1.5, wantName: "louter / Caddy",
		},
		{
			name:     "tracing pair",
			in:       "BenchmarkT-2 10 5 ns/op 1.25 ratio 5 traced-cpu-µs/req 4 untraced-cpu-µs/req\n",
			wantRuns: 1, wantBars: 2, wantRatio: 1.25, wantName: "with / without tracing",
		},
		{
			name:     "ratio of an unknown pair",
			in:       "BenchmarkU-2 10 5 ns/op 2 ratio 5 a-cpu-µs/req 4 b-cpu-µs/req\n",
			wantRuns: 1, wantBars: 2, wantRatio: 2, wantName: "ratio",
		},
		{
			name:     "lines without CPU metrics are left out",
			in:       "BenchmarkA-2 10 5 ns/op 3 B/op\nBenchmarkP-2 10 5 ns/op 4 x-cpu-µs/req\n",
			wantRuns: 1, wantBars: 1, wantName: "ratio",
		},
		{name: "no benchmark", in: "PASS\nok x 1s\n", wantErr: "no benchmark line"},
		{name: "bad value", in: "BenchmarkP-2 10 five ns/op\n", wantErr: `value "five"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := parse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.runs) != tt.wantRuns || len(rep.runs[0].bars) != tt.wantBars {
				t.Fatalf("runs %+v, want %d runs, %d bars in the first", rep.runs, tt.wantRuns, tt.wantBars)
			}
			if name, r := ratioOf(rep.runs[0]); r != tt.wantRatio || name != tt.wantName {
				t.Errorf("ratio %q %v, want %q %v", name, r, tt.wantName, tt.wantRatio)
			}
		})
	}
}

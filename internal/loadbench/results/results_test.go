package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteRead(t *testing.T) {
	in := &Results{
		Header: Header{Date: "2026-11-25T11:00Z", NProc: 2, Conc: []int{1, 16},
			Binaries: []Binary{{Role: "before", Path: "/old", Revision: "abc", Targets: []string{"louter-big@before"}}},
			Skipped:  []Skipped{{Target: "louter-pass@before", Reason: "unrecognized"}}},
		Phases:  []Phase{{Target: "caddy-big", Conc: 16, Rep: 1, CPUPerReq: 1007}},
		Summary: []Summary{{Target: "louter-big", Baseline: "caddy-big", Conc: 16, CPUPerReq: 3125, Ratios: []float64{3.1, 2.9}, Ratio: 3, Changes: []float64{0.9}, Change: 0.9}},
		Memory:  []Memory{{Target: "louter-big", Stall: 5, Streams: 1000, PerStreamMiB: 0.494}},
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if out.Header.Date != in.Header.Date || len(out.Header.Conc) != 2 || out.Summary[0].Ratio != 3 || out.Summary[0].Ratios[1] != 2.9 ||
		out.Memory[0].PerStreamMiB != 0.494 || out.Phases[0].CPUPerReq != 1007 || out.Summary[0].Change != 0.9 ||
		out.Header.Binaries[0].Targets[0] != "louter-big@before" || out.Header.Skipped[0].Reason != "unrecognized" {
		t.Errorf("read back %+v, want %+v", out, in)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", "goos: linux\n", "invalid character"},
		{"no summary", `{"header":{"date":"x"},"phases":[],"summary":[]}`, "no summary or replay rows"},
		{"unknown field", `{"header":{},"summary":[{"target":"a","cpu":1}]}`, `unknown field "cpu"`},
	}
	for _, tt := range tests {
		if _, err := Read(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// Command perfchart draws the performance charts of the README. It reads
// on standard input either a results file of the load benchmark
// (internal/loadbench, JSON) or `go test -bench` output, and writes an
// SVG bar chart to standard output:
//
//   - from loadbench: whole-process CPU per streamed request of Caddy's
//     reverse_proxy and louter's targets at each concurrency and paced,
//     with their ratios to the baseline, and the memory per open stream;
//   - from `go test -bench`: the benchmarks' "<name>-cpu-µs/req" metrics
//     (the e2e ProcessCPU benchmarks: Caddy's plain reverse_proxy against
//     louter, with their ratio), titled with the output's header.
//
// regen.sh in this directory runs the load benchmark and redraws
// docs/loadbench.svg:
//
//	internal/perfchart/regen.sh
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

func main() {
	out := bufio.NewWriter(os.Stdout)
	if err := draw(out, bufio.NewReader(os.Stdin)); err != nil {
		fmt.Fprintln(os.Stderr, "perfchart:", err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "perfchart:", err)
		os.Exit(1)
	}
}

// draw draws in, a loadbench results file (a JSON object) or `go test
// -bench` output (anything else), into w.
func draw(w io.Writer, in *bufio.Reader) error {
	for {
		b, err := in.Peek(1)
		if err != nil {
			return fmt.Errorf("empty input")
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = in.ReadByte()
			continue
		case '{':
			return writeLoadbenchSVG(w, in)
		}
		rep, err := parse(in)
		if err != nil {
			return err
		}
		return writeSVG(w, rep)
	}
}

// Command perfchart draws the performance chart of the README from
// `go test -bench` output: it reads the output on standard input and writes
// an SVG bar chart of the benchmarks' "<name>-cpu-µs/req" metrics (Caddy's
// plain reverse_proxy against louter, with their ratio) to standard output,
// titled with the machine and run details of the output's header.
//
// regen.sh in this directory runs the benchmark and regenerates the chart:
//
//	internal/perfchart/regen.sh
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	rep, err := parse(bufio.NewReader(os.Stdin))
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfchart:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	if err := writeSVG(out, rep); err != nil {
		fmt.Fprintln(os.Stderr, "perfchart:", err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "perfchart:", err)
		os.Exit(1)
	}
}

#!/bin/sh
# regen.sh runs the whole-process CPU benchmarks of e2e once (a separate
# Caddy process: plain reverse_proxy against louter translating, and louter
# with and without tracing) and redraws the README's chart from their
# output. Run it from anywhere in the checkout:
#
#	internal/perfchart/regen.sh            # 2000 requests per side
#	BENCHTIME=200x internal/perfchart/regen.sh
#
# The output is kept in testdata/bench/processcpu.txt, the chart in
# docs/perf.svg; the date and load average are added to the output's
# header, so the chart says when and on how busy a machine it was measured.
set -eu
cd "$(dirname "$0")/../.."
mkdir -p testdata/bench docs
out=testdata/bench/processcpu.txt
trap 'rm -f "$out.tmp" docs/perf.svg.tmp' EXIT
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	go test ./e2e -run XXX -bench ProcessCPU -benchtime "${BENCHTIME:-2000x}"
	echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out.tmp"
# Replace the files only when the new output draws: a failed run keeps
# the last good output and chart.
go run ./internal/perfchart <"$out.tmp" >docs/perf.svg.tmp
mv "$out.tmp" "$out"
mv docs/perf.svg.tmp docs/perf.svg
echo "wrote $out and docs/perf.svg"

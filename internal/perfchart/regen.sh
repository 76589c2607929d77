#!/bin/sh
# regen.sh runs the whole-process CPU benchmark once (a separate Caddy
# process: plain reverse_proxy against louter translating) and redraws the
# README's chart from its output. Run it from anywhere in the checkout:
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
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "loadavg-before: $(cut -d' ' -f1-3 /proc/loadavg)"
	go test ./e2e -run XXX -bench ProcessCPU -benchtime "${BENCHTIME:-2000x}"
	echo "loadavg-after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out.tmp"
mv "$out.tmp" "$out"
go run ./internal/perfchart <"$out" >docs/perf.svg
echo "wrote $out and docs/perf.svg"

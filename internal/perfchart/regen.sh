#!/bin/sh
# regen.sh runs the load benchmark (internal/loadbench: Caddy's plain
# reverse_proxy and louter side by side, each in a Caddy process of its own)
# and redraws the README's chart from its results. Run it from anywhere in
# the checkout, on a machine as quiet as you can get; arguments go to the
# benchmark:
#
#	internal/perfchart/regen.sh                                # the full run, ~4 minutes on 2 cores
#	internal/perfchart/regen.sh -requests 200 -reps 1 -streams 200   # a quick look
#
# The results are kept in testdata/bench/loadbench.json (the date, Go
# version, CPU, nproc and load average in its header), the Markdown tables
# in testdata/bench/loadbench.md, the chart in docs/perf.svg. A failed run
# (an error, or any response that failed validation) keeps the last good
# files.
set -eu
cd "$(dirname "$0")/../.."
mkdir -p testdata/bench docs
json=testdata/bench/loadbench.json
md=testdata/bench/loadbench.md
trap 'rm -f "$json.tmp" "$md.tmp" docs/perf.svg.tmp' EXIT
go run ./internal/loadbench -out "$json.tmp" "$@" >"$md.tmp"
cat "$md.tmp"
go run ./internal/perfchart <"$json.tmp" >docs/perf.svg.tmp
mv "$json.tmp" "$json"
mv "$md.tmp" "$md"
mv docs/perf.svg.tmp docs/perf.svg
echo "wrote $json, $md and docs/perf.svg"

package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// cpuUnit is the unit suffix of the benchmark metrics drawn as bars:
// BenchmarkProcessCPUPerStream reports "plain-cpu-µs/req" and
// "louter-cpu-µs/req"; any other "<name>-cpu-µs/req" metric becomes a bar
// of its own, so later benchmarks can feed the same chart.
const cpuUnit = "-cpu-µs/req"

// report is what the chart is drawn from: the header of a `go test -bench`
// output and its benchmark lines that carry CPU metrics.
type report struct {
	// config holds the header's "key: value" lines (goos, goarch, cpu,
	// pkg, and any a script adds, such as date or loadavg), in order.
	config []keyValue
	runs   []run
}

type keyValue struct{ key, value string }

// run is one benchmark result line.
type run struct {
	name string // without the "Benchmark" prefix and the -GOMAXPROCS suffix
	bars []bar
	// ratio is the benchmark's own "ratio" metric; 0 when it reports none.
	ratio float64
}

type bar struct {
	metric string // the metric's prefix, e.g. "plain"
	value  float64
}

// parse reads `go test -bench` output. Lines that are neither header
// configuration nor benchmark results (PASS, ok, logs) are skipped.
func parse(r io.Reader) (*report, error) {
	rep := &report{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Benchmark") {
			ru, err := parseRun(line)
			if err != nil {
				return nil, err
			}
			if len(ru.bars) > 0 {
				rep.runs = append(rep.runs, ru)
			}
			continue
		}
		if k, v, ok := configLine(line); ok {
			rep.config = append(rep.config, keyValue{k, v})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rep.runs) == 0 {
		return nil, fmt.Errorf("no benchmark line with a %q metric in the input", "*"+cpuUnit)
	}
	return rep, nil
}

// configLine recognizes a header line of the benchmark format: a key that
// starts with a lower-case letter and has no spaces, a colon, a value.
func configLine(line string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(line, ":")
	if !ok || key == "" || key[0] < 'a' || key[0] > 'z' || strings.ContainsAny(key, " \t") {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// parseRun reads "BenchmarkName-2  N  v1 unit1  v2 unit2 ...".
func parseRun(line string) (run, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return run{}, nil // a benchmark name alone (its logs follow)
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return run{}, nil // not a result line
	}
	name := strings.TrimPrefix(f[0], "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	ru := run{name: name}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return run{}, fmt.Errorf("benchmark line %q: value %q: %v", line, f[i], err)
		}
		switch unit := f[i+1]; {
		case strings.HasSuffix(unit, cpuUnit):
			ru.bars = append(ru.bars, bar{metric: strings.TrimSuffix(unit, cpuUnit), value: v})
		case unit == "ratio":
			ru.ratio = v
		}
	}
	// Baselines first (go test prints the metrics sorted by unit, which
	// would put louter before Caddy's plain proxy).
	sort.SliceStable(ru.bars, func(i, j int) bool { return isBaseline(ru.bars[i].metric) && !isBaseline(ru.bars[j].metric) })
	return ru, nil
}

// isBaseline reports whether metric is the baseline of one of the known
// pairs (Caddy's plain proxy, louter without tracing).
func isBaseline(metric string) bool {
	for _, p := range pairs {
		if p.baseline == metric {
			return true
		}
	}
	return false
}

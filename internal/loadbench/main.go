// Command loadbench is louter's load benchmark: it runs Caddy's plain
// reverse_proxy and louter side by side, each in a Caddy process of its
// own, against one loopback upstream that streams a coding agent's turn
// (243 OpenAI Chat events with a 40-fragment tool call, one per write and
// flush), and measures per target the whole process's CPU per request
// (from /proc), its RSS, and the clients' p50/p99 latency and time to
// first byte. Targets alternate within each repetition and every
// response is validated. A paced mode spaces the upstream events 1 ms
// apart; a memory mode holds many streams open midway and measures the
// RSS each one costs. The session-replay mode (-replay, replay.go) runs
// instead: recorded multi-turn agent sessions, turn by turn, through
// louter and through Caddy's plain proxy.
//
// It prints the tables in Markdown and writes the results as JSON
// (-out), which internal/perfchart draws:
//
//	go run ./internal/loadbench                          # the full run: c=1, 16 and 64
//	go run ./internal/loadbench -requests 200 -reps 1 -streams 200   # a quick look
//	go run ./internal/loadbench -replay testdata/recordings/claude-code.jsonl,testdata/recordings/codex.jsonl,testdata/recordings/gemini-cli.jsonl -out replay.json   # the session replay
//
// internal/perfchart/regen.sh runs it and redraws docs/perf.svg;
// docs/performance.md documents it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/louter/louter/internal/loadbench/results"
)

// config is the command line.
type config struct {
	requests, paced, reps int
	conc                  []int
	pace                  time.Duration
	streams               int
	stalls                []int
	only                  string
	reverse               bool
	profile, profileDir   string
	profileSeconds        int
	out, fixture, caddy   string
	before                string // an older Caddy binary to compare with (compare.go)
	gomaxprocs            int
	timeout               time.Duration
	replay                string   // recordings, comma-separated: the session-replay mode
	sessions              int      // replayed per recording, concurrency and repetition
	env                   []string // added to the Caddy processes' environment (tests)
}

func main() {
	var cfg config
	var conc, stalls string
	flag.IntVar(&cfg.requests, "requests", 2000, "requests per target, concurrency and repetition")
	flag.StringVar(&conc, "conc", "1,16,64", "concurrency levels, comma-separated")
	flag.IntVar(&cfg.reps, "reps", 3, "repetitions (targets alternate within each)")
	flag.IntVar(&cfg.paced, "paced", 200, "requests per phase of the paced mode (0: skip it)")
	flag.DurationVar(&cfg.pace, "pace", time.Millisecond, "time between upstream events in the paced mode")
	flag.IntVar(&cfg.streams, "streams", 1000, "streams held open in the memory mode (0: skip it)")
	flag.StringVar(&stalls, "stall", "5,120", "memory mode: upstream events sent before a stream stalls, comma-separated")
	flag.StringVar(&cfg.only, "only", "", "run only the targets whose names contain one of these comma-separated words (and their baselines)")
	flag.BoolVar(&cfg.reverse, "reverse", false, "also run the reverse direction: an OpenAI client through louter to an Anthropic backend, against Caddy proxying the Anthropic stream")
	flag.StringVar(&cfg.profile, "profile", "", "targets to profile, comma-separated (e.g. louter-big): a CPU profile under load at the highest concurrency after the repetitions, and a heap profile with the memory mode's streams held, from Caddy's admin pprof endpoint")
	flag.IntVar(&cfg.profileSeconds, "profile-seconds", 10, "length of the CPU profiles")
	flag.StringVar(&cfg.profileDir, "profile-dir", ".", "directory for the profiles")
	flag.StringVar(&cfg.out, "out", "testdata/bench/loadbench.json", "results file (empty: none)")
	flag.StringVar(&cfg.fixture, "fixture", "testdata/bench/claude_code_100k.json", "the big Anthropic request")
	flag.StringVar(&cfg.caddy, "caddy", "", "a Caddy binary with louter to use instead of building cmd/caddy")
	flag.StringVar(&cfg.before, "before", "", "an older Caddy binary with louter: every louter target also runs from it, as <target>@before, in the same repetitions and against the same Caddy baseline, for a before/after table")
	flag.IntVar(&cfg.gomaxprocs, "gomaxprocs", 2, "GOMAXPROCS of the Caddy processes (0: Go's default)")
	flag.DurationVar(&cfg.timeout, "timeout", 60*time.Second, "bound on each request")
	flag.StringVar(&cfg.replay, "replay", "", "the session-replay mode instead of the benchmark: recordings (record's JSON Lines) to replay, comma-separated, e.g. "+defaultReplay)
	flag.IntVar(&cfg.sessions, "sessions", 100, "session-replay mode: sessions replayed per recording, concurrency and repetition")
	flag.Parse()
	var err error
	if cfg.conc, err = intList(conc); err == nil {
		cfg.stalls, err = intList(stalls)
	}
	if err == nil && (cfg.requests < 1 || cfg.reps < 1 || cfg.sessions < 1 || len(cfg.conc) == 0) {
		err = fmt.Errorf("-requests, -reps, -sessions and -conc must be positive")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	if cfg.replay != "" {
		os.Exit(replayMain(cfg))
	}
	r, err := newRunner(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
	// The processes must not outlive the run, even when it is interrupted.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		r.close()
		os.Exit(130)
	}()
	res, err := r.run()
	r.close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
	printMarkdown(os.Stdout, res)
	if cfg.out != "" {
		if err := results.Write(cfg.out, res); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "loadbench: wrote %s\n", cfg.out)
	}
	if res.Header.Errors > 0 {
		fmt.Fprintf(os.Stderr, "loadbench: %d of %d responses failed validation\n", res.Header.Errors, res.Header.Validated)
		os.Exit(1)
	}
}

// replayMain runs the session-replay mode and returns the exit status.
func replayMain(cfg config) int {
	res, err := replay(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		return 1
	}
	printReplay(os.Stdout, res)
	if cfg.out != "" {
		if err := results.Write(cfg.out, res); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "loadbench: wrote %s\n", cfg.out)
	}
	if res.Header.Errors > 0 {
		fmt.Fprintf(os.Stderr, "loadbench: %d of %d turns failed\n", res.Header.Errors, res.Header.Validated)
		return 1
	}
	return 0
}

// intList parses "1,16".
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

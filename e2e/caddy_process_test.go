package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/testcaddy"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain).
const caddyProcessEnv = "LOUTER_E2E_RUN_CADDY"

// startCaddyProcess runs this test binary as Caddy, in a process of its
// own with the given Caddyfile, until the test ends; a failing test shows
// its logs.
func startCaddyProcess(t *testing.T, caddyfile string) *harness.Process {
	t.Helper()
	return startCaddyBinary(t, os.Args[0], caddyfile, caddyProcessEnv+"=1")
}

// startCaddyBinary runs bin as Caddy with the given Caddyfile, two CPUs
// and env added to this process's environment, until the test or
// benchmark ends; a failing one shows its logs.
func startCaddyBinary(tb testing.TB, bin, caddyfile string, env ...string) *harness.Process {
	tb.Helper()
	return testcaddy.StartBinary(tb, bin, caddyfile, append([]string{"GOMAXPROCS=2"}, env...)...)
}

// buildCaddy builds the Caddy binary with louter once per benchmark run.
func buildCaddy(b *testing.B) string {
	bin, err := harness.BuildCaddy(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// startStreamUpstream starts harness's upstream (a coding agent's turn,
// one event per write and flush) until the benchmark ends.
func startStreamUpstream(b *testing.B) string {
	up, err := harness.StartUpstream()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = up.Close() })
	return up.Addr
}

// runLoad sends n requests, four at a time, and fails the benchmark if
// any response is not a complete stream of protocol p.
func runLoad(b *testing.B, url, body string, p harness.Protocol, n int) {
	res := harness.Load(testcaddy.Client, harness.Request{URL: url, Body: []byte(body), Protocol: p}, n, 4)
	if res.Errors > 0 {
		b.Errorf("%d of %d requests failed; the first: %s", res.Errors, n, res.FirstError)
	}
}

// cpuOf returns the CPU time (user+system) process p spent while f ran.
func cpuOf(b *testing.B, p *harness.Process, f func()) time.Duration {
	before, err := p.CPU()
	if err != nil {
		b.Fatal(err)
	}
	f()
	after, err := p.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return after - before
}

package testcaddy

import (
	"os"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	"github.com/louter/louter/internal/loadbench/harness"
)

// Main is the TestMain of a package whose tests run Caddy processes of
// their own (StartProcess): with env set in its environment the test
// binary runs as Caddy — it links the modules of cmd/caddy (standard,
// louter, louter_mock), so no build step is needed — else it runs the
// tests.
func Main(m *testing.M, env string) {
	if os.Getenv(env) != "" {
		caddycmd.Main()
		return
	}
	os.Exit(m.Run())
}

// StartProcess runs this test binary as Caddy (its TestMain calls Main
// with env) with the given Caddyfile, global options included, in a
// process of its own, extra added to its environment; see StartBinary.
func StartProcess(tb testing.TB, env, caddyfile string, extra ...string) *harness.Process {
	tb.Helper()
	return StartBinary(tb, os.Args[0], caddyfile, append([]string{env + "=1"}, extra...)...)
}

// StartBinary runs bin as Caddy with the given Caddyfile, global options
// included, and env added to this process's environment, until the test
// or benchmark ends: the process dies with the test's, the test may Stop
// (SIGKILL) it early, and a failing test shows its logs.
func StartBinary(tb testing.TB, bin, caddyfile string, env ...string) *harness.Process {
	tb.Helper()
	p, err := harness.Start(bin, tb.TempDir(), caddyfile, env...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		p.Stop()
		if tb.Failed() {
			tb.Logf("caddy process %d logs:\n%s", p.Pid(), p.Logs())
		}
	})
	return p
}

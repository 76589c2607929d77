package caddymodule_test

import (
	"os"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	"github.com/louter/louter/internal/loadbench/harness"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain).
const caddyProcessEnv = "LOUTER_CADDYMODULE_RUN_CADDY"

func TestMain(m *testing.M) {
	if os.Getenv(caddyProcessEnv) != "" {
		// The test binary links the modules of cmd/caddy (standard,
		// louter, louter_mock through internal/testcaddy): a test that
		// needs a Caddy process of its own — one it can kill — runs the
		// binary as Caddy, with no build step.
		caddycmd.Main()
		return
	}
	os.Exit(m.Run())
}

// startCaddyProcess runs this test binary as Caddy with the given
// Caddyfile (global options included), in a process of its own that dies
// with the test's; the test may Stop (SIGKILL) it early, and a failing
// test shows its logs.
func startCaddyProcess(t *testing.T, caddyfile string) *harness.Process {
	t.Helper()
	p, err := harness.Start(os.Args[0], t.TempDir(), caddyfile, caddyProcessEnv+"=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("caddy process %d logs:\n%s", p.Pid(), p.Logs())
		}
	})
	return p
}

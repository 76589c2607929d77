package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain).
const caddyProcessEnv = "LOUTER_E2E_RUN_CADDY"

// caddyProcess is a separate Caddy process with a Caddyfile of its own: this
// test binary run as Caddy, or a built Caddy binary.
type caddyProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

// Write collects the process's output (stdout and stderr).
func (p *caddyProcess) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.Write(b)
}

// Logs is what the process has written so far.
func (p *caddyProcess) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// startCaddyProcess runs this test binary as Caddy, in a process of its
// own with the given Caddyfile, until the test ends; a failing test shows
// its logs.
func startCaddyProcess(t *testing.T, caddyfile string) *caddyProcess {
	t.Helper()
	return startCaddyBinary(t, os.Args[0], caddyfile, caddyProcessEnv+"=1")
}

// startCaddyBinary runs bin as Caddy with the given Caddyfile, two CPUs
// and env added to this process's environment, until the test or
// benchmark ends; a failing one shows its logs.
func startCaddyBinary(tb testing.TB, bin, caddyfile string, env ...string) *caddyProcess {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o644); err != nil {
		tb.Fatal(err)
	}
	p := &caddyProcess{cmd: exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")}
	p.cmd.Env = append(append(os.Environ(), "GOMAXPROCS=2"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if tb.Failed() {
			tb.Logf("caddy process %d logs:\n%s", p.cmd.Process.Pid, p.Logs())
		}
	})
	return p
}

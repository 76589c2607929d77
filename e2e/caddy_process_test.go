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

// caddyProcess is a separate Caddy process: this test binary run as Caddy
// with a Caddyfile of its own.
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

// startCaddyProcess runs Caddy in a process of its own with the given
// Caddyfile until the test ends; a failing test shows its logs.
func startCaddyProcess(t *testing.T, caddyfile string) *caddyProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &caddyProcess{cmd: exec.Command(os.Args[0], "run", "--config", path, "--adapter", "caddyfile")}
	p.cmd.Env = append(os.Environ(), caddyProcessEnv+"=1", "GOMAXPROCS=2")
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("caddy process %d logs:\n%s", p.cmd.Process.Pid, p.Logs())
		}
	})
	return p
}

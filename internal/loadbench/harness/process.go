// Package harness runs louter's whole-process benchmarks: it builds the
// Caddy binary with louter, starts Caddy in processes of their own, reads
// their CPU time and resident memory from /proc, serves the streams they
// proxy from a loopback upstream, drives them with validated streaming
// requests, and receives the spans they export. internal/loadbench (the
// load benchmark command) and the e2e benchmarks share it.
package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BuildCaddy builds the Caddy binary with louter (the module's cmd/caddy)
// into dir and returns its path. It runs `go build`, so it works from any
// directory of the module.
func BuildCaddy(dir string) (string, error) {
	out := filepath.Join(dir, "caddy")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/louter/louter/cmd/caddy")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building caddy: %v\n%s", err, msg)
	}
	return out, nil
}

// maxLogs bounds the output a Process keeps: a long benchmark must not
// grow without limit because a process logs per request.
const maxLogs = 1 << 20

// Process is Caddy running in a process of its own with its own Caddyfile.
type Process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

// Start runs bin as Caddy (`run --config ... --adapter caddyfile`) with
// the Caddyfile written into dir and env added to this process's
// environment. The caller must Stop it.
func Start(bin, dir, caddyfile string, env ...string) (*Process, error) {
	f, err := os.CreateTemp(dir, "Caddyfile-*")
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(caddyfile); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	p := &Process{cmd: exec.Command(bin, "run", "--config", f.Name(), "--adapter", "caddyfile")}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	dieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Interrupt asks the process to exit (SIGINT: Caddy stops gracefully,
// running its modules' Cleanup) and waits up to timeout, then kills it.
// It reports whether the process exited on its own.
func (p *Process) Interrupt(timeout time.Duration) bool {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-done
		return false
	}
}

// Stop kills the process and waits for it to exit.
func (p *Process) Stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// Write collects the process's output (stdout and stderr), up to maxLogs
// bytes.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if room := maxLogs - p.logs.Len(); room > 0 {
		p.logs.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// Logs is what the process has written so far (its first maxLogs bytes).
func (p *Process) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// WaitListening waits up to timeout for the process to accept
// connections on a loopback port. It gives up at once when the process
// exits first (a config Caddy rejects), with the last line of its output.
func (p *Process) WaitListening(port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := WaitListening(port, 100*time.Millisecond)
		if err == nil {
			return nil
		}
		if procExited(p.Pid()) {
			return fmt.Errorf("caddy exited before it listened on port %d: %s", port, lastLine(p.Logs()))
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// CPU is the CPU time (user and system, all threads) the process has
// used so far.
func (p *Process) CPU() (time.Duration, error) { return ProcCPU(p.Pid()) }

// RSS is the process's resident memory now, in bytes.
func (p *Process) RSS() (int64, error) { return ProcRSS(p.Pid()) }

package harness

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestProcStat reads this process's CPU and RSS: the fields must parse
// and be positive (the process has run and holds memory).
func TestProcStat(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	// Burn CPU until a tick (10 ms) is counted, boundedly.
	cpu, err := ProcCPU(os.Getpid())
	for x, i := 0, 0; err == nil && cpu == 0 && i < 1000; i++ {
		for j := 0; j < 1_000_000; j++ {
			x += j
		}
		cpu, err = ProcCPU(os.Getpid())
	}
	if err != nil || cpu <= 0 {
		t.Errorf("ProcCPU = %v, %v; want a positive time", cpu, err)
	}
	rss, err := ProcRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("ProcRSS = %d, %v; want at least 1 MiB", rss, err)
	}
	if _, err := ProcCPU(-1); err == nil {
		t.Error("ProcCPU of no process: no error")
	}
}

// TestWaitListeningExited checks a process that exits before it listens
// ends the wait at once, with its last line of output.
func TestWaitListeningExited(t *testing.T) {
	p, err := Start("/bin/sh", t.TempDir(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.WaitListening(ports[0], 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited before it listened") {
		t.Errorf("error %v, want one saying the process exited", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the wait took %v after the process exited", d)
	}
}

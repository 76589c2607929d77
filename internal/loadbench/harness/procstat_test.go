package harness

import (
	"os"
	"testing"
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

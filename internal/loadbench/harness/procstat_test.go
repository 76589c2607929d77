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
	// Burn a little CPU so at least one tick is counted.
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i
	}
	_ = x
	cpu, err := ProcCPU(os.Getpid())
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

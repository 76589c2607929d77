package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/louter/louter/internal/loadbench/results"
)

// header describes the machine and the run's settings, with the load
// average at its start: a busy machine shows in the figures.
func header(cfg config) results.Header {
	return results.Header{
		Date:       time.Now().UTC().Format("2006-01-02T15:04Z"),
		Go:         runtime.Version(),
		CPU:        cpuModel(),
		NProc:      runtime.NumCPU(),
		GOMAXPROCS: cfg.gomaxprocs,
		Commit:     commit(),
		LoadBefore: loadavg(),
		Requests:   cfg.requests,
		Paced:      cfg.paced,
		PaceMS:     float64(cfg.pace) / float64(time.Millisecond),
		Reps:       cfg.reps,
		Conc:       cfg.conc,
	}
}

// loadavg is the 1, 5 and 15 minute load average.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	return strings.Join(f[:min(3, len(f))], " ")
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// commit is the checkout's short commit, with "+dirty" for uncommitted
// changes; "" outside a git checkout.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}

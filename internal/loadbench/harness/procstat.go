package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ProcCPU is the CPU time (utime+stime, all threads) process pid has used,
// from /proc/<pid>/stat, at USER_HZ resolution (10 ms): measure phases
// long enough that the rounding does not matter.
func ProcCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 || i+2 > len(raw) {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(raw[i+2:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, fields[11], fields[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// procExited reports whether process pid, a child of this one, has
// exited: /proc shows it a zombie (state Z) until it is waited for, or
// no longer at all.
func procExited(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(raw, ')')
	return i >= 0 && i+2 < len(raw) && (raw[i+2] == 'Z' || raw[i+2] == 'X')
}

// ProcRSS is the resident set size of process pid in bytes, from
// /proc/<pid>/statm (its second field, in pages).
func ProcRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(raw))
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %q", pid, raw)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: %v", pid, err)
	}
	return pages * int64(os.Getpagesize()), nil
}

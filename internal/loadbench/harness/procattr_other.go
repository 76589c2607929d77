//go:build !linux

package harness

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// Stop (and the benchmark's interrupt handler) end the processes there.
func dieWithParent(*exec.Cmd) {}

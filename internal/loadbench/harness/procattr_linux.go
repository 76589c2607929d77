package harness

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd's process when the process that
// started it dies, so an interrupted or killed benchmark leaves no Caddy
// behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

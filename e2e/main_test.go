// Package e2e drives real, unmodified coding agents (installed from npm by
// `npm ci --prefix e2e`) headless through louter against the mock backend.
//
// The whole test binary re-executes itself inside a fresh network namespace
// (`unshare -n`, loopback only), so the agents can reach nothing but the
// in-process Caddy on 127.0.0.1: no traffic leaves the machine whatever an
// agent tries.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
)

const netnsEnv = "LOUTER_E2E_IN_NETNS"

func TestMain(m *testing.M) {
	if os.Getenv(caddyProcessEnv) != "" {
		// This binary links the same modules as cmd/caddy (standard,
		// louter, louter_mock through internal/testcaddy): a test that
		// needs separate Caddy processes runs it as Caddy itself, with no
		// build step (caddy_process_test.go).
		caddycmd.Main()
		return
	}
	if os.Getenv(mcpServerEnv) != "" {
		// An agent under test started this binary as its MCP server
		// (mcp_server_test.go).
		runMCPServer()
	}
	if os.Getenv(netnsEnv) == "" {
		if code, ok := reexecInNetns(); ok {
			os.Exit(code)
		}
	}
	os.Exit(m.Run())
}

// reexecInNetns runs this test binary again inside a new network namespace
// with only the loopback interface up. ok is false when namespaces are not
// available here (not root); CI runs as root, and there it is an error.
func reexecInNetns() (code int, ok bool) {
	if _, err := exec.LookPath("unshare"); err != nil {
		return 0, inCIFail("unshare not found: " + err.Error())
	}
	// Probe first, so that a refusal (not root) is told apart from a
	// failing test run.
	if out, err := exec.Command("unshare", "-n", "--", "sh", "-c", "ip link set lo up").CombinedOutput(); err != nil {
		return 0, inCIFail(fmt.Sprintf("%v: %s", err, out))
	}
	args := append([]string{"-n", "--", "sh", "-c", `ip link set lo up && exec "$0" "$@"`}, os.Args...)
	cmd := exec.Command("unshare", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	if err := cmd.Run(); err != nil {
		if ee, isExit := err.(*exec.ExitError); isExit {
			return ee.ExitCode(), true
		}
		return 0, inCIFail("unshare: " + err.Error())
	}
	return 0, true
}

func inCIFail(why string) bool {
	if os.Getenv("CI") != "" {
		fmt.Fprintln(os.Stderr, "e2e: cannot isolate the agents in a network namespace:", why)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "e2e: running without a network namespace:", why)
	return false
}

// Package testredis runs a real redis-server for tests, on a free loopback
// port, with nothing saved to disk. Where redis-server is not installed the
// test is skipped with a message saying how to install it — except under CI
// (CI=true), whose .ci/run installs it, where the test fails instead.
package testredis

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// Start runs a redis-server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed; .ci/run installs it (apt-get install -y redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install -y redis-server): skipping the test with a real Redis")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	for i := 0; i < 200; i++ { // up to 10 s
		if c, err := net.DialTimeout("tcp", s.Addr, 50*time.Millisecond); err == nil {
			c.Close()
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-server did not listen on %s", s.Addr)
	return nil
}

// Stop kills the server (a test of the degraded mode calls it early).
func (s *Server) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

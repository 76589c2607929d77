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
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a running redis-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
	t    testing.TB
	args []string
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
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), t: t,
		args: []string{bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}}
	t.Cleanup(s.Stop)
	s.start()
	return s
}

// Client is a go-redis client of the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// Restart starts a stopped server again on the same address, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// start runs the server and waits until it listens.
func (s *Server) start() {
	t := s.t
	t.Helper()
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ { // up to 10 s
		if c, err := net.DialTimeout("tcp", s.Addr, 50*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-server did not listen on %s", s.Addr)
}

// Stop kills the server (a test of the degraded mode calls it early).
func (s *Server) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// Pause stops the server's process (SIGSTOP) without closing its port:
// connections are still accepted by the kernel, but nothing answers, as
// with a server that hangs or a network that drops packets. Resume, Stop
// or Restart ends it.
func (s *Server) Pause() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Resume continues a paused server.
func (s *Server) Resume() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
	}
}

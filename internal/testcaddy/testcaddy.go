// Package testcaddy runs a real Caddy, in process, for louter's integration
// and end-to-end tests: a Caddyfile is adapted with the stock adapter and
// loaded with caddy.Load, the admin endpoint off, on free loopback ports, so
// test packages can run side by side.
package testcaddy

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/louter/louter/caddymodule"
	_ "github.com/louter/louter/caddymodule/mock"
)

// Global options every test config starts with; the log block is added by
// globals.
const globalOptions = `
	admin off
	auto_https off
	persist_config off
	skip_install_trust
`

// Options change what Start sets up around a test's Caddyfile.
type Options struct {
	// LogLevel is the level of Caddy's default logger. Default: ERROR.
	LogLevel string
	// LogFile, when set, receives the default logger's lines (JSON)
	// instead of stderr, for tests that read what was logged.
	LogFile string
	// AdminPort, when set, turns Caddy's admin endpoint on, at
	// 127.0.0.1:AdminPort, for tests of admin API modules.
	AdminPort int
	// StorageDir, when set, is Caddy's storage (file_system), for tests
	// of what louter keeps there; unset, Caddy's default in $HOME.
	StorageDir string
}

func (o Options) globals() string {
	level := o.LogLevel
	if level == "" {
		level = "ERROR"
	}
	out := ""
	if o.LogFile != "" {
		out = fmt.Sprintf("\t\toutput file %q\n\t\tformat json\n", o.LogFile)
	}
	globals := globalOptions
	if o.AdminPort != 0 {
		globals = strings.Replace(globals, "admin off", fmt.Sprintf("admin 127.0.0.1:%d", o.AdminPort), 1)
	}
	if o.StorageDir != "" {
		globals += fmt.Sprintf("\tstorage file_system %q\n", o.StorageDir)
	}
	return "{" + globals + "\tlog {\n\t\tlevel " + level + "\n" + out + "\t}\n}\n"
}

// one config runs at a time in a process.
var running sync.Mutex

// FreePorts returns n distinct loopback ports that were free a moment ago.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// Start adapts caddyfile (without global options: Start adds its own) and
// runs it until the test ends. Every "{PORTn}" in the text (n = 0, 1, ...)
// is replaced by a free port; the ports are returned in order. Start waits
// until the first port accepts connections.
func Start(t testing.TB, caddyfile string) []int {
	t.Helper()
	return StartWith(t, Options{}, caddyfile)
}

// StartWith is Start with options.
func StartWith(t testing.TB, opts Options, caddyfile string) []int {
	t.Helper()
	n := 0
	for strings.Contains(caddyfile, fmt.Sprintf("{PORT%d}", n)) {
		n++
	}
	ports := FreePorts(t, n)
	for i, p := range ports {
		caddyfile = strings.ReplaceAll(caddyfile, fmt.Sprintf("{PORT%d}", i), fmt.Sprint(p))
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	cfg, warnings, err := adapter.Adapt([]byte(opts.globals()+caddyfile), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v\n%s", err, caddyfile)
	}
	for _, w := range warnings {
		t.Logf("Caddyfile warning: %s", w.String())
	}
	running.Lock()
	if err := caddy.Load(cfg, true); err != nil {
		running.Unlock()
		t.Fatalf("loading config: %v\n%s", err, cfg)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Logf("stopping caddy: %v", err)
		}
		running.Unlock()
	})
	if len(ports) > 0 {
		WaitListening(t, ports[0])
	}
	return ports
}

// WaitListening waits up to 5 s for a loopback port to accept connections.
func WaitListening(t testing.TB, port int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("port %d is not listening: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the base URL of a loopback port.
func URL(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }

// Client is an HTTP client for tests: no proxy from the environment, a
// generous timeout for streams.
var Client = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableCompression: true},
	Timeout:   60 * time.Second,
}

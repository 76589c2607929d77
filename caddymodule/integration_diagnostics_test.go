package caddymodule_test

// Integration test of the admin.api.louter_diagnostics module, through a
// real Caddy with its admin endpoint on a loopback port: the backends and
// routes a louter handler runs with, and the opt-in probes against a live
// louter_mock and a port where nothing listens.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// diagKey is the live backend's key; it must never appear in a report.
const diagKey = "sk-diagnostics-secret-0123456789"

const diagnosticsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend live {
			protocol openai_chat
			api_key ` + diagKey + `
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend dead {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model claude-* live gpt-5.5 {
			fallback dead
		}
		model gpt-* dead
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name diag-mock
	}
}
`

func TestDiagnosticsAdmin(t *testing.T) {
	admin := testcaddy.FreePorts(t, 1)[0]
	ports := testcaddy.StartWith(t, testcaddy.Options{AdminPort: admin}, diagnosticsCaddyfile)
	testcaddy.WaitListening(t, admin)

	// ourHandler picks this config's handler, not assuming it is the only
	// one listed (a config being replaced is listed until it is unloaded).
	ourHandler := func(t *testing.T, rep gjson.Result) gjson.Result {
		t.Helper()
		want := fmt.Sprintf("127.0.0.1:%d", ports[1])
		for _, h := range rep.Get("handlers").Array() {
			if h.Get("backends.1.upstreams.0").String() == want {
				return h
			}
		}
		t.Fatalf("no handler with an upstream %s: %s", want, rep.Raw)
		return gjson.Result{}
	}

	get := func(t *testing.T, query string) gjson.Result {
		t.Helper()
		body := testcaddy.Get(t, testcaddy.URL(admin)+"/louter/diagnostics"+query)
		if strings.Contains(string(body), diagKey) || strings.Contains(string(body), "diagnostics-secret") {
			t.Fatalf("the report holds the key: %s", body)
		}
		if !gjson.ValidBytes(body) {
			t.Fatalf("not JSON: %s", body)
		}
		return gjson.ParseBytes(body)
	}

	t.Run("config", func(t *testing.T) {
		h := ourHandler(t, get(t, ""))
		for _, c := range []struct{ path, want string }{
			{"backends.0.name", "dead"},
			{"backends.0.protocol", "anthropic"},
			{"backends.0.base_path", "/v1"},
			{"backends.0.upstreams.0", fmt.Sprintf("127.0.0.1:%d", ports[2])},
			{"backends.0.key_configured", "false"},
			{"backends.1.name", "live"},
			{"backends.1.protocol", "openai_chat"},
			{"backends.1.upstreams.0", fmt.Sprintf("127.0.0.1:%d", ports[1])},
			{"backends.1.key_configured", "true"},
			{"routes.0.match", "claude-*"},
			{"routes.0.backend", "live"},
			{"routes.0.rename", "gpt-5.5"},
			{"routes.0.fallbacks.0", "dead"},
			{"routes.1.match", "gpt-*"},
			{"routes.1.backend", "dead"},
		} {
			if got := h.Get(c.path).String(); got != c.want {
				t.Errorf("%s = %q, want %q", c.path, got, c.want)
			}
		}
		if h.Get("backends.0.probe").Exists() {
			t.Errorf("probed without ?probe=1: %s", h.Raw)
		}
	})

	t.Run("probe", func(t *testing.T) {
		h := ourHandler(t, get(t, "?probe=1"))
		live, dead := h.Get("backends.1.probe"), h.Get("backends.0.probe")
		if !live.Get("reachable").Bool() || live.Get("status").Int() != http.StatusOK || live.Get("error").Exists() {
			t.Errorf("live probe: %s", live.Raw)
		}
		if dead.Get("reachable").Bool() || dead.Get("status").Exists() {
			t.Errorf("dead probe: %s", dead.Raw)
		}
		msg := dead.Get("error").String()
		if !strings.Contains(msg, "connection refused") || strings.Contains(msg, fmt.Sprint(ports[2])) ||
			strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "reverseproxy") {
			t.Errorf("dead probe error %q: want the cause, without the address or Caddy's trace", msg)
		}
	})

	t.Run("method", func(t *testing.T) {
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/louter/diagnostics", admin), "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: status %d, want 405", resp.StatusCode)
		}
	})
}

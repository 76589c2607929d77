package caddymodule_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/louter/louter/internal/testcaddy"
)

// TestIntegrationFallbackWithConditions checks how a route's when lines and
// its fallbacks combine: the chain belongs to the route's own backend, and a
// backend a condition chose serves alone.
func TestIntegrationFallbackWithConditions(t *testing.T) {
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend primary {
			protocol anthropic
			forward_headers X-Mock-Scenario
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend chosen {
			protocol anthropic
			forward_headers X-Mock-Scenario
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend backup {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model mix-* primary {
			when header X-Route special chosen
			fallback backup gpt-backup
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name fbw-primary
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name fbw-backup
		default_scenario text
	}
}
:{PORT3} {
	bind 127.0.0.1
	metrics
}
`)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	url := testcaddy.URL(ports[0]) + "/v1/messages"
	body := `{"model":"mix-1","max_tokens":50,"messages":[{"role":"user","content":"Hi"}]}`

	cases := []struct {
		name       string
		headers    []string
		wantStatus int
		wantText   string
	}{
		// No condition holds: the route's backend answers 529, its
		// fallback takes over.
		{"route backend falls back", []string{"X-Mock-Scenario", "error_overloaded"}, http.StatusOK, "fbw-backup"},
		// The condition chose another backend: its 529 is the answer.
		{"chosen backend serves alone", []string{"X-Mock-Scenario", "error_overloaded", "X-Route", "special"}, 529, "overloaded"},
		// The chosen backend answers well.
		{"chosen backend answers", []string{"X-Mock-Scenario", "text", "X-Route", "special"}, http.StatusOK, "fbw-primary"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, url, body, tc.headers...)
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(got), tc.wantText) {
				t.Errorf("%d %s, want %d with %q", resp.StatusCode, got, tc.wantStatus, tc.wantText)
			}
		})
	}

	// The decisions and the one fallback are counted.
	resp, err := testcaddy.Client.Get(testcaddy.URL(ports[3]) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`louter_fallbacks_total{from="primary",kind="overloaded",model="mix-*",to="backup"} 1`,
		`louter_route_decisions_total{backend="primary",by="route",model="mix-*"} 1`,
		`louter_route_decisions_total{backend="chosen",by="condition",model="mix-*"} 2`,
		`louter_upstream_errors_total{backend="primary",kind="overloaded"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

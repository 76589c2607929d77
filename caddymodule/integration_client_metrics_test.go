package caddymodule_test

// The client name as a metric label, through a real Caddy and its metrics
// handler: configured names label requests and tokens, an identity that
// names no configured client is "other", and limit refusals are counted
// by client and limit.

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/louter/louter/internal/testcaddy"
)

func TestIntegrationClientNameMetrics(t *testing.T) {
	t.Setenv("LOUTER_TEST_BOB_KEY", "bob-key")
	t.Setenv("LOUTER_TEST_DAVE_KEY", "dave-key")
	// Limit counters outlive a config in the process (as across reloads):
	// carol gets a name of her own here, so the key tests' use of her
	// one-request window does not count.
	cfg := strings.NewReplacer("name keys-mock", "name client-metrics-mock", "client carol {", "client carol-m {").Replace(keysCaddyfile()) + `
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`
	ports := testcaddy.Start(t, cfg)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	metricsURL := testcaddy.URL(ports[2]) + "/metrics"
	call := func(header, value string) int {
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(ports[0])+"/v1/chat/completions",
			strings.NewReader(`{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set(header, value)
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	for _, tt := range []struct {
		name          string
		header, value string
		status        int
		clientName    string
		outcome       string
		refusal       string // the limit label counted, if refused by a limit
	}{
		{"configured key", "Authorization", "Bearer carol-key", 200, "carol-m", "ok", ""},
		{"limit reached", "Authorization", "Bearer carol-key", 429, "carol-m", "rejected", "requests"},
		{"configured identity", "X-Test-User", "alice", 200, "alice", "ok", ""},
		{"identity of no configured client", "X-Test-User", "zed-1234", 200, "other", "ok", ""},
	} {
		before := scrape(t, metricsURL)
		if s := call(tt.header, tt.value); s != tt.status {
			t.Fatalf("%s: status %d, want %d", tt.name, s, tt.status)
		}
		after := scrape(t, metricsURL)
		delta := func(name string, labels ...string) float64 {
			return sum(after, name, labels...) - sum(before, name, labels...)
		}
		ln := `client_name="` + tt.clientName + `"`
		if d := delta("louter_requests_total", ln, `outcome="`+tt.outcome+`"`); d != 1 {
			t.Errorf("%s: louter_requests_total{%s,outcome=%q} went up by %v, want 1", tt.name, ln, tt.outcome, d)
		}
		if d := delta("louter_requests_total"); d != 1 {
			t.Errorf("%s: louter_requests_total went up by %v in all, want 1", tt.name, d)
		}
		if tt.status == 200 {
			if d := delta("louter_tokens_total", ln, `kind="input"`); d <= 0 {
				t.Errorf("%s: louter_tokens_total{%s,kind=input} went up by %v, want > 0", tt.name, ln, d)
			}
		}
		wantRefusals := 0.0
		if tt.refusal != "" {
			wantRefusals = 1
			if d := delta("louter_limit_refusals_total", ln, `limit="`+tt.refusal+`"`); d != 1 {
				t.Errorf("%s: louter_limit_refusals_total{%s,limit=%q} went up by %v, want 1", tt.name, ln, tt.refusal, d)
			}
		}
		if d := delta("louter_limit_refusals_total"); d != wantRefusals {
			t.Errorf("%s: louter_limit_refusals_total went up by %v in all, want %v", tt.name, d, wantRefusals)
		}
		for series := range after {
			if strings.Contains(series, "zed-1234") {
				t.Errorf("%s: a free-form identity became a label: %s", tt.name, series)
			}
		}
	}
}

package caddymodule_test

// The client name as a metric label, through a real Caddy and its metrics
// handler: configured names label requests and tokens, an identity that
// names no configured client is "other", and limit refusals are counted
// by client and limit.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		s, _ := testcaddy.Do(t, http.MethodPost, testcaddy.URL(ports[0])+"/v1/chat/completions",
			`{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`, header, value)
		return s
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
		before := testcaddy.Scrape(t, metricsURL)
		if s := call(tt.header, tt.value); s != tt.status {
			t.Fatalf("%s: status %d, want %d", tt.name, s, tt.status)
		}
		after := testcaddy.Scrape(t, metricsURL)
		delta := func(name string, labels ...string) float64 {
			return testcaddy.Sum(after, name, labels...) - testcaddy.Sum(before, name, labels...)
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

// Requests the key table refuses are counted, by client protocol and
// reason, and their access-log lines carry the fields documented as always
// there: before, a missing or wrong key left no trace but Caddy's status.
func TestIntegrationAuthRefusals(t *testing.T) {
	t.Setenv("LOUTER_TEST_BOB_KEY", "bob-key")
	t.Setenv("LOUTER_TEST_DAVE_KEY", "dave-key")
	accessLog := filepath.Join(t.TempDir(), "access.log")
	cfg := strings.NewReplacer(
		"name keys-mock", "name auth-refusals-mock",
		"bind 127.0.0.1\n\tlouter {", fmt.Sprintf("bind 127.0.0.1\n\tlog {\n\t\toutput file %q\n\t}\n\tlog_append placeholder_outcome {http.louter.outcome}\n\tlouter {", accessLog),
	).Replace(keysCaddyfile()) + `
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`
	ports := testcaddy.Start(t, cfg)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	metricsURL := testcaddy.URL(ports[2]) + "/metrics"

	const chat = `{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`
	const messages = `{"model":"to-anthropic","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	const gemini = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name         string
		path, body   string
		header       http.Header
		status       int
		client       string // the protocol label and louter_client field
		reason       string
		routedRecord bool // refused after the exchange record began (a chat request's model)
	}{
		{"chat without key", "/v1/chat/completions", chat, nil, 401, "openai_chat", "missing_key", false},
		{"chat wrong key", "/v1/chat/completions", chat, http.Header{"Authorization": {"Bearer nope"}}, 401, "openai_chat", "invalid_key", false},
		{"messages wrong key", "/v1/messages", messages, http.Header{"X-Api-Key": {"nope"}, "Anthropic-Version": {"2023-06-01"}}, 401, "anthropic", "invalid_key", false},
		{"responses without key", "/v1/responses", `{"model":"to-openai_responses","input":"hi"}`, nil, 401, "openai_responses", "missing_key", false},
		{"gemini without key", "/v1beta/models/to-gemini:generateContent", gemini, nil, 403, "gemini", "missing_key", false},
		{"gemini wrong key", "/v1beta/models/to-gemini:generateContent", gemini, http.Header{"X-Goog-Api-Key": {"nope"}}, 400, "gemini", "invalid_key", false},
		{"count tokens, model not allowed", "/v1/messages/count_tokens", messages, http.Header{"X-Api-Key": {"bob-key"}, "Anthropic-Version": {"2023-06-01"}}, 403, "anthropic", "model_not_allowed", false},
		{"chat, model not allowed", "/v1/chat/completions", chat, http.Header{"Authorization": {"Bearer bob-key"}}, 403, "openai_chat", "model_not_allowed", true},
	}
	for _, tt := range tests {
		before := testcaddy.Scrape(t, metricsURL)
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(ports[0])+tt.path, strings.NewReader(tt.body))
		for k, v := range tt.header {
			req.Header[k] = v
		}
		req.Header.Set("X-Test-Case", tt.name)
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
		after := testcaddy.Scrape(t, metricsURL)
		labels := []string{`client="` + tt.client + `"`, `reason="` + tt.reason + `"`}
		if d := testcaddy.Sum(after, "louter_auth_refusals_total", labels...) - testcaddy.Sum(before, "louter_auth_refusals_total", labels...); d != 1 {
			t.Errorf("%s: louter_auth_refusals_total{%s} went up by %v, want 1", tt.name, strings.Join(labels, ","), d)
		}
		if d := testcaddy.Sum(after, "louter_auth_refusals_total") - testcaddy.Sum(before, "louter_auth_refusals_total"); d != 1 {
			t.Errorf("%s: louter_auth_refusals_total went up by %v in all, want 1", tt.name, d)
		}
		for series := range after {
			if strings.Contains(series, "nope") || strings.Contains(series, "bob-key") {
				t.Errorf("%s: a key became a label: %s", tt.name, series)
			}
		}
	}

	lines := map[string]map[string]any{}
	for range 100 { // the last line may be written just after its response
		data, _ := os.ReadFile(accessLog)
		clear(lines)
		for l := range bytes.Lines(data) {
			var entry map[string]any
			if err := json.Unmarshal(l, &entry); err != nil {
				t.Fatalf("access log line %s: %v", l, err)
			}
			req, _ := entry["request"].(map[string]any)
			hdr, _ := req["headers"].(map[string]any)
			if v, ok := hdr["X-Test-Case"].([]any); ok && len(v) == 1 {
				lines[v[0].(string)] = entry
			}
		}
		if len(lines) == len(tests) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tt := range tests {
		e, ok := lines[tt.name]
		if !ok {
			t.Errorf("%s: no access-log line", tt.name)
			continue
		}
		if tt.reason == "model_not_allowed" && !tt.routedRecord {
			continue // token counts have no exchange record, refused or not
		}
		for k, want := range map[string]any{"louter_client": tt.client, "louter_outcome": "rejected", "placeholder_outcome": "rejected"} {
			if e[k] != want {
				t.Errorf("%s: access log %s = %v, want %v", tt.name, k, e[k], want)
			}
		}
	}
}

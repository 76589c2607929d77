package caddymodule_test

// Metrics, access-log fields and placeholders through a real Caddy: every
// client protocol, translated and passed through, streaming and not, with
// usage and failing (an error status, an error event mid-stream, a dead
// backend, an unknown model). The metrics are scraped from Caddy's own
// metrics handler, which serves the config's registry.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
)

func metricsCaddyfile(accessLog string, deadPort int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
:{PORT0} {
	bind 127.0.0.1
	log {
		output file %q
	}
	header >X-Louter-Client {http.louter.client}
	header >X-Louter-Backend {http.louter.backend}
	header >X-Louter-Backend-Model {http.louter.backend_model}
	header >X-Louter-Stream {http.louter.stream}
	log_append placeholder_outcome {http.louter.outcome}
	log_append placeholder_output_tokens {http.louter.output_tokens}
	louter {
		forward_headers X-Mock-Scenario X-Mock-Stall X-Mock-Stall-Before X-Mock-Truncate
		first_byte_timeout 300ms
		stream_idle_timeout 300ms
		backend dead {
			protocol openai_chat
			reverse_proxy 127.0.0.1:%d
		}
		model to-dead dead
`, accessLog, deadPort)
	for _, p := range matrixProtocols {
		fmt.Fprintf(&b, `		backend %[1]s {
			protocol %[1]s
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-%[1]s-* %[1]s backend-%[1]s
`, p)
	}
	b.WriteString(`	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name metrics
		chunk_delay 0
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`)
	return b.String()
}

type metricsCase struct {
	name     string
	client   string
	model    string // the model asked for
	route    string // the route pattern (model label); empty: no route
	backend  string
	stream   bool
	scenario string
	extra    string    // a top-level member added to an Anthropic body ("" none)
	header   [2]string // a request header for the mock, when set

	status  int
	outcome string
	kind    string // upstream error kind, or ""
	// usage is whether token counts are expected: "yes", "no", or "" for
	// a stream that failed after the backend reported its input.
	usage string
	stop  bool // a stop reason is expected (a translated answer)
	ttft  bool // a time to first token is expected (content was streamed)
}

func metricsCases() []metricsCase {
	var cases []metricsCase
	for i, client := range matrixProtocols {
		for _, backend := range []string{matrixProtocols[(i+1)%len(matrixProtocols)], client} {
			for _, stream := range []bool{false, true} {
				pass := backend == client
				// OpenAI Chat streams report usage only when asked
				// (include_usage).
				usage := "yes"
				if pass && stream && client == "openai_chat" {
					usage = "no"
				}
				cases = append(cases, metricsCase{
					name: fmt.Sprintf("%s>%s stream=%v", client, backend, stream), client: client,
					model: "to-" + backend + "-x", route: "to-" + backend + "-*", backend: backend, stream: stream,
					scenario: "text", status: 200, outcome: "ok", usage: usage, stop: !pass || !stream, ttft: stream,
				})
			}
		}
		next := matrixProtocols[(i+1)%len(matrixProtocols)]
		cases = append(cases,
			metricsCase{
				name: client + " 429", client: client, model: "to-openai_chat-x", route: "to-openai_chat-*", backend: "openai_chat",
				scenario: "error_429", status: 429, outcome: "upstream_error", kind: "rate_limited", usage: "no",
			},
			metricsCase{
				name: client + " stream error", client: client, model: "to-" + next + "-x", route: "to-" + next + "-*", backend: next, stream: true,
				scenario: "stream_error", status: 200, outcome: "upstream_error", kind: "stream_error", ttft: true,
			},
			metricsCase{
				name: client + " passthrough stream error", client: client, model: "to-" + client + "-x", route: "to-" + client + "-*", backend: client, stream: true,
				scenario: "stream_error", status: 200, outcome: "upstream_error", kind: "stream_error", ttft: true,
			},
			metricsCase{
				name: client + " stream cut", client: client, model: "to-" + next + "-x", route: "to-" + next + "-*", backend: next, stream: true,
				scenario: "stream_cut", status: 200, outcome: "upstream_error", kind: "stream_cut", ttft: true,
			},
			metricsCase{
				name: client + " dead backend", client: client, model: "to-dead", route: "to-dead", backend: "dead", stream: true,
				scenario: "text", status: 502, outcome: "upstream_error", kind: "unreachable", usage: "no",
			},
			metricsCase{
				name: client + " unknown model", client: client, model: "nowhere", scenario: "text", status: 404, outcome: "rejected", usage: "no",
			},
		)
	}
	// The timers, and a stream that ends before its end, once.
	cases = append(cases,
		metricsCase{
			name: "first byte timeout", client: "anthropic", model: "to-openai_chat-x", route: "to-openai_chat-*", backend: "openai_chat",
			scenario: "text", header: [2]string{"X-Mock-Stall-Before", "2s"}, status: 504, outcome: "upstream_error", kind: "first_byte_timeout", usage: "no",
		},
		metricsCase{
			name: "idle timeout", client: "anthropic", model: "to-openai_chat-x", route: "to-openai_chat-*", backend: "openai_chat", stream: true,
			scenario: "text", header: [2]string{"X-Mock-Stall", "2s"}, status: 200, outcome: "upstream_error", kind: "idle_timeout", ttft: true,
		},
		metricsCase{
			name: "truncated stream", client: "openai_chat", model: "to-anthropic-x", route: "to-anthropic-*", backend: "anthropic", stream: true,
			scenario: "text", header: [2]string{"X-Mock-Truncate", "3"}, status: 200, outcome: "upstream_error", kind: "stream_error", ttft: true,
		},
	)
	cases = append(cases, metricsCase{
		name: "anthropic dropped field", client: "anthropic", model: "to-openai_chat-x", route: "to-openai_chat-*", backend: "openai_chat",
		scenario: "text", extra: `"louter_test_unknown":1`, status: 200, outcome: "ok", usage: "yes", stop: true,
	})
	return cases
}

func (c metricsCase) request(t *testing.T, base string) *http.Request {
	req := matrixRequest(t, base, c.client, c.model, c.stream, c.scenario)
	if c.extra != "" {
		body, _ := io.ReadAll(req.Body)
		body = append(append(bytes.TrimSuffix(body, []byte("}")), ','), c.extra+"}"...)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	req.Header.Set("X-Test-Case", c.name)
	if c.header[0] != "" {
		req.Header.Set(c.header[0], c.header[1])
	}
	return req
}

func TestMetricsLogFieldsPlaceholders(t *testing.T) {
	dir := t.TempDir()
	accessLog := filepath.Join(dir, "access.log")
	dead := testcaddy.FreePorts(t, 1)[0]
	// The dead backend's errors go to a file rather than the test's output.
	ports := testcaddy.StartWith(t, testcaddy.Options{LogFile: filepath.Join(dir, "caddy.log")}, metricsCaddyfile(accessLog, dead))
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	louter, metricsURL := testcaddy.URL(ports[0]), testcaddy.URL(ports[2])+"/metrics"

	cases := metricsCases()
	for _, c := range cases {
		before := testcaddy.Scrape(t, metricsURL)
		resp, err := testcaddy.Client.Do(c.request(t, louter))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		after := testcaddy.Scrape(t, metricsURL)
		delta := func(name string, labels ...string) float64 {
			return testcaddy.Sum(after, name, labels...) - testcaddy.Sum(before, name, labels...)
		}

		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, resp.StatusCode, c.status, body)
			continue
		}
		lc := `client="` + c.client + `"`
		lb := `backend="` + c.backend + `"`
		lm := `model="` + c.route + `"`
		class := fmt.Sprintf(`code_class="%dxx"`, c.status/100)
		// No key table: the client_name label is empty.
		if d := delta("louter_requests_total", lc, `client_name=""`, lb, lm, class, `outcome="`+c.outcome+`"`); d != 1 {
			t.Errorf("%s: louter_requests_total{%s,%s,%s,%s,outcome=%q} went up by %v, want 1", c.name, lc, lb, lm, class, c.outcome, d)
		}
		if d := delta("louter_requests_total"); d != 1 {
			t.Errorf("%s: louter_requests_total went up by %v in all, want 1", c.name, d)
		}
		if d := delta("louter_request_duration_seconds_count", lc, lb, lm); d != 1 {
			t.Errorf("%s: duration observations went up by %v, want 1", c.name, d)
		}
		if d := testcaddy.Sum(after, "louter_streams_open"); d != 0 {
			t.Errorf("%s: %v streams open after the request", c.name, d)
		}
		wantTTFT := 0.0
		if c.ttft {
			wantTTFT = 1
		}
		if d := delta("louter_time_to_first_token_seconds_count", lc, lb, lm); d != wantTTFT {
			t.Errorf("%s: TTFT observations went up by %v, want %v", c.name, d, wantTTFT)
		}
		in, out := delta("louter_tokens_total", lc, lb, lm, `kind="input"`), delta("louter_tokens_total", lc, lb, lm, `kind="output"`)
		if c.usage == "yes" && (in <= 0 || out <= 0) {
			t.Errorf("%s: tokens went up by input %v, output %v; want both > 0", c.name, in, out)
		}
		if c.usage == "no" && (in != 0 || out != 0) {
			t.Errorf("%s: a failed request counted input %v, output %v tokens", c.name, in, out)
		}
		wantErr := 0.0
		if c.kind != "" {
			wantErr = 1
			if d := delta("louter_upstream_errors_total", lb, `kind="`+c.kind+`"`); d != 1 {
				t.Errorf("%s: upstream errors of kind %s went up by %v, want 1", c.name, c.kind, d)
			}
		}
		if d := delta("louter_upstream_errors_total"); d != wantErr {
			t.Errorf("%s: upstream errors went up by %v, want %v", c.name, d, wantErr)
		}
		if c.extra != "" {
			if d := delta("louter_dropped_fields_total", lc, lb, `field="unknown"`); d != 1 {
				t.Errorf("%s: dropped fields {field=unknown} went up by %v, want 1", c.name, d)
			}
		}
		// Placeholders known before the backend is asked, through a
		// deferred header directive.
		if got := resp.Header.Get("X-Louter-Client"); got != c.client {
			t.Errorf("%s: {http.louter.client} = %q, want %q", c.name, got, c.client)
		}
		if c.route != "" {
			if got := resp.Header.Get("X-Louter-Backend"); got != c.backend {
				t.Errorf("%s: {http.louter.backend} = %q, want %q", c.name, got, c.backend)
			}
			wantModel := "backend-" + c.backend
			if c.backend == "dead" {
				wantModel = c.model
			}
			if got := resp.Header.Get("X-Louter-Backend-Model"); got != wantModel {
				t.Errorf("%s: {http.louter.backend_model} = %q, want %q", c.name, got, wantModel)
			}
			if got := resp.Header.Get("X-Louter-Stream"); got != strconv.FormatBool(c.stream) {
				t.Errorf("%s: {http.louter.stream} = %q, want %v", c.name, got, c.stream)
			}
		}
	}

	checkAccessLog(t, accessLog, cases)
	checkCanceled(t, louter, metricsURL)
}

// checkCanceled: a client that leaves mid-stream is counted as canceled,
// and its stream is no longer open.
func checkCanceled(t *testing.T, louter, metricsURL string) {
	t.Helper()
	before := testcaddy.Scrape(t, metricsURL)
	c := metricsCase{name: "canceled", client: "anthropic", model: "to-openai_chat-x", stream: true, scenario: "long", header: [2]string{"X-Mock-Stall", "250ms"}}
	resp, err := testcaddy.Client.Do(c.request(t, louter))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // gone before the backend speaks again
	labels := []string{`client="anthropic"`, `backend="openai_chat"`, `outcome="canceled"`}
	for range 100 { // the server learns of it when the connection closes
		after := testcaddy.Scrape(t, metricsURL)
		if testcaddy.Sum(after, "louter_requests_total", labels...)-testcaddy.Sum(before, "louter_requests_total", labels...) == 1 {
			if n := testcaddy.Sum(after, "louter_streams_open"); n != 0 {
				t.Errorf("%v streams open after the client left", n)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("a client that left mid-stream was not counted as canceled")
}

// checkAccessLog finds each case's access-log line by its X-Test-Case
// header and checks louter's fields, and the fields log_append took from
// the placeholders at the end of the request.
func checkAccessLog(t *testing.T, path string, cases []metricsCase) {
	t.Helper()
	lines := map[string]map[string]any{}
	for range 100 { // the last line may be written just after its response
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
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
		if len(lines) == len(cases) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range cases {
		e, ok := lines[c.name]
		if !ok {
			t.Errorf("%s: no access-log line", c.name)
			continue
		}
		want := map[string]any{"louter_client": c.client, "louter_outcome": c.outcome, "placeholder_outcome": c.outcome}
		if c.route != "" {
			want["louter_backend"] = c.backend
			want["louter_model"] = c.model
			want["louter_stream"] = c.stream
		}
		if c.kind != "" {
			want["louter_upstream_error"] = c.kind
		}
		if c.extra != "" {
			want["louter_dropped"] = 1.0
		}
		if c.stop {
			want["louter_stop_reason"] = "end_turn"
		}
		for k, v := range want {
			if e[k] != v {
				t.Errorf("%s: access log %s = %v, want %v", c.name, k, e[k], v)
			}
		}
		out, _ := e["louter_output_tokens"].(float64)
		if c.usage != "" && (c.usage == "yes") != (out > 0) {
			t.Errorf("%s: access log louter_output_tokens = %v, usage expected: %v", c.name, e["louter_output_tokens"], c.usage)
		}
		if c.usage == "yes" && fmt.Sprint(e["placeholder_output_tokens"]) != fmt.Sprint(out) {
			t.Errorf("%s: {http.louter.output_tokens} = %v, want %v", c.name, e["placeholder_output_tokens"], out)
		}
		ttft, _ := e["louter_ttft"].(float64)
		if c.ttft != (ttft > 0) {
			t.Errorf("%s: access log louter_ttft = %v", c.name, e["louter_ttft"])
		}
	}
}

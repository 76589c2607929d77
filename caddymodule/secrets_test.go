package caddymodule_test

// The fault matrix: every client protocol × every backend protocol,
// streaming and not, with backend keys and every form of client key, through
// a real Caddy logging at debug level with an access log, against a mock that
// echoes the key it received in its errors. No key byte may appear in any
// log byte or in any answer, and no client credential may reach a backend
// that does not pass client auth.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// The backend keys louter is configured with. They are not shaped like any
// provider's key, so only scrubbing by value can hide them.
var matrixBackendKeys = map[string]string{
	"anthropic":        "anthropic-backend-secret-7f3a91",
	"openai_chat":      "openai-chat-backend-secret-2c8e44",
	"openai_responses": "openai-resp-backend-secret-9d1b07",
	"gemini":           "gemini-backend-secret-5e6f28",
}

// The client's keys, one per credential form, all sent with every request.
var matrixClientKeys = map[string]string{
	"X-Api-Key":           "client-xapikey-secret-41aa",
	"Authorization":       "client-bearer-secret-42bb",
	"X-Goog-Api-Key":      "client-googkey-secret-43cc",
	"Api-Key":             "client-azurekey-secret-44dd",
	"Anthropic-Api-Key":   "client-anthkey-secret-45ee",
	"Cookie":              "client-cookie-secret-46ff",
	"Openai-Organization": "client-org-secret-4711",
	"Openai-Project":      "client-project-secret-4822",
	"Proxy-Authorization": "client-proxyauth-secret-4933",
	"?key":                "client-querykey-secret-5044",
	"?KEY":                "client-querykey-upper-secret-5155",
}

var matrixProtocols = []string{"anthropic", "openai_chat", "openai_responses", "gemini"}

func matrixCaddyfile(accessLog string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
:{PORT0} {
	bind 127.0.0.1
	log {
		output file %q
		format filter {
			request>headers louter_redact
			request>uri louter_redact
		}
	}
	louter {
		forward_headers X-Mock-Scenario
`, accessLog)
	for _, p := range matrixProtocols {
		fmt.Fprintf(&b, `		backend %[1]s {
			protocol %[1]s
			api_key %[2]s
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend %[1]s-pass {
			protocol %[1]s
			pass_client_auth
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-%[1]s-pass %[1]s-pass
		model to-%[1]s %[1]s
`, p, matrixBackendKeys[p])
	}
	b.WriteString(`	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name matrix
		chunk_delay 0
	}
}
`)
	return b.String()
}

// matrixRequest builds a request of a client protocol for a model, with
// every client credential form.
func matrixRequest(t *testing.T, base, client, model string, stream bool, scenario string) *http.Request {
	t.Helper()
	var path, body string
	switch client {
	case "anthropic":
		path = "/v1/messages"
		body = fmt.Sprintf(`{"model":%q,"max_tokens":50,"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, model, stream)
	case "openai_chat":
		path = "/v1/chat/completions"
		body = fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, model, stream)
	case "openai_responses":
		path = "/v1/responses"
		body = fmt.Sprintf(`{"model":%q,"stream":%v,"input":"hi"}`, model, stream)
	case "gemini":
		path = "/v1beta/models/" + model + ":generateContent"
		if stream {
			path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	url := base + path + sep + "key=" + matrixClientKeys["?key"] + "&KEY=" + matrixClientKeys["?KEY"]
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for h, v := range matrixClientKeys {
		switch h {
		case "?key", "?KEY":
		case "Authorization":
			req.Header.Set(h, "Bearer "+v)
		default:
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Mock-Scenario", scenario)
	return req
}

func allSecrets() []string {
	var out []string
	for _, k := range matrixBackendKeys {
		out = append(out, k)
	}
	for _, k := range matrixClientKeys {
		out = append(out, k)
	}
	return out
}

// leaked returns the secrets found in data.
func leaked(data []byte) []string {
	var out []string
	for _, s := range allSecrets() {
		if bytes.Contains(data, []byte(s)) {
			out = append(out, s)
		}
	}
	return out
}

func TestSecretsFaultMatrix(t *testing.T) {
	dir := t.TempDir()
	debugLog, accessLog := filepath.Join(dir, "caddy.log"), filepath.Join(dir, "access.log")
	ports := testcaddy.StartWith(t, testcaddy.Options{LogLevel: "DEBUG", LogFile: debugLog}, matrixCaddyfile(accessLog))
	testcaddy.WaitListening(t, ports[1])
	louter, mockURL := testcaddy.URL(ports[0]), testcaddy.URL(ports[1])

	requests := 0
	for _, client := range matrixProtocols {
		for _, backend := range matrixProtocols {
			for _, pass := range []bool{false, true} {
				model := "to-" + backend
				if pass {
					model += "-pass"
				}
				for _, stream := range []bool{false, true} {
					for _, scenario := range []string{"text", "error_echo_key", "stream_error_echo_key"} {
						name := fmt.Sprintf("%s>%s pass=%v stream=%v %s", client, model, pass, stream, scenario)
						clearJournal(t, mockURL)
						resp, err := testcaddy.Client.Do(matrixRequest(t, louter, client, model, stream, scenario))
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						answer, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						requests++
						if l := leaked(answer); len(l) > 0 {
							t.Errorf("%s: the answer carries %v:\n%s", name, l, answer)
						}
						if scenario != "text" && bytes.Contains(answer, []byte("10.1.2.3:8443")) {
							t.Errorf("%s: the answer names an internal address:\n%s", name, answer)
						}
						if scenario == "error_echo_key" && (resp.StatusCode != http.StatusUnauthorized || !bytes.Contains(answer, []byte("[redacted]"))) {
							t.Errorf("%s: status %d, want 401 with the key redacted:\n%s", name, resp.StatusCode, answer)
						}
						if scenario == "stream_error_echo_key" && !bytes.Contains(answer, []byte("Incorrect API key provided: [redacted]")) {
							t.Errorf("%s: the error message is lost or not redacted:\n%s", name, answer)
						}
						checkBackendCredentials(t, name, mockURL, backend, pass && client == backend, pass)
					}
				}
			}
			// A client that goes away mid-stream: reverse_proxy logs
			// "aborting with incomplete response" with the request.
			req := matrixRequest(t, louter, client, "to-"+backend, true, "slow")
			resp, err := testcaddy.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatalf("%s>%s slow: no first bytes: %v", client, backend, err)
			}
			resp.Body.Close()
			requests++
		}
	}

	// Let the aborted streams reach their log lines, then stop Caddy so
	// every log line is written.
	waitForLog(t, debugLog, "aborting with incomplete response", len(matrixProtocols)*len(matrixProtocols))
	for name, path := range map[string]string{"debug log": debugLog, "access log": accessLog} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if l := leaked(data); len(l) > 0 {
			t.Errorf("the %s carries %v", name, l)
			for line := range bytes.Lines(data) {
				if len(leaked(line)) > 0 {
					t.Logf("%s", line)
					break
				}
			}
		}
		t.Logf("%s: %d bytes for %d requests", name, len(data), requests)
	}
	// The test proves something only if the logs hold the requests.
	debug, _ := os.ReadFile(debugLog)
	access, _ := os.ReadFile(accessLog)
	for _, want := range []string{`"upstream roundtrip"`, `"aborting with incomplete response"`, `"X-Forwarded-For":[`} {
		if !bytes.Contains(debug, []byte(want)) {
			t.Errorf("the debug log has no %s line: the test does not see what it should", want)
		}
	}
	for _, want := range []string{`"X-Goog-Api-Key":["REDACTED"]`, `"Api-Key":["REDACTED"]`, `key=REDACTED&KEY=REDACTED`} {
		if !bytes.Contains(access, []byte(want)) {
			t.Errorf("the access log has no %s", want)
		}
	}
}

// checkBackendCredentials checks what the mock received: the backend's own
// key in its protocol's header, or with pass_client_auth the client's; no
// other credential form, no client key elsewhere.
func checkBackendCredentials(t *testing.T, name, mockURL, backend string, passthrough, pass bool) {
	t.Helper()
	entries := journal(t, mockURL)
	if len(entries) != 1 {
		t.Errorf("%s: the mock received %d requests, want 1", name, len(entries))
		return
	}
	got := entries[0]
	keyHeader := map[string]string{"anthropic": "X-Api-Key", "openai_chat": "Authorization", "openai_responses": "Authorization", "gemini": "X-Goog-Api-Key"}[backend]
	want := matrixBackendKeys[backend]
	if pass {
		want = "" // the client's key: which form depends on the pair
	}
	// With pass_client_auth on a same-protocol pair, the credential
	// headers of the backend's protocol go on as the client sent them.
	var kept map[string]bool
	if passthrough {
		kept = map[string]map[string]bool{
			"anthropic":        {"Authorization": true},
			"openai_chat":      {"Api-Key": true, "Openai-Organization": true, "Openai-Project": true},
			"openai_responses": {"Api-Key": true, "Openai-Organization": true, "Openai-Project": true},
			"gemini":           {"Authorization": true},
		}[backend]
	}
	headers := got.Get("headers").Map()
	for h, v := range headers {
		if h == keyHeader || kept[h] {
			continue
		}
		if l := leaked([]byte(v.String())); len(l) > 0 {
			t.Errorf("%s: %s: %q reached the backend", name, h, v.String())
		}
	}
	if l := leaked([]byte(got.Get("query").String())); len(l) > 0 {
		t.Errorf("%s: the query %q reached the backend", name, got.Get("query").String())
	}
	v := headers[keyHeader].String()
	switch {
	case want != "" && !strings.Contains(v, want):
		t.Errorf("%s: %s = %q, want the backend key %q", name, keyHeader, v, want)
	case want == "" && len(leaked([]byte(v))) == 0:
		t.Errorf("%s: %s = %q, want the client's key", name, keyHeader, v)
	}
}

func clearJournal(t *testing.T, mockURL string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, mockURL+"/_mock/requests", nil)
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func journal(t *testing.T, mockURL string) []gjson.Result {
	t.Helper()
	resp, err := testcaddy.Client.Get(mockURL + "/_mock/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return gjson.ParseBytes(raw).Array()
}

// waitForLog waits, up to 10 s, for n lines containing msg in a log file.
func waitForLog(t *testing.T, path, msg string, n int) {
	t.Helper()
	for range 200 {
		data, _ := os.ReadFile(path)
		if bytes.Count(data, []byte(msg)) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("fewer than %d %q lines in the log", n, msg)
}

// TestSecretsHeaderUpAndRetries checks that the key louter adds below
// reverse_proxy survives reverse_proxy's own machinery: retries after a
// failed dial (each attempt gets the key), header_up (still applied, and
// winning over louter's key when it sets the same header).
func TestSecretsHeaderUpAndRetries(t *testing.T) {
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend retry {
			protocol anthropic
			api_key retry-backend-secret-0001
			reverse_proxy 127.0.0.1:{PORT2} 127.0.0.1:{PORT1} {
				lb_policy round_robin
				lb_retries 2
				request_buffers 1MiB
				header_up X-Extra from-header-up
			}
		}
		backend override {
			protocol openai_chat
			api_key louter-backend-secret-0002
			reverse_proxy 127.0.0.1:{PORT1} {
				header_up Authorization "Bearer operator-secret-0003"
			}
		}
		model claude-* retry
		model gpt-* override
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name retries
	}
}
`)
	testcaddy.WaitListening(t, ports[1])
	louter, mockURL := testcaddy.URL(ports[0]), testcaddy.URL(ports[1])
	tests := []struct {
		path, model, header, want string
	}{
		{"/v1/messages", "claude-1", "X-Api-Key", "retry-backend-secret-0001"},
		{"/v1/messages", "claude-2", "X-Api-Key", "retry-backend-secret-0001"}, // round robin: one of the two dials the dead port first
		{"/v1/chat/completions", "gpt-1", "Authorization", "Bearer operator-secret-0003"},
	}
	for _, tt := range tests {
		clearJournal(t, mockURL)
		body := fmt.Sprintf(`{"model":%q,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, tt.model)
		req, _ := http.NewRequest(http.MethodPost, louter+tt.path, strings.NewReader(body))
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tt.model, resp.StatusCode, raw)
		}
		entries := journal(t, mockURL)
		if len(entries) != 1 {
			t.Fatalf("%s: the mock received %d requests", tt.model, len(entries))
		}
		if got := entries[0].Get("headers." + tt.header).String(); got != tt.want {
			t.Errorf("%s: %s = %q, want %q", tt.model, tt.header, got, tt.want)
		}
		if tt.header == "X-Api-Key" && entries[0].Get("headers.X-Extra").String() != "from-header-up" {
			t.Errorf("%s: header_up lost: %s", tt.model, entries[0].Get("headers").Raw)
		}
	}
}

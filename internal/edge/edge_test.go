package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/testcaddy"
)

// caddyProcessEnv makes the test binary run as Caddy (TestMain): each tier
// is a Caddy process of its own, as in production.
const caddyProcessEnv = "LOUTER_EDGE_RUN_CADDY"

func TestMain(m *testing.M) { testcaddy.Main(m, caddyProcessEnv) }

func startCaddy(t *testing.T, caddyfile string) *harness.Process {
	t.Helper()
	home := t.TempDir() // Caddy's storage and config folders, not the user's
	return testcaddy.StartProcess(t, caddyProcessEnv, caddyfile, "GOMAXPROCS=2", "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
}

// guideBlocks returns the Caddyfile blocks of docs/edge.md: the louter
// instance's and the edge's, as the guide shows them.
func guideBlocks(t *testing.T) (instance, edge string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "edge.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && l == "```caddyfile":
			cur = &strings.Builder{}
		case cur != nil && l == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("docs/edge.md has %d Caddyfile blocks, want 2 (the instance, the edge)", len(blocks))
	}
	return blocks[0], blocks[1]
}

// adapt makes a block of the guide runnable here: each old text must be
// in the block (so the test follows the guide), and is replaced.
func adapt(t *testing.T, block string, oldNew ...string) string {
	t.Helper()
	for i := 0; i < len(oldNew); i += 2 {
		if !strings.Contains(block, oldNew[i]) {
			t.Fatalf("docs/edge.md no longer has %q in:\n%s", oldNew[i], block)
		}
		block = strings.Replace(block, oldNew[i], oldNew[i+1], 1)
	}
	return block
}

// testGlobals are what every process of the test adds to the guide's
// global options: no admin endpoint, no certificates.
const testGlobals = "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n"

func fill(s string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(s)
}

type tiers struct {
	edge       string // base URL
	aURL       string // instance a, directly
	a, b       *harness.Process
	aLog, bLog string // access logs of the louter instances
	edgeLog    string
}

func startTiers(t *testing.T) tiers {
	t.Helper()
	ports := testcaddy.FreePorts(t, 5)
	dir := t.TempDir()
	tr := tiers{
		edge:    testcaddy.URL(ports[0]),
		aURL:    testcaddy.URL(ports[1]),
		aLog:    filepath.Join(dir, "a.log"),
		bLog:    filepath.Join(dir, "b.log"),
		edgeLog: filepath.Join(dir, "edge.log"),
	}
	instance, edge := guideBlocks(t)
	louter := func(port, mock int, name, accessLog string) string {
		return adapt(t, instance,
			"{\n", testGlobals,
			"10.0.0.0/8", "127.0.0.1/32",
			":8080 {\n", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\theader X-Instance %s\n", port, name),
			"\tlog\n", fmt.Sprintf("\tlog {\n\t\toutput file %q\n\t\tformat json\n\t}\n", accessLog),
			"protocol openai_chat\n", "protocol openai_chat\n\t\t\t\tforward_headers X-Mock-Stall\n",
			"reverse_proxy https://api.openai.com", fmt.Sprintf("reverse_proxy 127.0.0.1:%d", mock),
		) + fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\tlouter_mock\n}\n", mock)
	}
	tr.a = startCaddy(t, louter(ports[1], ports[3], "a", tr.aLog))
	tr.b = startCaddy(t, louter(ports[2], ports[4], "b", tr.bLog))
	for _, p := range ports[1:] {
		testcaddy.WaitListening(t, p)
	}
	startCaddy(t, testGlobals+fmt.Sprintf("\tlog {\n\t\toutput file %q\n\t\tformat json\n\t}\n}\n", tr.edgeLog)+adapt(t, edge,
		"llm.example.com {\n", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n", ports[0]),
		"10.0.0.11:8080 10.0.0.12:8080", fmt.Sprintf("127.0.0.1:%d 127.0.0.1:%d", ports[1], ports[2]),
		"health_interval 5s", "health_interval 200ms",
	))
	testcaddy.WaitListening(t, ports[0])
	return tr
}

// clientFrom is an HTTP client whose connections come from a loopback
// address other than the edge's own, so the instance can tell the client's
// address from the edge's: the real client IP of this test.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext, DisableCompression: true, DisableKeepAlives: true},
		Timeout:   30 * time.Second,
	}
}

const clientIP = "127.0.0.2"

// TestEdgeStreamsIncrementally: a stream crosses both tiers event by event.
// The mock pauses 1.5 s after its first delta; the client must hold that
// delta long before the stream ends, for an SSE stream and for Gemini's
// JSON-array stream. The edge's encode (gzip on JSON and text) leaves
// louter's streams alone (Cache-Control: no-transform) but does compress a
// plain JSON answer.
func TestEdgeStreamsIncrementally(t *testing.T) {
	tr := startTiers(t)
	client := clientFrom(clientIP)
	const stall = 1500 * time.Millisecond
	cases := []struct {
		name, path, body, firstDelta string
		headers                      map[string]string
	}{
		{"anthropic SSE", "/v1/messages",
			`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`,
			`"text_delta"`, map[string]string{"Anthropic-Version": "2023-06-01"}},
		{"OpenAI Chat SSE", "/v1/chat/completions",
			`{"model":"gpt-5.5","stream":true,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`,
			`"content":"`, nil},
		{"Gemini JSON array", "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"[mock:text] Hi"}]}]}`,
			`"text":`, map[string]string{"X-Goog-Api-Key": "unused"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", tr.edge+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Encoding", "gzip")
			req.Header.Set("X-Mock-Stall", stall.String())
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("the edge encoded the stream (Content-Encoding %s): gzip holds bytes back", ce)
			}
			// Raw reads, not lines: a JSON-array stream ends an element
			// with no newline until the next one comes.
			var firstAt time.Duration
			var all bytes.Buffer
			chunk := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(chunk)
				all.Write(chunk[:n])
				if firstAt == 0 && bytes.Contains(all.Bytes(), []byte(c.firstDelta)) {
					firstAt = time.Since(start)
				}
				if err != nil {
					break
				}
			}
			total := time.Since(start)
			if firstAt == 0 {
				t.Fatalf("no delta %s in the stream:\n%s", c.firstDelta, all.String())
			}
			// The first delta is written before the pause: it must reach
			// the client at least most of the pause before the end.
			if total-firstAt < stall*2/3 {
				t.Errorf("first delta at %v, end at %v: the stream was held back through the tiers\n%s", firstAt, total, all.String())
			}
			t.Logf("first delta after %v, stream ended after %v", firstAt.Round(time.Millisecond), total.Round(time.Millisecond))
		})
	}

	// A plain JSON answer is compressed by the same edge: encode is on, and
	// only no-transform keeps it off the streams.
	req, _ := http.NewRequest("POST", tr.edge+"/v1/chat/completions", strings.NewReader(
		`{"model":"gpt-5.5","messages":[{"role":"user","content":"[mock:long] Hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("a JSON answer through the edge: %d, Content-Encoding %q; want 200 gzip (is encode configured?)", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
}

// accessEntries reads a JSON access log.
func accessEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(path)
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil && e["msg"] == "handled request" {
			out = append(out, e)
		}
	}
	return out
}

// TestEdgeClientIPAndInstances: the edge spreads requests over both
// instances; each instance, trusting the edge (trusted_proxies), logs the
// client's own address from X-Forwarded-For, not the edge's, and not a
// forged X-Forwarded-For the client sent the edge. When an instance dies,
// the active health check marks it down and every request is answered by
// the other.
func TestEdgeClientIPAndInstances(t *testing.T) {
	tr := startTiers(t)
	client := clientFrom(clientIP)
	post := func() (int, string) {
		req, _ := http.NewRequest("POST", tr.edge+"/v1/messages", strings.NewReader(
			`{"model":"claude-sonnet-4-5","max_tokens":50,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("X-Forwarded-For", "203.0.113.9") // forged: the edge must not pass it on as trusted
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("X-Instance")
	}
	seen := map[string]int{}
	for range 6 {
		code, inst := post()
		if code != 200 {
			t.Fatalf("status %d through the edge", code)
		}
		seen[inst]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Errorf("answers by instance %v, want both instances used", seen)
	}

	deadline := time.Now().Add(5 * time.Second)
	var entries []map[string]any
	for time.Now().Before(deadline) {
		entries = append(accessEntries(t, tr.aLog), accessEntries(t, tr.bLog)...)
		if len(entries) >= 6 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	n := 0
	for _, e := range entries {
		req, _ := e["request"].(map[string]any)
		if req["uri"] != "/v1/messages" {
			continue // a health check
		}
		n++
		if req["client_ip"] != clientIP || req["remote_ip"] != "127.0.0.1" {
			t.Errorf("instance logged client_ip %v, remote_ip %v; want the client's %s behind the edge 127.0.0.1", req["client_ip"], req["remote_ip"], clientIP)
		}
		if h, _ := req["headers"].(map[string]any); fmt.Sprint(h["X-Forwarded-For"]) != "["+clientIP+"]" {
			t.Errorf("instance got X-Forwarded-For %v, want only the client's address (the edge must drop the forged one)", h["X-Forwarded-For"])
		}
		if e["louter_backend"] != "openai" {
			t.Errorf("access-log line without louter's fields: %v", e)
		}
	}
	if n != 6 {
		t.Fatalf("%d access-log lines for the 6 requests", n)
	}

	// Instance b dies: within a health interval the edge's active check
	// reports it down, and from then on every request is answered by a.
	// (A request already on its way to b, or sent on a connection the
	// edge still held open to it, may fail in between; docs/edge.md says
	// so.)
	tr.b.Stop()
	deadline = time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(tr.edgeLog)
		if bytes.Contains(data, []byte(`"msg":"HTTP request failed"`)) && bytes.Contains(data, []byte(`health_checker.active`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge's active health check did not report instance b down:\n%s", data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range 10 {
		if code, inst := post(); code != 200 || inst != "a" {
			t.Fatalf("request %d after b was found down: status %d from %q, want 200 from a", i, code, inst)
		}
	}
}

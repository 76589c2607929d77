package caddymodule

import (
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/translate"
)

// loadStreamRequest is a small Anthropic stream request that declares
// tools, as Claude Code's do: with tools the OpenAI Chat backend's answer
// goes through the dialect decoder's text parser, as in the load
// benchmark, while the request itself costs little next to the stream.
const loadStreamRequest = `{"model":"claude-opus-5-5","max_tokens":1024,"stream":true,` +
	`"tools":[{"name":"Bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}},` +
	`{"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}],` +
	`"messages":[{"role":"user","content":"run the tests"}]}`

// countingFlusher is a client connection that keeps nothing: unlike
// httptest's recorder, whose growing buffer would be measured with the
// handler, it only counts bytes and flushes, as a bufio-backed net/http
// writer costs next to nothing per write.
type countingFlusher struct {
	header  http.Header
	status  int
	n       int
	flushes int
}

func (d *countingFlusher) Header() http.Header         { return d.header }
func (d *countingFlusher) WriteHeader(status int)      { d.status = status }
func (d *countingFlusher) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *countingFlusher) Flush()                      { d.flushes++ }

// BenchmarkServeHTTPLoadStream is the stream half of the load
// benchmark's turn through the whole handler: the upstream's 243 OpenAI
// Chat events (harness.OpenAIChatStream: 198 text deltas, a tool call in
// 40 fragments, finish, usage, [DONE]), one write and flush per event,
// translated for an Anthropic client that declared tools. ns/op divided
// by 243 is the handler's cost per event; cpu-ns/event is the process's
// CPU time per event, steadier than the wall time on a shared machine.
func BenchmarkServeHTTPLoadStream(b *testing.B) {
	evs := harness.OpenAIChatStream()
	events := make([]string, len(evs))
	n := 0
	for i, ev := range evs {
		events[i] = string(ev)
		n += len(ev)
	}
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat, APIKey: "oai-key"}},
		Models:   []ModelRoute{{Match: "claude*", Backend: "oai", Rename: "gpt-4o"}},
	}
	l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(200, sseHeader(), events...)})
	b.SetBytes(int64(n))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		w := &countingFlusher{header: http.Header{}}
		if err := l.ServeHTTP(w, newRequest(http.MethodPost, "/v1/messages", loadStreamRequest), &nextRecorder{}); err != nil || w.status != 200 {
			b.Fatal(err, w.status)
		}
		if w.flushes < len(events)-1 || w.n < 20000 {
			b.Fatalf("%d flushes, %d bytes for %d events", w.flushes, w.n, len(events))
		}
	}
	reportCPU(b, cpu, len(events))
}

// reportCPU reports the process's CPU time since cpu (processCPU) per
// operation and per event, where it is measured.
func reportCPU(b *testing.B, cpu time.Duration, events int) {
	if cpu == 0 {
		return
	}
	used := float64(processCPU()-cpu) / float64(b.N)
	b.ReportMetric(used, "cpu-ns/op")
	b.ReportMetric(used/float64(events), "cpu-ns/event")
}

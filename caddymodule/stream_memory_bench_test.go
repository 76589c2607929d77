package caddymodule

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// openStreams is how many streams BenchmarkOpenStreamMemory holds open.
const openStreams = 64

// BenchmarkOpenStreamMemory reports the heap each open stream holds (B/stream):
// openStreams Claude Code turns (testdata/bench/claude_code_100k.json)
// stalled mid-stream, after their first content events, through louter
// (Anthropic client, OpenAI Chat backend) and through "proxy", the same
// upstream answering the client directly after reading the request body,
// as Caddy's reverse_proxy does. Issue 17's goal is louter within 1.3× of
// the proxy.
func BenchmarkOpenStreamMemory(b *testing.B) {
	body := readClaudeCodeTurn(b)
	events := claudeCodeTurnEvents()
	for _, name := range []string{"louter", "proxy"} {
		b.Run(name, func(b *testing.B) {
			var stalled sync.WaitGroup
			resume := make(chan struct{})
			head := make([][]byte, 4) // a role chunk, then content
			for i := range head {
				head[i] = []byte(events[i])
			}
			up := upstreamFunc(func(w http.ResponseWriter, r *http.Request) error {
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					return err
				}
				for k, v := range sseHeader() {
					w.Header()[k] = v
				}
				w.WriteHeader(http.StatusOK)
				for _, c := range head {
					if _, err := w.Write(c); err != nil {
						return err
					}
					_ = http.NewResponseController(w).Flush()
				}
				stalled.Done()
				<-resume
				return nil
			})
			serve := func(w http.ResponseWriter, r *http.Request) error { return up(w, r) }
			if name == "louter" {
				l := newLouter(b, &Louter{
					Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
					Models:   []ModelRoute{{Match: "claude*", Backend: "oai", Rename: "gpt-4o"}},
				}, map[string]caddyhttp.MiddlewareHandler{"oai": up})
				serve = func(w http.ResponseWriter, r *http.Request) error { return l.ServeHTTP(w, r, &nextRecorder{}) }
			}
			var total float64
			// The time is not the point: each iteration measures once.
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				resume = make(chan struct{})
				stalled.Add(openStreams)
				var done sync.WaitGroup
				done.Add(openStreams)
				for range openStreams {
					r := newRequest(http.MethodPost, "/v1/messages", "")
					r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
					go func() {
						defer done.Done()
						rec := newFlushRecorder()
						if err := serve(rec, r); err != nil || rec.Code != http.StatusOK {
							b.Error(err, rec.Code)
						}
					}()
				}
				stalled.Wait()
				runtime.GC()
				runtime.ReadMemStats(&m1)
				total += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / openStreams
				close(resume)
				done.Wait()
			}
			b.ReportMetric(total/float64(b.N), "B/stream")
		})
	}
}

package caddymodule

import (
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// BenchmarkFallbackHappyPath is a stream through the whole handler on a
// route with one backend ("single") and on the same route with a fallback
// that is never needed ("chain"): the chain's added cost on the happy path
// (the request snapshot, the cooldown check, the held start events and the
// content gate). Translated: an Anthropic client on an OpenAI Chat backend;
// passthrough: an OpenAI Chat client on it.
func BenchmarkFallbackHappyPath(b *testing.B) {
	events := benchOpenAIEvents()
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	upstream := proxyLike(200, sseHeader(), events...)
	for _, kind := range []struct{ name, path, body string }{
		{"translated", "/v1/messages", `{"model":"m-1","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"weather?"}]}`},
		{"passthrough", "/v1/chat/completions", `{"model":"m-1","stream":true,"messages":[{"role":"user","content":"weather?"}]}`},
	} {
		for _, chain := range []bool{false, true} {
			name := kind.name + "/single"
			route := ModelRoute{Match: "m-*", Backend: "oai"}
			if chain {
				name = kind.name + "/chain"
				route.Fallbacks = []RouteFallback{{Backend: "anth"}}
			}
			b.Run(name, func(b *testing.B) {
				l := newLouter(b, &Louter{
					Backends: map[string]*Backend{
						"oai":  {Protocol: translate.ProtocolOpenAIChat},
						"anth": {Protocol: translate.ProtocolAnthropic},
					},
					Models: []ModelRoute{route},
				}, map[string]caddyhttp.MiddlewareHandler{"oai": upstream, "anth": upstream})
				b.SetBytes(int64(n))
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					rec := newFlushRecorder()
					if err := l.ServeHTTP(rec, newRequest("POST", kind.path, kind.body), &nextRecorder{}); err != nil || rec.Code != 200 {
						b.Fatal(err, rec.Code)
					}
					if len(rec.flushedAt) < 2 {
						b.Fatalf("%d flushes", len(rec.flushedAt))
					}
				}
				// CPU time, less sensitive than wall time to the other
				// processes of a busy machine.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

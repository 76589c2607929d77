package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/internal/testredis"
	"github.com/louter/louter/translate"
)

// BenchmarkClientLimits is a streamed, translated request without client
// keys and with a key checked and every limit counted (in memory), for the
// cost of the check: compare the two sub-benchmarks' ns/op.
func BenchmarkClientLimits(b *testing.B) {
	for _, limited := range []bool{false, true} {
		name := "unlimited"
		if limited {
			name = "limited"
		}
		b.Run(name, func(b *testing.B) {
			up := proxyLike(200, sseHeader(), benchOpenAIEvents()...)
			l := &Louter{
				Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat, APIKey: "{env.LOUTER_BENCH_UNSET}"}},
				Models:   []ModelRoute{{Match: "to-openai*", Backend: "oai", Rename: "gpt-4o"}},
			}
			if limited {
				l.Clients = []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("alice-key"),
					Models: []string{"claude-*", "to-*"},
					Limits: Limits{Requests: "1000000000000/1m", Tokens: "1000000000000000/1h", Concurrent: 1000, Budget: "1000000usd/30d"}}}
				l.Prices = []ModelPrice{{Match: "gpt-*", Input: 1.25, Output: 10}}
			}
			l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": up})
			b.ReportAllocs()
			for b.Loop() {
				rec := newFlushRecorder()
				r := newRequest("POST", "/v1/messages", anthropicStreamRequest)
				r.Header.Set("X-Api-Key", "alice-key")
				if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil || rec.Code != 200 {
					b.Fatal(err, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// BenchmarkClientAdmission is what client keys and limits add to a
// request on their own: the key check, the admission of every limit and
// the settlement, without the request's translation and proxying.
func BenchmarkClientAdmission(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchAdmission(b, nil) })
	b.Run("redis", func(b *testing.B) {
		// One Redis round trip per counter: the loopback cost of a shared
		// store.
		benchAdmission(b, &RedisCounters{Address: testredis.Start(b).Addr, Prefix: "bench:"})
	})
}

func benchAdmission(b *testing.B, rc *RedisCounters) {
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
		Models:   []ModelRoute{{Match: "to-openai*", Backend: "oai"}},
		ClientAccess: ClientAccess{
			Clients: []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("alice-key"), Models: []string{"to-*"},
				Limits: Limits{Requests: "1000000000000/1m", Tokens: "1000000000000000/1h", Concurrent: 1000, Budget: "1000000usd/30d"}}},
			Prices: []ModelPrice{{Match: "to-*", Input: 1.25, Output: 10}},
			Redis:  rc,
		},
	}
	l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(200, nil)})
	body := []byte(anthropicStreamRequest)
	req := newRequest("POST", "/v1/messages", "")
	req.Header.Set("X-Api-Key", "alice-key")
	b.ReportAllocs()
	for b.Loop() {
		r, ok := l.authenticate(nil, req, classifyRequest(req))
		if !ok {
			b.Fatal("refused")
		}
		rw := &responseWriter{passthrough: true, mode: modePass, status: 200, hasUsage: true, usage: translate.Usage{InputTokens: 10, OutputTokens: 200}}
		g, ok := l.admit(nil, r, translate.ProtocolAnthropic, &l.Models[0], "to-openai-1", "to-openai-1", body, rw)
		if !ok {
			b.Fatal("not admitted")
		}
		g.settle(r.Context(), rw.outcome())
	}
}

// BenchmarkPassthroughCounted is an OpenAI Chat passthrough stream without
// client keys and from a client with a budget, whose stream's text is
// counted as it passes (usage_settle.go) in case no usage comes: compare
// the two sub-benchmarks' ns/op.
func BenchmarkPassthroughCounted(b *testing.B) {
	for _, counted := range []bool{false, true} {
		name := "keyless"
		if counted {
			name = "counted"
		}
		b.Run(name, func(b *testing.B) {
			up := proxyLike(200, sseHeader(), benchOpenAIEvents()...)
			l := &Louter{
				Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat, APIKey: "{env.LOUTER_BENCH_UNSET}"}},
				Models:   []ModelRoute{{Match: "gpt-*", Backend: "oai"}},
			}
			if counted {
				l.Clients = []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("alice-key"), Limits: Limits{Budget: "1000000usd/30d"}}}
				l.Prices = []ModelPrice{{Match: "gpt-*", Input: 1.25, Output: 10}}
			}
			l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": up})
			b.ReportAllocs()
			for b.Loop() {
				rec := newFlushRecorder()
				r := newRequest("POST", "/v1/chat/completions", openaiPassRequest)
				r.Header.Set("Authorization", "Bearer alice-key")
				if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil || rec.Code != 200 {
					b.Fatal(err, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

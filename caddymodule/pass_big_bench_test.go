package caddymodule

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// BenchmarkServeHTTPPassthroughClaudeCodeTurn is the load benchmark's
// passthrough target in process: the OpenAI Chat form of the ~100 KB
// Claude Code request (what louter sends an OpenAI Chat backend for it)
// from an OpenAI Chat client to an OpenAI Chat backend, whose ~240-event
// stream passes back untranslated.
func BenchmarkServeHTTPPassthroughClaudeCodeTurn(b *testing.B) {
	body := string(claudeCodeTurnOpenAI(b))
	events := claudeCodeTurnEvents()
	upstream := drainThen(proxyLike(200, sseHeader(), events...))
	l := newLouter(b, &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
		Models:   []ModelRoute{{Match: "claude*", Backend: "oai"}},
	}, map[string]caddyhttp.MiddlewareHandler{"oai": upstream})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := l.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/chat/completions", body), &nextRecorder{}); err != nil || rec.Code != 200 {
			b.Fatal(err, rec.Code, rec.Body.String())
		}
		if !strings.HasSuffix(rec.Body.String(), "data: [DONE]\n\n") {
			b.Fatal("no [DONE]")
		}
	}
}

// claudeCodeTurnOpenAI is the ~100 KB Claude Code request encoded for an
// OpenAI Chat backend, as the OpenAI Chat encoder writes it.
func claudeCodeTurnOpenAI(tb testing.TB) []byte {
	tb.Helper()
	from, _ := translate.Lookup(translate.ProtocolAnthropic)
	to, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	ir, err := from.DecodeRequest([]byte(readClaudeCodeTurn(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := to.EncodeRequest(translate.WithBackendToolNames(ir, translate.ToolNaming(translate.ProtocolOpenAIChat, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

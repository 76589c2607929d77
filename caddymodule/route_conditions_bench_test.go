package caddymodule

import (
	"net/http"
	"os"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// BenchmarkServeHTTPRouteConditions is Claude Code's request (~50 KB in
// production, the fixture is smaller) passed through to an Anthropic
// backend, with a route that has no conditions, conditions that read only
// headers and the raw body, and one that needs the decoded request; none
// matches, so every variant sends the same passthrough request.
func BenchmarkServeHTTPRouteConditions(b *testing.B) {
	raw, err := os.ReadFile("../testdata/anthropic/request_claude_code.json")
	if err != nil {
		b.Fatal(err)
	}
	body := string(raw)
	answer := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	variants := []struct {
		name string
		when []RouteCondition
	}{
		{"none", nil},
		{"header_and_tool", []RouteCondition{{Header: "X-Background", HeaderValue: "1", Backend: "oai"}, {Tool: "web_search", Backend: "oai"}}},
		{"tokens_decodes", []RouteCondition{{TokensAbove: 1 << 30, Backend: "oai"}}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			upstream := proxyLike(200, jsonHeader(answer), answer)
			l := &Louter{
				Backends: map[string]*Backend{
					"oai":  {Protocol: translate.ProtocolOpenAIChat},
					"anth": {Protocol: translate.ProtocolAnthropic},
				},
				Models: []ModelRoute{{Match: "claude*", Backend: "anth", When: v.when}},
			}
			l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": upstream, "anth": upstream})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				rec := newFlushRecorder()
				if err := l.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/messages", body), &nextRecorder{}); err != nil || rec.Code != 200 {
					b.Fatal(err, rec.Code)
				}
			}
		})
	}
}

// BenchmarkConversationKey is the derivation of the conversation key,
// which runs on every request, from each agent's request.
func BenchmarkConversationKey(b *testing.B) {
	for _, tt := range []struct {
		name, file string
		p          translate.Protocol
	}{
		{"claude_code_session", "anthropic/request_claude_code.json", translate.ProtocolAnthropic},
		{"codex_prompt_cache_key", "openai_responses/request_codex.json", translate.ProtocolOpenAIResponses},
		{"gemini_cli_hash", "gemini/request_gemini_cli.json", translate.ProtocolGemini},
	} {
		b.Run(tt.name, func(b *testing.B) {
			body, err := os.ReadFile("../testdata/" + tt.file)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if conversationKey(tt.p, http.Header{}, body) == "" {
					b.Fatal("no key")
				}
			}
		})
	}
}

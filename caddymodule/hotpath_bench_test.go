package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// claudeCodeTurnEvents is the upstream stream of issue 17's workload: an
// OpenAI Chat stream of ~240 events, text deltas then a tool call whose
// arguments come in 40 fragments.
func claudeCodeTurnEvents() []string {
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	events := []string{chunk(`{"role":"assistant","content":""}`, "null")}
	for i := 0; i < 196; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"word%d "}`, i), "null"))
	}
	events = append(events, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}`, "null"))
	for i := 0; i < 40; i++ {
		frag := `x`
		switch i {
		case 0:
			frag = `{\"command\":\"`
		case 39:
			frag = `\"}`
		}
		events = append(events, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+frag+`"}}]}`, "null"))
	}
	events = append(events, chunk(`{}`, `"tool_calls"`))
	return append(events, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":25000,"completion_tokens":240,"total_tokens":25240}}`+"\n\n", "data: [DONE]\n\n")
}

// readClaudeCodeTurn reads testdata/bench/claude_code_100k.json, a ~100 KB
// Claude Code request (model claude-opus-5-5, streaming).
func readClaudeCodeTurn(tb testing.TB) string {
	tb.Helper()
	raw, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}

// drainThen reads the request body as reverse_proxy sends it on, then
// answers with respond.
func drainThen(respond upstreamFunc) upstreamFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return err
		}
		return respond(w, r)
	}
}

// BenchmarkServeHTTPClaudeCodeTurn is issue 17's workload through the
// handler: the ~100 KB Claude Code request of an Anthropic client,
// translated for an OpenAI Chat backend whose stream (~240 events, a
// 40-fragment tool call, one write and flush per event) is translated back.
func BenchmarkServeHTTPClaudeCodeTurn(b *testing.B) {
	body := readClaudeCodeTurn(b)
	events := claudeCodeTurnEvents()
	upstream := drainThen(proxyLike(200, sseHeader(), events...))
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat, APIKey: "oai-key"}},
		Models:   []ModelRoute{{Match: "claude*", Backend: "oai", Rename: "gpt-4o"}},
	}
	l = newLouter(b, l, map[string]caddyhttp.MiddlewareHandler{"oai": upstream})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := l.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/messages", body), &nextRecorder{}); err != nil || rec.Code != 200 {
			b.Fatal(err, rec.Code)
		}
		if !strings.Contains(rec.Body.String(), "message_stop") {
			b.Fatal("no message_stop")
		}
	}
}

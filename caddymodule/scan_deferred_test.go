package caddymodule

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// TestDeferredScanStillRefusesInvalidJSON checks what the handler's
// deferred scan (translate.ScanTopLevelDeferred: the system prompt and the
// messages are validated by the decoder, or before a passthrough) leaves
// the client: a body that is not JSON inside those members gets the
// scan's 400, never another answer (no route, no model, a field error, a
// duplicate) and never reaches a backend, translated (Anthropic client,
// OpenAI Chat backend) or passed on (Anthropic backend), while the same
// body made valid is served.
func TestDeferredScanStillRefusesInvalidJSON(t *testing.T) {
	reached := 0
	upstream := upstreamFunc(func(w http.ResponseWriter, r *http.Request) error {
		reached++
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasPrefix(r.URL.Path, "/v1/chat") {
			return proxyLike(200, jsonHeader(""), `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)(w, r)
		}
		return proxyLike(200, jsonHeader(""), `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)(w, r)
	})
	l := newLouter(t, &Louter{
		Backends: map[string]*Backend{
			"oai":  {Protocol: translate.ProtocolOpenAIChat, APIKey: "k"},
			"anth": {Protocol: translate.ProtocolAnthropic, APIKey: "k"},
		},
		Models: []ModelRoute{{Match: "to-oai", Backend: "oai"}, {Match: "to-anth", Backend: "anth"}},
	}, map[string]caddyhttp.MiddlewareHandler{"oai": upstream, "anth": upstream})

	const notJSON = "louter: the request body is not valid JSON"
	for _, model := range []string{"to-oai", "to-anth"} {
		for _, tc := range []struct {
			name, body string
		}{
			{"messages", `{"model":"M","max_tokens":5,"messages":[{"role":"user","content":"hi"} 2]}`},
			{"messages, no route", `{"model":"nowhere","max_tokens":5,"messages":[{"role":"user","content":"hi\"}]}`},
			{"messages, no model", `{"max_tokens":5,"messages":[{"role":"user","content":"\q"}]}`},
			{"messages, model after", `{"messages":[{"role":"user","content":"\\"}]"],"model":"M","max_tokens":5}`},
			{"messages, duplicate", `{"model":"M","messages":[{"role":"user","content":"hi"},],"model":"M","max_tokens":5}`},
			{"messages, field error", `{"model":"M","max_tokens":"five","messages":[{"role":"user","content":[{"type":"text","text":"hi"}}]}`},
			{"system", `{"model":"M","max_tokens":5,"system":[{"type":"text","text":"s",}],"messages":[{"role":"user","content":"hi"}]}`},
			{"system control character", "{\"model\":\"M\",\"max_tokens\":5,\"system\":\"a\x01\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"},
		} {
			before := reached
			rec := newFlushRecorder()
			body := strings.ReplaceAll(tc.body, `"M"`, `"`+model+`"`)
			if err := l.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/messages", body), &nextRecorder{}); err != nil {
				t.Fatal(err)
			}
			if msg := gjson.Get(rec.Body.String(), "error.message").Str; rec.Code != 400 || msg != notJSON || reached != before {
				t.Errorf("%s, %s: got %d %s (backend asked %d times), want 400 %q", model, tc.name, rec.Code, rec.Body, reached-before, notJSON)
			}
		}
		rec := newFlushRecorder()
		body := `{"model":"` + model + `","max_tokens":5,"system":"s","messages":[{"role":"user","content":"hi \"there\" \\ \u00e9"}]}`
		if err := l.ServeHTTP(rec, newRequest(http.MethodPost, "/v1/messages", body), &nextRecorder{}); err != nil || rec.Code != 200 {
			t.Errorf("%s, valid: %v %d %s", model, err, rec.Code, rec.Body)
		}
	}
}

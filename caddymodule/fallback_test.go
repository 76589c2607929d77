package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// Each attempt of a chain starts from the client's request: what the
// rewrite for one backend changed (headers, path, query) is undone.
func TestRequestSnapshotRestore(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/anthropic/v1/messages?beta=true", strings.NewReader(`{}`))
	r.Header.Set("X-Api-Key", "sk-client")
	r.Header.Set("Anthropic-Version", "2023-06-01")
	r.Header.Add("X-Mock-Scenario", "a")
	hdr := r.Header // Caddy's access log holds the map
	snap := snapshotRequest(r)

	b := &Backend{Protocol: "openai_chat", basePath: "/v1", apiKey: "sk-backend"}
	rewriteRequest(r, backendRequest{backend: b, body: []byte(`{"model":"m"}`), model: "m"})
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("X-Api-Key") != "" {
		t.Fatalf("the rewrite did not happen: %s %v", r.URL, r.Header)
	}

	snap.restore(r)
	if r.URL.Path != "/anthropic/v1/messages" || r.URL.RawQuery != "beta=true" || r.RequestURI != "/anthropic/v1/messages?beta=true" {
		t.Errorf("URL %s, RequestURI %s", r.URL, r.RequestURI)
	}
	if r.Header.Get("X-Api-Key") != "sk-client" || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("X-Mock-Scenario") != "a" {
		t.Errorf("headers %v", r.Header)
	}
	if r.Header.Get("Accept") != "" {
		t.Errorf("a header the rewrite added survived: %v", r.Header)
	}
	r.Header["X-Mock-Scenario"][0] = "again"
	snap.restore(r)
	if r.Header.Get("X-Mock-Scenario") != "a" {
		t.Errorf("the snapshot shares values with the request: %v", r.Header)
	}
	hdr.Set("X-Probe", "1")
	if r.Header.Get("X-Probe") != "1" {
		t.Error("restore replaced the header map")
	}
}

func TestRetryableStatus(t *testing.T) {
	for status, want := range map[int]bool{429: true, 500: true, 502: true, 503: true, 504: true, 529: true, 400: false, 401: false, 404: false, 413: false} {
		if got := retryableStatus(status); got != want {
			t.Errorf("retryableStatus(%d) = %v", status, got)
		}
	}
}

// On a route with a fallback, a stream's start is held only until its
// first content event, which goes out with it in the same flush; every
// later event is flushed as it comes.
func TestFallbackHoldsOnlyTheStart(t *testing.T) {
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	events := []string{
		chunk(`{"role":"assistant","content":""}`, "null"),
		chunk(`{"content":"Hello"}`, "null"),
		chunk(`{"content":" world"}`, "null"),
		chunk(`{}`, `"stop"`),
		"data: [DONE]\n\n",
	}
	upstream := proxyLike(200, sseHeader(), events...)
	for _, tc := range []struct{ name, path, body, start string }{
		{"translated", "/v1/messages", `{"model":"m-1","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "message_start"},
		{"passthrough", "/v1/chat/completions", `{"model":"m-1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, `"role":"assistant"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLouter(t, &Louter{
				Backends: map[string]*Backend{
					"oai":  {Protocol: translate.ProtocolOpenAIChat},
					"anth": {Protocol: translate.ProtocolAnthropic},
				},
				Models: []ModelRoute{{Match: "m-*", Backend: "oai", Fallbacks: []RouteFallback{{Backend: "anth"}}}},
			}, map[string]caddyhttp.MiddlewareHandler{"oai": upstream, "anth": upstream})
			rec := newFlushRecorder()
			if err := l.ServeHTTP(rec, newRequest("POST", tc.path, tc.body), &nextRecorder{}); err != nil || rec.Code != 200 {
				t.Fatal(err, rec.Code)
			}
			body := rec.Body.String()
			if len(rec.flushedAt) < len(events)-1 {
				t.Fatalf("%d flushes for %d events: %v\n%s", len(rec.flushedAt), len(events), rec.flushedAt, body)
			}
			first := body[:rec.flushedAt[0]]
			if !strings.Contains(first, tc.start) || !strings.Contains(first, "Hello") || strings.Contains(first, "world") {
				t.Errorf("first flush, want the start and the first content only:\n%s", first)
			}
			if !strings.Contains(body, "world") {
				t.Errorf("body:\n%s", body)
			}
		})
	}
}

// A failed attempt leaves nothing behind: neither its headers nor its
// body reach the client, who gets the next backend's answer alone; and the
// backend that failed is the one the cooldown counts.
func TestFallbackDiscardsTheFailedAttempt(t *testing.T) {
	okStream := []string{
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"fine"},"finish_reason":null}]}` + "\n\n",
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
		"data: [DONE]\n\n",
	}
	for _, tc := range []struct {
		name    string
		primary upstreamFunc
	}{
		{"529", proxyLike(529, http.Header{"Content-Type": {"application/json"}, "X-Primary": {"1"}, "Retry-After": {"3"}}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
		{"error event after start", proxyLike(200, http.Header{"Content-Type": {"text/event-stream"}, "X-Primary": {"1"}},
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n",
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLouter(t, &Louter{
				Backends: map[string]*Backend{
					"anth": {Protocol: translate.ProtocolAnthropic},
					"oai":  {Protocol: translate.ProtocolOpenAIChat},
				},
				Models: []ModelRoute{{Match: "m-*", Backend: "anth", Fallbacks: []RouteFallback{{Backend: "oai", Rename: "gpt-x"}}}},
			}, map[string]caddyhttp.MiddlewareHandler{"anth": tc.primary, "oai": proxyLike(200, sseHeader(), okStream...)})
			rec := newFlushRecorder()
			body := `{"model":"m-1","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
			if err := l.ServeHTTP(rec, newRequest("POST", "/v1/messages", body), &nextRecorder{}); err != nil || rec.Code != 200 {
				t.Fatal(err, rec.Code)
			}
			out := rec.Body.String()
			if rec.Header().Get("X-Primary") != "" || rec.Header().Get("Retry-After") != "" {
				t.Errorf("the failed attempt's headers leaked: %v", rec.Header())
			}
			if strings.Count(out, "event: message_start") != 1 || strings.Contains(out, "Overloaded") || !strings.Contains(out, "fine") || !strings.Contains(out, "message_stop") {
				t.Errorf("body:\n%s", out)
			}
			if l.cooldowns.m[cooldownKey{"anth", "m-1"}] == nil || l.cooldowns.m[cooldownKey{"anth", "m-1"}].failures != 1 {
				t.Errorf("cooldown record of anth: %+v", l.cooldowns.m[cooldownKey{"anth", "m-1"}])
			}
		})
	}
}

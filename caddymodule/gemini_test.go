package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/louter/louter/translate"
)

func TestGeminiRoutes(t *testing.T) {
	tests := []struct {
		method, target string
		want           translate.Protocol
		model          string
		stream, array  bool
	}{
		{"POST", "/v1beta/models/gemini-2.5-pro:generateContent", translate.ProtocolGemini, "gemini-2.5-pro", false, false},
		{"POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", translate.ProtocolGemini, "gemini-2.5-pro", true, false},
		{"POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", translate.ProtocolGemini, "gemini-2.5-pro", true, true},
		{"POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=json&key=k", translate.ProtocolGemini, "gemini-2.5-pro", true, true},
		{"POST", "/gemini/v1/models/x:generateContent", translate.ProtocolGemini, "x", false, false},
		{"POST", "/v1beta/models/x:countTokens", "", "", false, false},
		{"POST", "/v1beta/models/:generateContent", "", "", false, false},
		{"POST", "/v1beta/tunedModels/x:generateContent", "", "", false, false},
		{"POST", "/v2/models/x:generateContent", "", "", false, false},
		{"GET", "/v1beta/models/x:generateContent", "", "", false, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		ep, model, ok := detectClient(r)
		if ok != (tt.want != "") || ep.protocol != tt.want || model != tt.model {
			t.Errorf("%s %s: got %q %q (ok=%v), want %q %q", tt.method, tt.target, ep.protocol, model, ok, tt.want, tt.model)
			continue
		}
		if !ok {
			continue
		}
		stream, array := ep.streamFromURL(r)
		if stream != tt.stream || array != tt.array {
			t.Errorf("%s: stream %v array %v, want %v %v", tt.target, stream, array, tt.stream, tt.array)
		}
	}
}

// TestGeminiRewriteRequest checks the backend side: the model and the
// stream mode go into the URL, the key into x-goog-api-key, and no client
// credential (header or ?key=) survives.
func TestGeminiRewriteRequest(t *testing.T) {
	for _, tt := range []struct {
		stream          bool
		passthrough     bool
		target          string
		wantPath, wantQ string
	}{
		{true, false, "/anthropic/v1/messages?beta=true", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse"},
		{false, false, "/v1/chat/completions", "/v1beta/models/gemini-2.5-pro:generateContent", ""},
		{true, true, "/v1beta/models/x:streamGenerateContent?key=client-secret&alt=sse", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse"},
		{true, true, "/v1beta/models/x:streamGenerateContent?key=client-secret", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", ""},
	} {
		b := &Backend{Protocol: translate.ProtocolGemini, apiKey: "backend-key", basePath: rowOf(translate.ProtocolGemini).defaultBasePath}
		r := httptest.NewRequest(http.MethodPost, tt.target, nil)
		r.Header.Set("X-Goog-Api-Key", "client-secret")
		r.Header.Set("Authorization", "Bearer client-secret")
		cred, _ := rewriteRequest(r, backendRequest{backend: b, body: []byte(`{}`), model: "gemini-2.5-pro", stream: tt.stream, passthrough: tt.passthrough})
		b.attachCredential(r, cred) // no reverse_proxy here: the key goes on the request
		if r.URL.Path != tt.wantPath || r.URL.RawQuery != tt.wantQ {
			t.Errorf("%s: %s?%s, want %s?%s", tt.target, r.URL.Path, r.URL.RawQuery, tt.wantPath, tt.wantQ)
		}
		if got := r.Header.Get("X-Goog-Api-Key"); got != "backend-key" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: key %q, authorization %q", tt.target, got, r.Header.Get("Authorization"))
		}
	}
}

func TestGeminiPassthroughCapsMaxOutputTokens(t *testing.T) {
	in := []byte(`{"contents":[],"generationConfig":{"maxOutputTokens":65536}}`)
	top, _ := translate.ScanTopLevel(translate.ProtocolGemini, in)
	body, _, te := passthroughBody(in, &top, "m", "m", 8192, false)
	if te != nil || string(body) != `{"contents":[],"generationConfig":{"maxOutputTokens":8192}}` {
		t.Errorf("%s %v", body, te)
	}
}

package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/louter/louter/translate"
)

func TestCheckModelName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"gemini-2.5-pro", true},
		{"llama3:8b", true},
		{"a b?c#d%e", true}, // escaped, not refused
		{"ge-flash/../ge-pro", false},
		{"..", false},
		{"ge..pro", false},
		{"a/b", false},
		{`a\b`, false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"", false},
	} {
		if got := checkModelName(tt.name) == ""; got != tt.ok {
			t.Errorf("checkModelName(%q) ok = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestCheckBackendModel(t *testing.T) {
	gem := &Backend{Protocol: translate.ProtocolGemini}
	oai := &Backend{Protocol: translate.ProtocolOpenAIChat}
	for _, tt := range []struct {
		b       *Backend
		name    string
		renamed bool
		refused bool
	}{
		{gem, "ge-flash/../ge-pro", false, true},
		{gem, "tunedModels/mine", true, false}, // the operator's rename is trusted
		{gem, "ge-flash", false, false},
		{oai, "accounts/fireworks/models/x", false, false}, // in the body, not the URL
	} {
		te := checkBackendModel(tt.b, tt.name, tt.renamed)
		if (te != nil) != tt.refused {
			t.Errorf("%s %q renamed=%v: %v", tt.b.Protocol, tt.name, tt.renamed, te)
			continue
		}
		if te != nil && (te.Status != http.StatusBadRequest || te.Param != "model") {
			t.Errorf("%q: %+v", tt.name, te)
		}
	}
}

// TestGeminiBackendURLEscaping checks what reaches the wire for a Gemini
// backend: every byte of a name that means something in a path is escaped,
// and only a rename's '/' stays a separator.
func TestGeminiBackendURLEscaping(t *testing.T) {
	for _, tt := range []struct {
		model, basePath, want string
	}{
		{"gemini-2.5-pro", "/v1beta", "/v1beta/models/gemini-2.5-pro:generateContent"},
		{"llama3:8b", "/v1beta", "/v1beta/models/llama3%3A8b:generateContent"},
		{"a b?c#d%e", "/v1beta", "/v1beta/models/a%20b%3Fc%23d%25e:generateContent"},
		{"tunedModels/mine", "/v1beta", "/v1beta/models/tunedModels/mine:generateContent"},
		{"m", "/my api", "/my%20api/models/m:generateContent"},
	} {
		b := &Backend{Protocol: translate.ProtocolGemini, basePath: tt.basePath}
		r := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
		rewriteRequest(r, backendRequest{backend: b, body: []byte(`{}`), model: tt.model})
		if got := r.URL.EscapedPath(); got != tt.want {
			t.Errorf("%q: %s, want %s", tt.model, got, tt.want)
		}
		if got := r.URL.RequestURI(); got != tt.want {
			t.Errorf("%q: request URI %s", tt.model, got)
		}
	}
}

// TestGeminiPathModel checks how a Gemini client's path is read: escapes
// are decoded once the model is cut out, so "%2F" and "%2e%2e" are part of
// the name, and the method follows the last ':'.
func TestGeminiPathModel(t *testing.T) {
	for _, tt := range []struct {
		target, model, method string
		ok                    bool
	}{
		{"/v1beta/models/gemini-2.5-pro:generateContent", "gemini-2.5-pro", "generateContent", true},
		{"/v1beta/models/llama3:8b:generateContent", "llama3:8b", "generateContent", true},
		{"/v1beta/models/llama3%3A8b:generateContent", "llama3:8b", "generateContent", true},
		{"/v1beta/models/ge-flash%2F..%2Fge-pro:generateContent", "ge-flash/../ge-pro", "generateContent", true},
		{"/v1beta/models/ge-flash/../ge-pro:generateContent", "ge-flash/../ge-pro", "generateContent", true},
		{"/v1beta/models/%2e%2e:generateContent", "..", "generateContent", true},
		{"/v1beta/models/ge-%66lash:generateContent", "ge-flash", "generateContent", true},
		{"/prefix/v1/models/x:streamGenerateContent", "x", "streamGenerateContent", true},
		{"/v1beta/models/x", "", "", false},
		{"/v1beta/models/x:a/b", "", "", false},
		{"/v1beta/models/%zz:generateContent", "", "", false},
	} {
		model, method, ok := geminiModelPath(tt.target) // an escaped path, as EscapedPath returns it
		if model != tt.model || method != tt.method || ok != tt.ok {
			t.Errorf("%s: %q %q %v, want %q %q %v", tt.target, model, method, ok, tt.model, tt.method, tt.ok)
		}
	}
}

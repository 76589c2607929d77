package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

func TestClassifyRequest(t *testing.T) {
	const (
		anth   = translate.ProtocolAnthropic
		oai    = translate.ProtocolOpenAIChat
		resp   = translate.ProtocolOpenAIResponses
		gemini = translate.ProtocolGemini
	)
	tests := []struct {
		method, target string
		header         string // "name: value"
		protocol       translate.Protocol
		action         apiAction
		model          string
	}{
		// Chat calls and token counting are the caller's.
		{"POST", "/v1/messages", "", anth, actChat, ""},
		{"POST", "/anthropic/v1/messages", "", anth, actChat, ""},
		{"POST", "/v1/messages/count_tokens", "", anth, actElsewhere, ""},
		{"POST", "/v1/chat/completions", "", oai, actChat, ""},
		{"POST", "/v1/responses", "", resp, actChat, ""},
		// The Responses API without /v1, as Codex also calls it.
		{"POST", "/responses", "", resp, actChat, ""},
		{"POST", "/codex/responses", "", resp, actChat, ""},
		{"GET", "/codex/responses/resp_1/input_items", "", resp, actNotServed, ""},
		{"POST", "/v1beta/models/g:generateContent", "", gemini, actChat, "g"},
		{"POST", "/v1beta/models/g:countTokens", "", gemini, actElsewhere, "g"},
		{"POST", "/gemini/v1/models/g:streamGenerateContent", "", gemini, actChat, "g"},
		// Model lists, by the client's headers.
		{"GET", "/v1/models", "", oai, actListModels, ""},
		{"GET", "/v1/models", "Anthropic-Version: 2023-06-01", anth, actListModels, ""},
		{"GET", "/v1/models", "X-Goog-Api-Key: k", gemini, actListModels, ""},
		{"GET", "/v1/models?key=k", "", gemini, actListModels, ""},
		{"GET", "/v1beta/models", "", gemini, actListModels, ""},
		{"GET", "/v1/models/gpt-5", "", oai, actGetModel, "gpt-5"},
		{"GET", "/v1/models/meta-llama/Llama-3", "", oai, actGetModel, "meta-llama/Llama-3"},
		{"GET", "/v1/models/llama3:8b", "", oai, actGetModel, "llama3:8b"},
		{"GET", "/v1/models/claude-x", "Anthropic-Version: 2023-06-01", anth, actGetModel, "claude-x"},
		{"GET", "/v1beta/models/gemini-2.5-pro", "", gemini, actGetModel, "gemini-2.5-pro"},
		// A Gemini method is not a model name.
		{"GET", "/v1beta/models/gemini-2.5-pro:generateContent", "", gemini, actChat, "gemini-2.5-pro"},
		// Passthrough.
		{"POST", "/v1/embeddings", "", oai, actOpenAIPassthrough, ""},
		{"POST", "/x/v1/completions", "", oai, actOpenAIPassthrough, ""},
		// Model names that are paths.
		{"POST", "/v1beta/models/ge-flash/../ge-pro:generateContent", "", gemini, actBadModel, "ge-flash/../ge-pro"},
		{"POST", "/v1beta/models/ge-flash%2F..%2Fge-pro:generateContent", "", gemini, actBadModel, "ge-flash/../ge-pro"},
		{"POST", "/v1beta/models/%2e%2e:generateContent", "", gemini, actBadModel, ".."},
		// Recognised, not served.
		{"POST", "/v1/messages/batches", "", anth, actNotServed, ""},
		{"GET", "/v1/files", "", oai, actNotServed, ""},
		{"GET", "/v1/responses/resp_1", "", resp, actNotServed, ""},
		{"POST", "/v1/message", "Anthropic-Version: 2023-06-01", anth, actNotServed, ""},
		{"POST", "/chat/completions", "", oai, actNotServed, ""},
		{"POST", "/v1beta/models/g:embedContent", "", gemini, actNotServed, ""},
		{"GET", "/v1beta/cachedContents", "", gemini, actNotServed, ""},
		{"GET", "/v1beta/files/responses", "", gemini, actNotServed, ""},
		// Not an LLM API's.
		{"GET", "/", "", "", actNext, ""},
		{"GET", "/v1/users", "", "", actNext, ""},
		{"POST", "/v1/message", "", "", actNext, ""},
		{"GET", "/v1beta/widgets", "", "", actNext, ""},
		{"GET", "/api/v2/models", "", "", actNext, ""},
		{"GET", "/responses/a/b", "", "", actNext, ""},
		{"POST", "/responsesx", "", "", actNext, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.header != "" {
			k, v, _ := cutHeader(tt.header)
			r.Header.Set(k, v)
		}
		got := classifyRequest(r)
		if got.action != tt.action || got.action != actNext && got.protocol != tt.protocol || got.model != tt.model {
			t.Errorf("%s %s [%s]: %s %d %q, want %s %d %q", tt.method, tt.target, tt.header, got.protocol, got.action, got.model, tt.protocol, tt.action, tt.model)
		}
	}
}

func cutHeader(h string) (string, string, bool) {
	for i := 0; i+1 < len(h); i++ {
		if h[i] == ':' && h[i+1] == ' ' {
			return h[:i], h[i+2:], true
		}
	}
	return h, "", false
}

// TestServeSurfaceMethods checks the 405s: status, Allow, and the error in
// the protocol's own shape; and that what is not louter's is left alone.
func TestServeSurfaceMethods(t *testing.T) {
	l := &Louter{}
	l.logger = zap.NewNop()
	tests := []struct {
		method, target, header string
		handled                bool
		status                 int
		allow, shape           string // shape: a JSON path the error body has
	}{
		{"GET", "/v1/messages", "", true, 405, "POST", "error.type"},
		{"GET", "/v1/chat/completions", "", true, 405, "POST", "error.message"},
		{"DELETE", "/v1/models/x", "", true, 405, "GET, HEAD", "error.message"},
		{"GET", "/v1beta/models/g:generateContent", "", true, 405, "POST", "error.status"},
		{"POST", "/v1beta/models", "", true, 405, "GET, HEAD", "error.status"},
		{"OPTIONS", "/v1/messages", "", false, 0, "", ""},
		{"POST", "/v1/messages", "", false, 0, "", ""},
		{"GET", "/v1/messages/count_tokens", "", true, 405, "POST", "error.type"},
		{"POST", "/v1/messages/batches", "", true, 404, "", "error.type"},
		{"GET", "/healthz", "", false, 0, "", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		w := httptest.NewRecorder()
		handled, err := l.serveSurface(w, r, classifyRequest(r))
		if err != nil || handled != tt.handled {
			t.Errorf("%s %s: handled %v, %v", tt.method, tt.target, handled, err)
			continue
		}
		if !handled {
			continue
		}
		if w.Code != tt.status || w.Header().Get("Allow") != tt.allow || !jsonHas(w.Body.Bytes(), tt.shape) {
			t.Errorf("%s %s: %d Allow %q %s", tt.method, tt.target, w.Code, w.Header().Get("Allow"), w.Body)
		}
		if w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: content type %q", tt.method, tt.target, w.Header().Get("Content-Type"))
		}
	}
}

func jsonHas(body []byte, path string) bool { return gjson.GetBytes(body, path).Exists() }

// BenchmarkClassifyRequest measures what recognising the API path adds to
// every chat call.
func BenchmarkClassifyRequest(b *testing.B) {
	for _, target := range []string{"/anthropic/v1/messages", "/v1beta/models/gemini-2.5-pro:streamGenerateContent"} {
		r := httptest.NewRequest("POST", target, nil)
		b.Run(target, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if classifyRequest(r).action != actChat {
					b.Fatal("not a chat call")
				}
			}
		})
	}
}

// TestServeSurfaceUnknownURL checks that a path louter does not serve is
// answered as each provider answers an unknown URL: OpenAI's unknown_url
// (not model_not_found: no model is missing), Anthropic's not_found_error,
// Google's NOT_FOUND.
func TestServeSurfaceUnknownURL(t *testing.T) {
	l := &Louter{}
	l.logger = zap.NewNop()
	tests := []struct {
		method, target, header string
		want                   map[string]string // gjson path: value
	}{
		{"GET", "/v1/files", "", map[string]string{"error.type": "invalid_request_error", "error.code": "unknown_url",
			"error.message": "Unknown request URL: GET /v1/files. louter does not serve it; please check the URL for typos."}},
		{"POST", "/v1/foo", "", nil}, // not a resource of any API: the next handler
		{"GET", "/v1/responses/resp_1", "", map[string]string{"error.type": "invalid_request_error", "error.code": "unknown_url"}},
		{"POST", "/chat/completions", "", map[string]string{"error.code": "unknown_url"}},
		{"POST", "/v1/message", "Anthropic-Version: 2023-06-01", map[string]string{"type": "error", "error.type": "not_found_error"}},
		{"GET", "/v1beta/cachedContents", "", map[string]string{"error.status": "NOT_FOUND", "error.code": "404"}},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if k, v, ok := strings.Cut(tt.header, ": "); ok {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		handled, err := l.serveSurface(w, r, classifyRequest(r))
		if err != nil || handled != (tt.want != nil) {
			t.Errorf("%s %s: handled %v, %v", tt.method, tt.target, handled, err)
			continue
		}
		if !handled {
			continue
		}
		if w.Code != http.StatusNotFound {
			t.Errorf("%s %s: status %d", tt.method, tt.target, w.Code)
		}
		for path, want := range tt.want {
			if got := gjson.GetBytes(w.Body.Bytes(), path).String(); got != want {
				t.Errorf("%s %s: %s = %q, want %q: %s", tt.method, tt.target, path, got, want, w.Body)
			}
		}
	}
}

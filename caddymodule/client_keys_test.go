package caddymodule

import (
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestAuthenticate(t *testing.T) {
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: "openai_chat"}},
		Models:   []ModelRoute{{Match: "*", Backend: "oai"}},
		ClientAccess: ClientAccess{
			Identity: "{http.request.header.X-User}",
			Clients: []*ClientKey{
				{Name: "alice", KeySHA256: sha256HexForTest("alice-key")},
				{Name: "bob", KeySHA256: sha256HexForTest("bob-key"), Models: []string{"gpt-*"}},
				{Name: "*", Models: []string{"small-*"}},
			},
		},
	}
	l = newLouter(t, l, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(http.StatusOK, nil)})
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		client  string // "" = refused
		status  int
		models  string // a model the client may use
	}{
		{"key in x-api-key", "/v1/messages", map[string]string{"X-Api-Key": "alice-key"}, "alice", 0, ""},
		{"key as bearer", "/v1/chat/completions", map[string]string{"Authorization": "Bearer bob-key"}, "bob", 0, "gpt-5"},
		{"key in ?key=", "/v1beta/models/m:generateContent?key=bob-key", nil, "bob", 0, ""},
		{"identity wins over a key", "/v1/messages", map[string]string{"X-User": "alice", "X-Api-Key": "bob-key"}, "alice", 0, ""},
		{"unknown identity takes *", "/v1/messages", map[string]string{"X-User": "zoe"}, "zoe", 0, "small-1"},
		{"basic auth is no key", "/v1/messages", map[string]string{"Authorization": "Basic YTpi"}, "", 401, ""},
		{"unknown key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer nope"}, "", 401, ""},
		{"gemini without key", "/v1beta/models/m:generateContent", nil, "", 403, ""},
		{"gemini unknown key", "/v1beta/models/m:generateContent", map[string]string{"X-Goog-Api-Key": "nope"}, "", 400, ""},
		{"not an API path", "/index.html", nil, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest("POST", tt.path, "{}")
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			rec := newFlushRecorder()
			r2, ok := l.authenticate(rec, r, classifyRequest(r))
			if tt.status != 0 {
				if ok || rec.Code != tt.status {
					t.Fatalf("ok %v status %d, want a %d refusal", ok, rec.Code, tt.status)
				}
				return
			}
			if !ok {
				t.Fatalf("refused: %d %s", rec.Code, rec.Body)
			}
			c := clientOf(r2)
			if tt.client == "" {
				if c != nil {
					t.Fatalf("client %q for a request louter does not serve", c.name)
				}
				return
			}
			if c == nil || c.name != tt.client {
				t.Fatalf("client %v, want %s", c, tt.client)
			}
			repl := r2.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
			if v, _ := repl.GetString("http.louter.client_name"); v != tt.client {
				t.Errorf("placeholder %q", v)
			}
			if tt.models != "" && (!c.allows(tt.models) || c.allows("other-model")) {
				t.Errorf("models of %s: %v", c.name, c.models)
			}
		})
	}
}

package caddymodule

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func provisionJSON(t *testing.T, config string) (*Louter, error) {
	t.Helper()
	var l Louter
	if err := json.Unmarshal([]byte(config), &l); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := l.Provision(ctx); err != nil {
		return &l, err
	}
	return &l, l.Validate()
}

// The stock reverse_proxy needs a running http app to provision (it looks the
// app up), so these tests load another handler in its place; the
// integration tests run the real thing.
func TestProvisionLoadsUpstream(t *testing.T) {
	t.Setenv("LOUTER_TEST_KEY", "sk-from-env")
	l, err := provisionJSON(t, `{
		"backends": {
			"oai": {
				"protocol": "fake_b",
				"api_key": "{env.LOUTER_TEST_KEY}",
				"upstream": {"handler": "static_response", "body": "hi"}
			},
			"root": {
				"protocol": "fake_a",
				"base_path": "/",
				"upstream": {"handler": "static_response"}
			}
		},
		"models": [{"match": "*", "backend": "oai"}]
	}`)
	if err != nil {
		t.Fatal(err)
	}
	b := l.Backends["oai"]
	if sr, ok := b.upstream.(*caddyhttp.StaticResponse); !ok || sr.Body != "hi" {
		t.Errorf("upstream is %T %+v, want the configured static_response", b.upstream, b.upstream)
	}
	if b.apiKey != "sk-from-env" || b.APIKey != "{env.LOUTER_TEST_KEY}" {
		t.Errorf("api key: resolved %q, configured %q", b.apiKey, b.APIKey)
	}
	if b.basePath != "/v1" || l.Backends["root"].basePath != "" {
		t.Errorf("base paths %q, %q", b.basePath, l.Backends["root"].basePath)
	}
	if b.name != "oai" || b.codec == nil || l.Models[0].backend != b {
		t.Error("backend not wired up")
	}
	if l.MaxRequestBody != defaultMaxRequestBody {
		t.Errorf("max_request_body default = %d", l.MaxRequestBody)
	}
}

func TestProvisionRejectsBadUpstream(t *testing.T) {
	_, err := provisionJSON(t, `{"backends": {"x": {"protocol": "fake_a", "upstream": {"handler": "no_such_handler"}}}}`)
	if err == nil || !strings.Contains(err.Error(), `backend "x": loading upstream handler`) {
		t.Errorf("error %v", err)
	}
}

func TestValidate(t *testing.T) {
	const up = `"upstream": {"handler": "static_response"}`
	tests := []struct {
		name, config string
		want         []string // "" = valid
	}{
		{"valid", `{"backends": {"a": {"protocol": "fake_a", ` + up + `}}, "models": [{"match": "*", "backend": "a"}]}`, nil},
		{"unknown backend", `{"backends": {"a": {"protocol": "fake_a", ` + up + `}}, "models": [{"match": "x*", "backend": "b"}]}`, []string{`model route 0 ("x*"): unknown backend "b"`}},
		{"unknown protocol", `{"backends": {"a": {"protocol": "gopher", ` + up + `}}}`, []string{`backend "a": unknown protocol "gopher" (known: `, "fake_a, fake_b"}},
		{"no upstream", `{"backends": {"a": {"protocol": "fake_a"}}}`, []string{`backend "a": no upstream handler`}},
		{"empty pattern", `{"backends": {"a": {"protocol": "fake_a", ` + up + `}}, "models": [{"match": "", "backend": "a"}]}`, []string{"model route 0: empty match pattern"}},
		{"negative numbers", `{"max_request_body": -1, "max_count_body": -1, "backends": {"a": {"protocol": "fake_a", "max_tokens": -5, ` + up + `}}}`, []string{"max_request_body must not be negative", "max_count_body must not be negative", "max_tokens must not be negative"}},
		{"dialect", `{"backends": {"a": {"protocol": "openai_chat", "dialect": {"tool_calls": "hermes", "tools_in_prompt": true}, ` + up + `}}}`, nil},
		{"dialect on another protocol", `{"backends": {"a": {"protocol": "anthropic", "dialect": {}, ` + up + `}}}`, []string{`backend "a": dialect applies to openai_chat, azure_openai backends only, not "anthropic"`}},
		{"bad dialect", `{"backends": {"a": {"protocol": "openai_chat", "dialect": {"reasoning": "tags", "drop_params": ["top_k"]}, ` + up + `}}}`, []string{`backend "a": dialect: unknown reasoning "tags"`}},
		{"several problems at once", `{"backends": {"a": {"protocol": "gopher"}}, "models": [{"match": "*", "backend": "z"}]}`, []string{"unknown protocol", "no upstream handler", "unknown backend"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := provisionJSON(t, tt.config)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("valid, want errors %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestModuleRegistered(t *testing.T) {
	info, err := caddy.GetModule("http.handlers.louter")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.New().(*Louter); !ok {
		t.Errorf("New returns %T", info.New())
	}
}

// wantError checks err against a table case's expected error: with want
// set, err must contain it, and the case is over (true); with want empty,
// there must be no error.
func wantError(t testing.TB, err error, want string) (over bool) {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

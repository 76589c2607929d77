package caddymodule

import (
	"net/http/httptest"
	"testing"

	"github.com/louter/louter/translate"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything/at:all", true},
		{"", "", true},
		{"", "x", false},
		{"gpt-4o", "gpt-4o", true},
		{"gpt-4o", "gpt-4o-mini", false},
		{"gpt-4o*", "gpt-4o-mini", true},
		{"claude-*", "claude-sonnet-4-5", true},
		{"claude-*", "claude-", true},
		{"claude-*", "claude", false},
		{"claude-*", "xclaude-3", false},
		{"*-mini", "gpt-4o-mini", true},
		{"*-mini", "gpt-4o-mini-2024", false},
		{"*sonnet*", "claude-sonnet-4-5", true},
		{"*sonnet*", "claude-opus-4", false},
		{"claude-*-4-5", "claude-sonnet-4-5", true},
		{"claude-*-4-5", "claude-sonnet-4-5-x", false},
		{"accounts/*/models/*", "accounts/fireworks/models/qwen3", true},
		{"accounts/*", "accounts/a/b/c", true}, // '*' crosses '/'
		{"llama3:*", "llama3:8b", true},        // and ':'
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"**", "abc", true},
		{"a?c", "abc", false}, // only '*' is special
		{"a?c", "a?c", true},
		{"[ab]", "a", false},
		{"[ab]", "[ab]", true},
		{"Claude-*", "claude-x", false}, // case matters
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestRouteFirstMatchWins(t *testing.T) {
	l := &Louter{Models: []ModelRoute{
		{Match: "claude-haiku-*", Backend: "small"},
		{Match: "claude-*", Backend: "big"},
		{Match: "*", Backend: "default"},
	}}
	tests := map[string]string{
		"claude-haiku-4-5":  "small",
		"claude-sonnet-4-5": "big",
		"gpt-4o":            "default",
	}
	for model, want := range tests {
		r, ok := l.route(model)
		if !ok || r.Backend != want {
			t.Errorf("route(%q) = %v, %v; want backend %q", model, r, ok, want)
		}
	}
	if _, ok := (&Louter{Models: []ModelRoute{{Match: "a", Backend: "x"}}}).route("b"); ok {
		t.Error("route matched although no pattern matches")
	}
}

func TestDetectClient(t *testing.T) {
	tests := []struct {
		method, target string
		want           translate.Protocol // "" = not louter's
	}{
		{"POST", "/v1/messages", translate.ProtocolAnthropic},
		{"POST", "/v1/messages?beta=true", translate.ProtocolAnthropic},
		{"POST", "/anthropic/v1/messages", translate.ProtocolAnthropic},
		{"POST", "/a/b/c/v1/messages", translate.ProtocolAnthropic},
		{"POST", "/v1/chat/completions", translate.ProtocolOpenAIChat},
		{"POST", "/openai/v1/chat/completions", translate.ProtocolOpenAIChat},
		{"GET", "/v1/messages", ""},
		{"PUT", "/v1/chat/completions", ""},
		{"POST", "/v1/messages/count_tokens", ""},
		{"POST", "/v1/messages/", ""},
		{"POST", "/v1/models", ""},
		{"GET", "/v1/models", ""},
		{"POST", "/xv1/messages", ""},
		{"POST", "/v2/messages", ""},
		{"POST", "/v1/completions", ""},
		{"POST", "/v1/responses", translate.ProtocolOpenAIResponses},
		{"POST", "/codex/v1/responses", translate.ProtocolOpenAIResponses},
		{"GET", "/v1/responses/resp_1", ""},
		{"POST", "/v1/responses/resp_1/cancel", ""},
		{"POST", "/", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		ep, _, ok := detectClient(r)
		if got := ep.protocol; ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s %s: got %q (ok=%v), want %q", tt.method, tt.target, got, ok, tt.want)
		}
	}
}

package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestCaddyfileCheckErrors: mistakes Validate would also find are reported
// while parsing, naming the directive and the line at fault.
func TestCaddyfileCheckErrors(t *testing.T) {
	tests := []struct {
		name, input string
		want        []string
	}{
		{
			"misspelt protocol",
			"louter {\n backend x {\n  protocol openai\n  reverse_proxy localhost:1\n }\n}",
			[]string{"backend 'x': unknown protocol 'openai' (known: anthropic, ", "Testfile:3"},
		},
		{
			"dialect after a non-openai_chat protocol",
			"louter {\n backend x {\n  protocol anthropic\n  dialect {\n   reasoning think\n  }\n  reverse_proxy localhost:1\n }\n}",
			[]string{"backend 'x': dialect applies to openai_chat, azure_openai backends only, not anthropic", "Testfile:6"},
		},
		{
			"protocol after a dialect",
			"louter {\n backend x {\n  dialect {\n   reasoning think\n  }\n  protocol gemini\n  reverse_proxy localhost:1\n }\n}",
			[]string{"dialect applies to openai_chat, azure_openai backends only, not gemini", "Testfile:6"},
		},
		{
			"model naming no backend",
			"louter {\n backend x {\n  protocol anthropic\n  reverse_proxy localhost:1\n }\n model claude-* x\n model gpt-* y\n}",
			[]string{"model gpt-*: no backend named 'y' in this louter block", "Testfile:7"},
		},
		{
			"when naming no backend",
			"louter {\n backend x {\n  protocol anthropic\n  reverse_proxy localhost:1\n }\n model claude-* x {\n  when images x\n  when thinking and tools y\n }\n}",
			[]string{"model claude-*: when thinking and tools: no backend named 'y' in this louter block", "Testfile:8"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want one containing %q", err, w)
				}
			}
		})
	}

	// A backend defined after the route that uses it is fine.
	var l Louter
	in := "louter {\n model * x\n backend x {\n  protocol openai_chat\n  dialect {\n   reasoning think\n  }\n  reverse_proxy localhost:1\n }\n}"
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in)); err != nil {
		t.Errorf("route before its backend: %v", err)
	}
}

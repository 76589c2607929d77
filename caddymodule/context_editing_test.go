package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/translate"
)

func TestContextManagementSetting(t *testing.T) {
	var l Louter
	d := caddyfile.NewTestDispenser(`louter {
		backend local {
			protocol anthropic
			context_management polyfill
			reverse_proxy localhost:1
		}
	}`)
	if err := l.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if got := l.Backends["local"].ContextManagement; got != "polyfill" {
		t.Errorf("context_management = %q, want polyfill", got)
	}
	var empty Louter
	if err := empty.UnmarshalCaddyfile(caddyfile.NewTestDispenser("louter {\nbackend x {\nprotocol anthropic\ncontext_management\nreverse_proxy localhost:1\n}\n}")); err == nil || !strings.Contains(err.Error(), "wrong argument count") {
		t.Errorf("context_management without a value: %v", err)
	}

	for _, tt := range []struct {
		protocol   translate.Protocol
		mode, err  string
		translates bool // an Anthropic client's request is translated, not passed through
	}{
		{translate.ProtocolAnthropic, "", "", false},
		{translate.ProtocolAnthropic, "native", "", false},
		{translate.ProtocolAnthropic, "polyfill", "", true},
		{translate.ProtocolAnthropic, "off", "", true},
		{translate.ProtocolBedrock, "native", "", false},
		{translate.ProtocolOpenAIChat, "polyfill", "", false},
		{translate.ProtocolOpenAIChat, "native", "a openai_chat backend does not apply Anthropic's context edits", false},
		{translate.ProtocolVertexAnthropic, "native", "a vertex_anthropic backend does not apply", false},
		{translate.ProtocolGemini, "sometimes", `context_management "sometimes": want native, polyfill or off`, false},
	} {
		b := &Backend{Protocol: tt.protocol, ContextManagement: tt.mode}
		errs := b.validateContextEditing("b")
		switch {
		case tt.err == "" && len(errs) > 0:
			t.Errorf("%s %q: %v", tt.protocol, tt.mode, errs)
		case tt.err != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.err)):
			t.Errorf("%s %q: errors %v, want %q", tt.protocol, tt.mode, errs, tt.err)
		}
		if got := b.editsContextItself(); got != tt.translates {
			t.Errorf("%s %q: editsContextItself = %v, want %v", tt.protocol, tt.mode, got, tt.translates)
		}
	}
}

package translate

import (
	"strings"
	"testing"
)

func TestCheckAnthropicVersion(t *testing.T) {
	tests := []struct {
		version, body, param string // param: "" when allowed
	}{
		{AnthropicVersion2023, `{"temperature":0.5,"messages":[]}`, ""},
		{"", `{"top_k":5}`, ""},
		{AnthropicVersion2026, `{"messages":[{"role":"user","content":"hi"}]}`, ""},
		{AnthropicVersion2026, `{"temperature":1}`, "temperature"},
		{AnthropicVersion2026, `{"top_p":null}`, "top_p"},
		{AnthropicVersion2026, `{"top_k":5}`, "top_k"},
		{AnthropicVersion2026, `{"messages":[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"document"}]}]}`, "messages.0.content.1"},
		{AnthropicVersion2026, `{"messages":[{"role":"user","content":[{"type":"document"}]}]}`, ""},
		{AnthropicVersion2026, `{"messages":[{"role":"user","content":[{"type":"text","text":"a","citations":[{"type":"char_location"}]}]}]}`, "messages.0.content.0.citations"},
		{AnthropicVersion2026, `{"messages":[{"role":"user","content":[{"type":"text","text":"a","citations":[]}]}]}`, ""},
		{AnthropicVersion2026, `{"messages":[{"role":"assistant","content":[{"type":"text","text":"a","citations":[{}]}]}]}`, ""},
	}
	for _, tt := range tests {
		e := CheckAnthropicVersion(tt.version, []byte(tt.body))
		switch {
		case tt.param == "" && e != nil:
			t.Errorf("%s %s: refused: %s", tt.version, tt.body, e.Message)
		case tt.param != "" && (e == nil || e.Param != tt.param || e.Status != 400 || !strings.HasPrefix(e.Message, tt.param)):
			t.Errorf("%s %s: %+v, want a 400 naming %s", tt.version, tt.body, e, tt.param)
		}
	}
}

func TestAnthropicDropsSampling(t *testing.T) {
	tests := []struct {
		version, model string
		want           bool
	}{
		{AnthropicVersion2026, "claude-3-5-haiku-latest", true},
		{AnthropicVersion2023, "claude-opus-4-7", true},
		{"", "claude-opus-4-7-20261001", true},
		{"", "claude-sonnet-5", true},
		{"", "anthropic.claude-haiku-4-8-v1:0", true},
		{"", "us.anthropic.claude-opus-5-1-v2:0", true},
		{"", "Claude-Opus-4-10", true},
		{"", "claude-opus-4-6", false},
		{"", "claude-sonnet-4-20250514", false},
		{"", "claude-3-7-sonnet-latest", false},
		{"", "claude-opus-", false},
		{"", "gpt-5", false},
	}
	for _, tt := range tests {
		if got := AnthropicDropsSampling(tt.version, tt.model); got != tt.want {
			t.Errorf("AnthropicDropsSampling(%q, %q) = %v, want %v", tt.version, tt.model, got, tt.want)
		}
	}
}

func TestDropAnthropicSampling(t *testing.T) {
	in := []byte(`{"model":"m","temperature":0.2,"messages":[{"role":"user","content":"top_k"}],"top_k":3}`)
	orig := string(in)
	out, dropped := DropAnthropicSampling(in)
	if string(out) != `{"model":"m","messages":[{"role":"user","content":"top_k"}]}` {
		t.Errorf("out = %s", out)
	}
	if len(dropped) != 2 || !strings.HasPrefix(dropped[0], "temperature: ") || !strings.HasPrefix(dropped[1], "top_k: ") {
		t.Errorf("dropped = %q", dropped)
	}
	if string(in) != orig {
		t.Error("the input body was modified")
	}
	same := []byte(`{"model":"m"}`)
	if out, dropped := DropAnthropicSampling(same); &out[0] != &same[0] || dropped != nil {
		t.Error("a body without sampling parameters was copied")
	}
}

func TestDropSampling(t *testing.T) {
	f, k := 0.5, 3
	r := &Request{Temperature: &f, TopP: &f, TopK: &k}
	DropSampling(r)
	if r.Temperature != nil || r.TopP != nil || r.TopK != nil || len(r.Dropped) != 3 {
		t.Errorf("after DropSampling: %+v", r)
	}
}

func TestStripBillingHeader(t *testing.T) {
	const line = "x-anthropic-billing-header: cc_version=2.1.330.8fa; cc_entrypoint=sdk-cli;"
	tests := []struct {
		system []Part
		want   []string // the system texts left
	}{
		{[]Part{{Type: PartText, Text: line}, {Type: PartText, Text: "You are Claude Code."}}, []string{"You are Claude Code."}},
		{[]Part{{Type: PartText, Text: line + "\nYou are Claude Code."}}, []string{"You are Claude Code."}},
		{[]Part{{Type: PartText, Text: line}}, nil},
		{[]Part{{Type: PartText, Text: "Hello"}, {Type: PartText, Text: line}}, []string{"Hello", line}},
		{nil, nil},
	}
	for _, tt := range tests {
		orig := append([]Part(nil), tt.system...)
		r := &Request{System: tt.system}
		stripped := StripBillingHeader(r)
		var got []string
		for _, p := range r.System {
			got = append(got, p.Text)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("system %v: left %q, want %q", orig, got, tt.want)
		}
		var before []string
		for _, p := range orig {
			before = append(before, p.Text)
		}
		if stripped != (len(r.Dropped) == 1) || stripped == (strings.Join(got, "|") == strings.Join(before, "|")) {
			t.Errorf("system %v: stripped %v, dropped %q", orig, stripped, r.Dropped)
		}
		for i := range tt.system {
			if tt.system[i].Text != orig[i].Text {
				t.Errorf("system %v: the client's parts were modified", orig)
			}
		}
	}
}

package caddymodule

import (
	"strings"
	"testing"
)

func TestModelAliasRouting(t *testing.T) {
	l := &Louter{Models: []ModelRoute{
		{Match: "qwen3", Backend: "a", Aliases: []string{"claude-qwen3", "gemini-3.1-pro-high"}},
		{Match: "big-*", Backend: "a", Rename: "big", Aliases: []string{"claude-big"}},
		{Match: "*", Backend: "b"},
	}}
	for _, tt := range []struct{ model, match, backendName string }{
		{"qwen3", "qwen3", "qwen3"},
		{"claude-qwen3", "qwen3", "qwen3"},
		{"gemini-3.1-pro-high", "qwen3", "qwen3"},
		{"claude-big", "big-*", "big-*"}, // the rename applies over it
		{"big-x", "big-*", "big-x"},
		{"claude-qwen3x", "*", "claude-qwen3x"}, // aliases match exactly
	} {
		r, ok := l.route(tt.model)
		if !ok || r.Match != tt.match || r.backendName(tt.model) != tt.backendName {
			t.Errorf("%s: route %+v, backend name %q", tt.model, r, r.backendName(tt.model))
		}
	}
}

func TestValidateAliases(t *testing.T) {
	l := &Louter{Models: []ModelRoute{
		{Match: "claude-*", Backend: "a", Aliases: []string{"x"}},
		{Match: "m", Backend: "a", Aliases: []string{"", "y*"}},
		{Match: "n-*", Backend: "a", Rename: "n", Aliases: []string{"ok"}},
	}}
	errs := l.validateAliases()
	all := ""
	for _, e := range errs {
		all += e.Error() + "\n"
	}
	if len(errs) != 3 || !strings.Contains(all, "need a literal pattern or a rename") || !strings.Contains(all, `alias "y*"`) || !strings.Contains(all, `alias ""`) {
		t.Errorf("errors:\n%s", all)
	}
}

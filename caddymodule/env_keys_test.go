package caddymodule

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestUnsetEnvVars(t *testing.T) {
	t.Setenv("LOUTER_TEST_SET", "x")
	t.Setenv("LOUTER_TEST_EMPTY", "") // set, even if empty: the user chose it
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"sk-literal", nil},
		{"{env.LOUTER_TEST_SET}", nil},
		{"{env.LOUTER_TEST_EMPTY}", nil},
		{"{env.LOUTER_TEST_UNSET}", []string{"LOUTER_TEST_UNSET"}},
		{"Bearer {env.LOUTER_TEST_SET}{env.LOUTER_TEST_UNSET_2}", []string{"LOUTER_TEST_UNSET_2"}},
		{"{env.LOUTER_TEST_UNCLOSED", nil},
		{"{env.}", nil},
	}
	for _, tt := range tests {
		if got := unsetEnvVars(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("unsetEnvVars(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWarnUnsetKeys: a warning names the backend and the variable (never a
// key), and only for backends a route uses.
func TestWarnUnsetKeys(t *testing.T) {
	t.Setenv("LOUTER_TEST_SET", "sk-secret")
	used := &Backend{APIKey: "{env.LOUTER_TEST_UNSET}"}
	fine := &Backend{APIKey: "{env.LOUTER_TEST_SET}"}
	unused := &Backend{APIKey: "{env.LOUTER_TEST_UNSET_UNUSED}"}
	core, logs := observer.New(zap.WarnLevel)
	l := &Louter{
		Backends: map[string]*Backend{"used": used, "fine": fine, "unused": unused},
		Models:   []ModelRoute{{Match: "a*", backend: used}, {Match: "*", backend: fine}},
		logger:   zap.New(core),
	}
	l.warnUnsetKeys()
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d warnings, want 1: %v", len(entries), entries)
	}
	f := entries[0].ContextMap()
	if f["backend"] != "used" || f["variable"] != "LOUTER_TEST_UNSET" || !strings.Contains(entries[0].Message, "not set") {
		t.Errorf("warning %q %v", entries[0].Message, f)
	}
}

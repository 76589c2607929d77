package caddymodule

import (
	"slices"
	"testing"
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

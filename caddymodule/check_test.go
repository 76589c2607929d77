package caddymodule

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/pflag"
)

func TestGlobCovers(t *testing.T) {
	tests := []struct {
		p, q string
		want bool
	}{
		{"*", "claude-*", true},
		{"claude-*", "claude-sonnet-*", true},
		{"claude-*", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"claude-*", "gpt-*", false},
		{"claude-sonnet-*", "claude-*", false}, // claude-opus-4 escapes
		{"*-mini", "gpt-*", false},
		{"a*b", "a*", false},
		{"a*", "a*b", true},
		{"*a*", "x*a", true},
		{"x*a", "*a*", false},
	}
	for _, tt := range tests {
		if got := globCovers(tt.p, tt.q); got != tt.want {
			t.Errorf("globCovers(%q, %q) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
	}
}

func TestCheckConfig(t *testing.T) {
	t.Setenv("LOUTER_TEST_KEY", "set")
	cfg := `{"apps": {"http": {"servers": {"s": {"routes": [
		{"handle": [{"handler": "subroute", "routes": [{"handle": [{
			"handler": "louter",
			"backends": {
				"oai": {"protocol": "openai_chat", "api_key": "{env.LOUTER_TEST_KEY}", "dialect": {"tool_calls": "hermes"}, "upstream": {"handler": "reverse_proxy"}},
				"anth": {"protocol": "anthropic", "api_key": "{env.LOUTER_TEST_UNSET}", "dialect": {"reasoning": "think"}, "upstream": {"handler": "reverse_proxy"}},
				"typo": {"protocol": "openai", "upstream": {"handler": "reverse_proxy"}},
				"spare": {"protocol": "gemini", "api_key": "{env.LOUTER_TEST_UNSET_SPARE}", "upstream": {"handler": "reverse_proxy"}},
				"bad": {"protocol": "openai_chat", "dialect": {"tool_calls": "xml"}, "upstream": {"handler": "reverse_proxy"}}
			},
			"models": [
				{"match": "claude-*", "backend": "anth", "fallbacks": [{"backend": "spare"}, {"backend": "nope"}], "when": [{"images": true, "backend": "vision"}, {"thinking": true, "backend": "oai"}]},
				{"match": "claude-sonnet-*", "backend": "oai"},
				{"match": "gpt-*", "backend": "openai"},
				{"match": "*", "backend": "oai"},
				{"match": "local/*", "backend": "oai"},
				{"match": "x", "backend": "typo"},
				{"match": "y", "backend": "bad"}
			]
		}]}]}]}
	]}}}}}`
	problems, err := CheckConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`backend "anth": dialect applies to openai_chat, azure_openai backends only, not "anthropic"`,
		`backend "anth": api_key names the environment variable LOUTER_TEST_UNSET, which is not set`,
		`backend "bad": dialect: unknown tool_calls "xml"`,
		`backend "spare": api_key names the environment variable LOUTER_TEST_UNSET_SPARE, which is not set`,
		`backend "typo": unknown protocol "openai"`,
		`model route 0 ("claude-*"): fallback 1: unknown backend "nope"`,
		`model route 0 ("claude-*"), condition 0: unknown backend "vision"`,
		`model "claude-sonnet-*": never matches: the earlier route "claude-*" matches every model it does`,
		`model route 2 ("gpt-*"): unknown backend "openai"`,
		`model "local/*": never matches: the earlier route "*" matches every model it does`,
		`model "x": never matches: the earlier route "*" matches every model it does`,
		`model "y": never matches: the earlier route "*" matches every model it does`,
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if i >= len(problems) || !strings.Contains(problems[i], w) {
			t.Errorf("problem %d: want one containing %q, got:\n%s", i, w, strings.Join(problems, "\n"))
			continue
		}
		if !strings.HasPrefix(problems[i], ".apps.http.servers.s.routes[0].handle[0].routes[0].handle[0]: ") {
			t.Errorf("problem %d does not say where: %s", i, problems[i])
		}
	}

	clean := `{"apps": {"http": {"servers": {"s": {"routes": [{"handle": [{"handler": "louter",
		"backends": {"m": {"protocol": "openai_chat", "upstream": {"handler": "reverse_proxy"}}},
		"models": [{"match": "claude-*", "backend": "m"}, {"match": "*", "backend": "m"}]}]}]}}}}}`
	if problems, err := CheckConfig([]byte(clean)); err != nil || len(problems) != 0 {
		t.Errorf("clean config: %v %q", err, problems)
	}
	if _, err := CheckConfig([]byte("not json")); err == nil {
		t.Error("no error for a config that is not JSON")
	}
}

// What `caddy validate` refuses, check reports too, each error on a line
// of its own: it said "no problems found" for clients with no key or an
// unset key_env, which Caddy refuses to load.
func TestCheckConfigReportsValidateErrors(t *testing.T) {
	cfg := `{"apps": {"http": {"servers": {"s": {"routes": [{"handle": [{"handler": "louter",
		"backends": {"m": {"protocol": "openai_chat", "upstream": {"handler": "reverse_proxy"}}},
		"models": [{"match": "*", "backend": "m"}],
		"clients": [{"name": "nokey"}, {"name": "env", "key_env": "LOUTER_TEST_NEVER_SET_KEY"}, {"name": "budget", "key_sha256": "00", "budget": "lots"}]}]}]}}}}}`
	problems, err := CheckConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`caddy validate: client "nokey": no key (key_sha256, key_file or key_env), and no identity is configured`,
		`caddy validate: client "env": key_env: LOUTER_TEST_NEVER_SET_KEY is not set`,
		`caddy validate: client "budget": key_sha256 must be 64 hexadecimal digits`,
		`caddy validate: client "budget": budget "lots": `,
	}
	if len(problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want %q", i, problems[i], w)
		}
	}

	// A configuration that is not Caddy's at all (an unknown member) is
	// refused as caddy validate refuses it.
	problems, _ = CheckConfig([]byte(`{"apps": {"http": {"servers": {"s": {"routes": [], "nonsense": 1}}}}}`))
	if len(problems) != 1 || !strings.Contains(problems[0], "nonsense") {
		t.Errorf("unknown member: %q", problems)
	}
}

// TestCheckCommand runs `caddy louter check` on Caddyfiles, through the
// same config loading as `caddy validate`.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.Caddyfile", `:8080 {
	louter {
		backend m {
			protocol openai_chat
			api_key {env.LOUTER_TEST_NEVER_SET}
			reverse_proxy 127.0.0.1:8081
		}
		model * m
		model claude-* m
	}
}
`)
	good := write("good.Caddyfile", `:8080 {
	louter {
		backend m {
			protocol openai_chat
			reverse_proxy 127.0.0.1:8081
		}
		model * m
	}
}
`)
	// caddy validate refuses these; check said "no problems found".
	keys := write("keys.Caddyfile", `:8080 {
	louter {
		backend m {
			protocol openai_chat
			reverse_proxy 127.0.0.1:8081
		}
		model * m
		client nokey {
			models *
		}
		client env {
			key_env LOUTER_TEST_NEVER_SET_CLIENT_KEY
		}
	}
}
`)
	run := func(file string) (string, int, error) {
		var out strings.Builder
		checkOutput = &out
		t.Cleanup(func() { checkOutput = os.Stdout })
		fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
		fs.String("config", file, "")
		fs.String("adapter", "caddyfile", "")
		code, err := cmdCheck(caddycmd.Flags{FlagSet: fs})
		return out.String(), code, err
	}

	out, code, err := run(bad)
	if code != 1 || !errors.Is(err, errProblems) {
		t.Errorf("bad config: exit %d, %v", code, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "LOUTER_TEST_NEVER_SET, which is not set") ||
		!strings.Contains(lines[1], `model "claude-*": never matches`) {
		t.Errorf("bad config, one line per problem expected:\n%s", out)
	}

	out, code, err = run(keys)
	if code != 1 || !errors.Is(err, errProblems) {
		t.Errorf("keys config: exit %d, %v", code, err)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `client "nokey": no key`) ||
		!strings.Contains(lines[1], `client "env": key_env: LOUTER_TEST_NEVER_SET_CLIENT_KEY is not set`) {
		t.Errorf("keys config, one line per problem expected:\n%s", out)
	}

	if out, code, err := run(good); code != 0 || err != nil || !strings.Contains(out, "no problems found") {
		t.Errorf("good config: exit %d, %v: %s", code, err, out)
	}
	if _, code, err := run(filepath.Join(dir, "missing")); code == 0 || err == nil {
		t.Errorf("missing file: exit %d, %v", code, err)
	}
}

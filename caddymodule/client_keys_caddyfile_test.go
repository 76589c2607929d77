package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalClientKeysErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"client without a name", "louter {\nclient {\n}\n}", "wrong argument count"},
		{"client with two names", "louter {\nclient a b {\n}\n}", "wrong argument count"},
		{"two keys", "louter {\nclient a {\nkey_env A\nkey_file /x\n}\n}", "key is already specified"},
		{"unknown client subdirective", "louter {\nclient a {\ncolor blue\n}\n}", "unrecognized louter client subdirective 'color'"},
		{"models without globs", "louter {\nclient a {\nmodels\n}\n}", "wrong argument count"},
		{"bad rate", "louter {\nclient a {\nrequests 100\n}\n}", "want N/WINDOW"},
		{"bad window", "louter {\nclient a {\ntokens 100/soon\n}\n}", "invalid window"},
		{"bad budget", "louter {\nclient a {\nbudget lots/30d\n}\n}", "positive number of US dollars"},
		{"bad concurrent", "louter {\nclient a {\nconcurrent 0\n}\n}", "positive integer"},
		{"identity twice", "louter {\nidentity {a}\nidentity {b}\n}", "identity already specified"},
		{"price without pairs", "louter {\nprice gpt-5\n}", "followed by pairs"},
		{"price odd pairs", "louter {\nprice gpt-5 input\n}", "followed by pairs"},
		{"price unknown kind", "louter {\nprice gpt-5 tip 3\n}", `unknown kind "tip"`},
		{"price not a number", "louter {\nprice gpt-5 input cheap\n}", `invalid input price "cheap"`},
		{"redis without address", "louter {\nredis\n}", "wrong argument count"},
		{"redis twice", "louter {\nredis a:1\nredis b:1\n}", "redis already specified"},
		{"redis bad on_error", "louter {\nredis a:1 {\non_error maybe\n}\n}", "want open or closed"},
		{"redis bad timeout", "louter {\nredis a:1 {\ntimeout soon\n}\n}", "invalid duration"},
		{"redis bad lease", "louter {\nredis a:1 {\nlease 0s\n}\n}", "redis lease: invalid duration"},
		{"redis unknown", "louter {\nredis a:1 {\ncolor blue\n}\n}", "unrecognized louter redis subdirective 'color'"},
		{"route limit bad", "louter {\nmodel a b {\nrequests x/1m\n}\n}", "positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestClientKeyHash(t *testing.T) {
	t.Setenv("LOUTER_TEST_KEY", " sk-test \n")
	want := "sk-test"
	tests := []struct {
		name string
		c    ClientKey
		err  string
	}{
		{"env, trimmed", ClientKey{KeyEnv: "LOUTER_TEST_KEY"}, ""},
		{"hash", ClientKey{KeySHA256: sha256HexForTest(want)}, ""},
		{"hash too short", ClientKey{KeySHA256: "abcd"}, "64 hexadecimal digits"},
		{"unset env", ClientKey{KeyEnv: "LOUTER_TEST_UNSET_KEY"}, "is not set"},
		{"missing file", ClientKey{KeyFile: "/nonexistent/louter.key"}, "key_file"},
		{"two sources", ClientKey{KeyEnv: "LOUTER_TEST_KEY", KeySHA256: sha256HexForTest(want)}, "only one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.c.keyHash()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || sha256HexForTest(want) != hexString(h) {
				t.Fatalf("hash %x, %v", h, err)
			}
		})
	}
}

func sha256HexForTest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

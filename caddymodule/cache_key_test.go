package caddymodule

import (
	"bytes"
	"testing"

	"github.com/tidwall/sjson"
)

// appendKeyMember writes what sjson's SetBytes writes for a member the
// body lacks, byte for byte, and, on a translated Claude Code request,
// in the encoder's buffer without a copy.
func TestAppendKeyMember(t *testing.T) {
	translated := claudeCodeTurnOpenAI(t)
	const member, key = "prompt_cache_key", "louter-0123456789abcdef0123456789abcdef"
	for _, body := range [][]byte{[]byte(`{}`), []byte(`{"a":1}`), []byte(`{"a":{"b":"}"}}`), translated} {
		want, err := sjson.SetBytes(bytes.Clone(body), member, key)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendKeyMember(bytes.Clone(body), member, key)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("appendKeyMember(%.40q) = %.80q, %v; want sjson's %.80q", body, got, ok, want)
		}
	}
	if out, _ := appendKeyMember(translated, member, key); &out[0] != &translated[0] {
		t.Error("the translated body was copied: its encoder left no room for the key")
	}
	for _, body := range []string{`[1]`, `{"a":1} `, `}`, ``} {
		if out, ok := appendKeyMember([]byte(body), member, key); ok || string(out) != body {
			t.Errorf("appendKeyMember(%q) = %q, %v; want it untouched and false", body, out, ok)
		}
	}
}

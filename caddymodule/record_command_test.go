package caddymodule

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/pflag"
)

func TestReplayCommand(t *testing.T) {
	fixture := filepath.Join("..", "testdata", "recordings", "claude-code.jsonl")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	// The same recording with one text delta changed in what the client
	// got.
	changed := filepath.Join(t.TempDir(), "changed.jsonl")
	edited := bytes.Replace(data, []byte(`"text":"The`), []byte(`"text":"A`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the fixture has no text delta to change")
	}
	if err := os.WriteFile(changed, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(file, id string) (string, int, error) {
		var out strings.Builder
		checkOutput = &out
		t.Cleanup(func() { checkOutput = os.Stdout })
		fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
		fs.String("id", id, "")
		fs.Bool("verbose", false, "")
		if err := fs.Parse([]string{file}); err != nil {
			t.Fatal(err)
		}
		code, err := cmdReplay(caddycmd.Flags{FlagSet: fs})
		return out.String(), code, err
	}
	tests := []struct {
		name, file, id string
		code           int
		out            string
	}{
		{"clean", fixture, "", 0, "replayed 2 exchanges: 0 differ, 0 skipped"},
		{"changed", changed, "", 1, "$.delta.text: recorded \"A\", replayed \"The\""},
		{"one id", fixture, "claude-code-02", 0, "replayed 1 exchanges: 0 differ"},
		{"unknown id", fixture, "nope", 1, ""},
		{"missing file", filepath.Join(t.TempDir(), "none.jsonl"), "", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code, err := run(tt.file, tt.id)
			if (code == 0) != (tt.code == 0) || !strings.Contains(out, tt.out) {
				t.Errorf("exit %d (%v), output:\n%s\nwant exit %d and %q", code, err, out, tt.code, tt.out)
			}
			if tt.name == "changed" && !errors.Is(err, errDiffer) {
				t.Errorf("error %v", err)
			}
		})
	}
}

package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

var update = flag.Bool("update", false, "rewrite the expected output of the Caddyfile adapt fixtures")

const adaptSeparator = "----------"

// TestCaddyfileAdapt adapts every testdata/caddyfile_adapt/*.caddyfiletest
// fixture — a Caddyfile, a line of dashes, then the JSON it must adapt to,
// or, when that is not JSON, text the adapt error must contain — the way
// Caddy's own adapt tests do. -update rewrites the expectations.
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "caddyfile_adapt", "*.caddyfiletest"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			caddyfileText, expected, ok := strings.Cut(string(data), adaptSeparator)
			if !ok {
				t.Fatalf("no %s line", adaptSeparator)
			}
			caddyfileText = strings.TrimSpace(caddyfileText) + "\n"
			expected = strings.TrimSpace(expected)

			out, warnings, err := adapter.Adapt([]byte(caddyfileText), nil)
			for _, w := range warnings {
				t.Errorf("warning: %s:%d: %s: %s", file, w.Line, w.Directive, w.Message)
			}
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, out, "", "\t"); err != nil {
					t.Fatal(err)
				}
				got = pretty.String()
			}

			if *update {
				if err := os.WriteFile(file, []byte(caddyfileText+adaptSeparator+"\n"+got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			switch {
			case strings.HasPrefix(expected, "{"):
				if err != nil {
					t.Fatalf("adapt: %v", err)
				}
				if got != expected {
					t.Errorf("adapted JSON differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", got, expected)
				}
			case err == nil:
				t.Errorf("adapted without the expected error %q", expected)
			case !strings.Contains(got, expected):
				t.Errorf("error %q, want one containing %q", got, expected)
			}
		})
	}
}

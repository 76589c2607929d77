package readme

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule"
)

// TestDocsBedrockConfigs: each Caddyfile of docs/cloud-bedrock.md is
// formatted as caddy fmt writes it, adapts without a warning, validates
// (the aws_sigv4 module provisions) and passes `caddy louter check`.
func TestDocsBedrockConfigs(t *testing.T) {
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "docs-test-key")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cloud-bedrock.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var cur *strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && l == "```caddyfile":
			cur = new(strings.Builder)
		case cur != nil && l == "```":
			n++
			text := cur.String()
			cur = nil
			if got := string(caddyfile.Format([]byte(text))); got != text {
				t.Errorf("block %d is not as caddy fmt writes it:\n%s", n, got)
			}
			cfgJSON, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), nil)
			if err != nil {
				t.Fatalf("block %d: %v", n, err)
			}
			for _, w := range warnings {
				t.Errorf("block %d: warning: %s", n, w.String())
			}
			var cfg caddy.Config
			if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
				t.Fatal(err)
			}
			if err := caddy.Validate(&cfg); err != nil {
				t.Errorf("block %d: caddy validate: %v", n, err)
			}
			if problems, err := caddymodule.CheckConfig(cfgJSON); err != nil || len(problems) > 0 {
				t.Errorf("block %d: louter check: %v %q", n, err, problems)
			}
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	if n != 2 {
		t.Errorf("%d Caddyfile blocks, want 2", n)
	}
}

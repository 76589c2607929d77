package readme

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// exampleConfig is caddy.Caddyfile.example as testcaddy runs it: without
// its global options (testcaddy has its own), on free ports.
func exampleConfig(t *testing.T) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "caddy.Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(body)
	// The global options block: from the first line that is "{" to the
	// first that is "}".
	cfg = regexp.MustCompile(`(?ms)^\{\n.*?^\}\n`).ReplaceAllString(cfg, "")
	cfg = strings.ReplaceAll(cfg, ":8080 {", "http://127.0.0.1:{PORT0} {")
	cfg = strings.ReplaceAll(cfg, ":8081 {", "http://127.0.0.1:{PORT1} {")
	cfg = strings.ReplaceAll(cfg, "127.0.0.1:8081", "127.0.0.1:{PORT1}")
	if regexp.MustCompile(`(?m)^[^#\n]*(8080|8081|servers \{)`).MatchString(cfg) {
		t.Fatalf("example not adapted for the test:\n%s", cfg)
	}
	return cfg
}

// TestExampleUnknownPaths runs the shipped example and checks that a
// mistyped path gets a 404 in an API's error shape, not Caddy's empty 200,
// while the example's own request still works.
func TestExampleUnknownPaths(t *testing.T) {
	ports := testcaddy.Start(t, exampleConfig(t))
	base := testcaddy.URL(ports[0])
	tests := []struct {
		method, path, anthVersion string
		status                    int
		shape                     string // a gjson condition the body meets
	}{
		{"POST", "/v1/messages", "2023-06-01", 200, `type=="message"`},
		{"POST", "/v1/message", "", 404, `error.code=="unknown_url"`},
		{"POST", "/v1/message", "2023-06-01", 404, `error.type=="not_found_error"`},
		{"POST", "/messages", "", 404, `error.message%"Unknown request URL: POST /messages*"`},
		{"GET", "/", "", 404, `error.type=="invalid_request_error"`},
		{"GET", "/", "2023-06-01", 404, `type=="error"`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(
			`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		if tt.anthVersion != "" {
			req.Header.Set("Anthropic-Version", tt.anthVersion)
		}
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !gjson.Get("["+string(body)+"]", "#("+tt.shape+")").Exists() {
			t.Errorf("%s %s (anthropic-version %q): %d %s, want %d and %s", tt.method, tt.path, tt.anthVersion, resp.StatusCode, body, tt.status, tt.shape)
		}
	}
}

package readme

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestReadmeQuickStart holds the README to its two commands: it shows
// ./xcaddy.sh run and the test command .ci/run runs, and its curl, sent to
// the example it runs, gets a message from the mock.
func TestReadmeQuickStart(t *testing.T) {
	var sh strings.Builder
	for _, b := range blocksOf(t, "sh", "README.md") {
		sh.WriteString(b.text)
	}
	for _, want := range []string{"./xcaddy.sh run\n", "npm ci --prefix e2e && go test -race ./...\n"} {
		if !strings.Contains(sh.String(), want) {
			t.Errorf("README.md does not show %q", want)
		}
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "go test -race -count=1 ./...\n") {
		t.Error(".ci/run no longer runs go test -race ./..., the README's test command")
	}

	var curl curlCommand
	for _, b := range blocksOf(t, "sh", "README.md") {
		if strings.HasPrefix(b.text, "curl ") {
			curl = curlCommands("$ " + b.text)[0]
		}
	}
	if curl.path == "" || curl.data == "" {
		t.Fatal("no curl command to localhost:8080 in README.md")
	}
	ports := testcaddy.Start(t, exampleConfig(t))
	resp, err := testcaddy.Client.Post(testcaddy.URL(ports[0])+curl.path, "application/json", strings.NewReader(curl.data))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(body, "type").Str != "message" || gjson.GetBytes(body, "content.0.text").Str == "" {
		t.Errorf("README.md's curl against the example: %d %s, want a message", resp.StatusCode, body)
	}
}

// TestReadmeMinimalConfig runs the README's minimal configuration with its
// backend's upstream pointed at the mock: a Claude model reaches the
// OpenAI Chat backend renamed, and the answer comes back as Anthropic's.
func TestReadmeMinimalConfig(t *testing.T) {
	var cfg string
	for _, b := range blocksOf(t, "caddyfile", "README.md") {
		if strings.Contains(b.text, "reverse_proxy https://api.openai.com") {
			cfg = b.text
		}
	}
	if cfg == "" {
		t.Fatal("no minimal configuration (a backend on https://api.openai.com) in README.md")
	}
	cfg = strings.Replace(cfg, ":8080 {", "http://127.0.0.1:{PORT0} {", 1)
	cfg = strings.Replace(cfg, "reverse_proxy https://api.openai.com", "reverse_proxy 127.0.0.1:{PORT1}", 1)
	cfg += "http://127.0.0.1:{PORT1} {\n\tlouter_mock\n}\n"
	ports := testcaddy.Start(t, cfg)
	testcaddy.WaitListening(t, ports[1])
	resp, err := testcaddy.Client.Post(testcaddy.URL(ports[0])+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(body, "type").Str != "message" {
		t.Fatalf("%d %s, want an Anthropic message", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Mock-Backend"); got == "" {
		t.Errorf("the answer did not come from the mock (no X-Mock-Backend)")
	}
}

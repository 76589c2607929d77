package readme

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
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

// TestReadmeMockThroughLouter runs the curl commands of "Through
// louter" (the mock section) against the shipped example: the X-Mock-*
// header the first sends reaches the mock (the example's mock backends
// list it in forward_headers), and each answer is the one shown, or a
// message when none is shown.
func TestReadmeMockThroughLouter(t *testing.T) {
	var cmds []curlCommand
	for _, b := range blocksOf(t, "console", "docs/mock.md") {
		if strings.Contains(b.text, "X-Mock-Scenario") {
			cmds = curlCommands(b.text)
			break
		}
	}
	if len(cmds) < 2 {
		t.Fatalf("%d curl commands with X-Mock-Scenario in docs/mock.md, want the mock section's two", len(cmds))
	}
	ports := testcaddy.Start(t, exampleConfig(t))
	for _, c := range cmds {
		req, _ := http.NewRequest("POST", testcaddy.URL(ports[0])+c.path, strings.NewReader(c.data))
		for _, h := range c.headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case c.output != "":
			if !jsonEqual(body, []byte(c.output)) {
				t.Errorf("%s %v: %d %s, docs/mock.md shows %s", c.path, c.headers, resp.StatusCode, body, c.output)
			}
		case resp.StatusCode != 200 || gjson.GetBytes(body, "type").Str != "message":
			t.Errorf("%s %v: %d %s, want a message", c.path, c.headers, resp.StatusCode, body)
		}
	}
}

// curlCommand is one "$ curl ..." of a console block, with the output
// shown after it.
type curlCommand struct {
	path, data, output string
	headers            []string
}

var (
	curlPath   = regexp.MustCompile(`localhost:8080(\S+)`)
	curlHeader = regexp.MustCompile(`-H '([^']*)'`)
	curlData   = regexp.MustCompile(`-d '([^']*)'`)
)

// curlCommands reads the curl commands of a console block: a command runs
// from "$ " over the lines its trailing backslashes continue; the lines
// after it up to the next "$ " are its output.
func curlCommands(text string) []curlCommand {
	var out []curlCommand
	var cmd strings.Builder
	inCmd := false
	finish := func() {
		s := cmd.String()
		c := curlCommand{data: firstGroup(curlData, s)}
		c.path = firstGroup(curlPath, s)
		for _, m := range curlHeader.FindAllStringSubmatch(s, -1) {
			if !strings.EqualFold(m[1], "content-type: application/json") {
				c.headers = append(c.headers, m[1])
			}
		}
		out = append(out, c)
		cmd.Reset()
	}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "$ curl "):
			cmd.WriteString(line)
			inCmd = strings.HasSuffix(line, `\`)
			if !inCmd {
				finish()
			}
		case inCmd:
			cmd.WriteString(line)
			inCmd = strings.HasSuffix(line, `\`)
			if !inCmd {
				finish()
			}
		case len(out) > 0:
			out[len(out)-1].output += line
		}
	}
	return out
}

func firstGroup(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

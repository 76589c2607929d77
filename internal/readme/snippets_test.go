package readme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/louter/louter/internal/testcaddy"
)

// wrapSnippet makes a documentation Caddyfile block a whole Caddyfile: a site or
// global options block is one already; a site directive (louter, header,
// log_append, ...) goes into a site, a backend block into a louter block
// of a site. It returns "" for a part that needs more than that (a model
// line naming backends defined elsewhere).
func wrapSnippet(text string) string {
	var first string
	if f := strings.Fields(text); len(f) > 0 {
		first = f[0]
	}
	switch {
	case first == "{" || strings.HasPrefix(first, ":") || strings.Contains(first, "."):
		return text
	case first == "backend":
		return ":8080 {\n\tlouter {\n" + text + "\t}\n}\n"
	case first == "model" || first == "client":
		return ""
	}
	return ":8080 {\n" + text + "}\n"
}

// elided matches a line "..." standing for what a block leaves out.
var elided = regexp.MustCompile(`(?m)^\s*\.\.\.$`)

// TestReadmeCaddyfileAdapts: every Caddyfile block of the docs that is
// not a syntax summary adapts, as it is or put where it goes (wrapSnippet).
func TestReadmeCaddyfileAdapts(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	n := 0
	for _, b := range blocksOf(t, "caddyfile") {
		if syntaxSummary.MatchString(b.text) || elided.MatchString(b.text) {
			continue
		}
		cfg := wrapSnippet(b.text)
		if cfg == "" {
			continue
		}
		n++
		if _, _, err := adapter.Adapt([]byte(cfg), map[string]any{"filename": b.where()}); err != nil {
			t.Errorf("%s: caddy adapt: %v\n%s", b.where(), err, cfg)
		}
	}
	if n < 10 {
		t.Errorf("only %d Caddyfile blocks adapted; the docs' blocks were not found as expected", n)
	}
}

// logAppend is a log_append line: the field and its value.
var logAppend = regexp.MustCompile(`(?m)^\s*log_append\s+(\S+)\s+(.+)$`)

// TestReadmePlaceholders runs the placeholder example of the docs in a
// site with louter and its mock: the header it sets names the backend, and
// each field it appends to the access log has the value, not the text of
// its placeholders (log_append resolves a value that is exactly one
// placeholder, and logs any other as written).
func TestReadmePlaceholders(t *testing.T) {
	var snippet *block
	for _, b := range blocksOf(t, "caddyfile") {
		if strings.Contains(b.text, "log_append") && strings.Contains(b.text, "{http.louter.") {
			snippet = &b
			break
		}
	}
	if snippet == nil {
		t.Fatal("no log_append example of louter's placeholders in the docs")
	}
	appended := logAppend.FindAllStringSubmatch(snippet.text, -1)
	accessLog := filepath.Join(t.TempDir(), "access.log")
	cfg := fmt.Sprintf(`:{PORT0} {
	bind 127.0.0.1
	log {
		output file %q
	}
%s	louter {
		backend mocked {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mocked
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock
}
`, accessLog, "\t"+strings.ReplaceAll(strings.TrimSuffix(snippet.text, "\n"), "\n", "\n\t")+"\n")
	ports := testcaddy.Start(t, cfg)
	testcaddy.WaitListening(t, ports[1])
	resp, err := testcaddy.Client.Post(testcaddy.URL(ports[0])+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"[mock:text] hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if strings.Contains(snippet.text, "X-Louter-Backend") {
		if got := resp.Header.Get("X-Louter-Backend"); got != "mocked" {
			t.Errorf("%s: X-Louter-Backend = %q, want the backend's name", snippet.where(), got)
		}
	}

	var entry map[string]any
	for range 100 { // the line may be written just after the response
		data, _ := os.ReadFile(accessLog)
		if line, _, _ := bytes.Cut(data, []byte("\n")); len(line) > 0 {
			if err := json.Unmarshal(line, &entry); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if entry == nil {
		t.Fatal("no access-log line")
	}
	for _, a := range appended {
		field, value := a[1], a[2]
		got := fmt.Sprint(entry[field])
		if got == "" || got == "<nil>" || strings.Contains(got, "{") {
			t.Errorf("%s: log_append %s %s logged %q, not its value", snippet.where(), field, value, got)
		}
		if strings.Contains(value, "_tokens}") {
			if n, err := strconv.ParseFloat(got, 64); err != nil || n <= 0 {
				t.Errorf("%s: log_append %s logged %q, want a token count", snippet.where(), field, got)
			}
		}
	}
}

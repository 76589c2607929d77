package readme

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/louter/louter"
	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
)

// block is one fenced code block of the README.
type block struct {
	lang string
	line int // of the opening fence
	text string
}

var fence = regexp.MustCompile("^```([a-z]*)$")

func readmeBlocks(t *testing.T) []block {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	var cur *block
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur != nil && l == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		case fence.MatchString(l):
			cur = &block{lang: fence.FindStringSubmatch(l)[1], line: i + 1}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no code blocks in README.md")
	}
	return blocks
}

func blocksOf(t *testing.T, lang string) []block {
	var out []block
	for _, b := range readmeBlocks(t) {
		if b.lang == lang {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s blocks in README.md", lang)
	}
	return out
}

// syntaxSummary matches what only a syntax summary holds: a <placeholder>
// or a choice of values (a|b). Summaries align their comments to be read,
// and are not pasted as they are.
var syntaxSummary = regexp.MustCompile(`<[a-z]+>|[a-z_]\|[a-z]`)

// TestReadmeCaddyfileFormatted: a snippet pasted as shown must not make
// Caddy warn "Caddyfile input is not formatted".
func TestReadmeCaddyfileFormatted(t *testing.T) {
	for _, b := range blocksOf(t, "caddyfile") {
		if syntaxSummary.MatchString(b.text) {
			continue
		}
		if got := string(caddyfile.Format([]byte(b.text))); got != b.text {
			t.Errorf("README.md:%d: the Caddyfile block is not as caddy fmt writes it:\n%s\n--- caddy fmt:\n%s", b.line, b.text, got)
		}
	}
}

// TestReadmeJSONValidates: every JSON block that is a whole configuration
// (it has "apps") passes what `caddy validate` runs.
func TestReadmeJSONValidates(t *testing.T) {
	n := 0
	for _, b := range blocksOf(t, "json") {
		if !strings.Contains(b.text, `"apps"`) {
			continue
		}
		n++
		var cfg caddy.Config
		if err := json.Unmarshal([]byte(b.text), &cfg); err != nil {
			t.Errorf("README.md:%d: %v", b.line, err)
			continue
		}
		if err := caddy.Validate(&cfg); err != nil {
			t.Errorf("README.md:%d: caddy validate: %v", b.line, err)
		}
	}
	if n == 0 {
		t.Error("no whole JSON configuration in README.md")
	}
}

// TestExampleValidates: the example adapts without a warning (formatting
// included) and validates.
func TestExampleValidates(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "caddy.Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	cfgJSON, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": "caddy.Caddyfile.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Errorf("warning: %s", w.String())
	}
	var cfg caddy.Config
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		t.Errorf("caddy validate: %v", err)
	}
	// Nor does `caddy louter check` find a problem.
	problems, err := caddymodule.CheckConfig(cfgJSON)
	if err != nil || len(problems) > 0 {
		t.Errorf("louter check: %v\n%s", err, strings.Join(problems, "\n"))
	}
}

// TestReadmeSharedSite runs the README's recipes for sharing a site with
// another handler: the LLM endpoint reaches louter, other requests reach
// the other handler.
func TestReadmeSharedSite(t *testing.T) {
	var recipes []block
	for _, b := range blocksOf(t, "caddyfile") {
		if strings.HasPrefix(b.text, ":8080 {") && strings.Contains(b.text, "respond") {
			recipes = append(recipes, b)
		}
	}
	if len(recipes) != 2 {
		t.Fatalf("%d site-sharing recipes in README.md, want 2 (route and handle)", len(recipes))
	}
	for _, b := range recipes {
		t.Run(strings.Fields(b.text)[2], func(t *testing.T) { runSharedSite(t, b) })
	}
}

func runSharedSite(t *testing.T, b block) {
	{
		cfg := strings.ReplaceAll(b.text, ":8080", "http://127.0.0.1:{PORT0}")
		cfg = strings.ReplaceAll(cfg, ":8081 {", "http://127.0.0.1:{PORT1} {")
		cfg = strings.ReplaceAll(cfg, "8081", "{PORT1}")
		ports := testcaddy.Start(t, cfg)
		base := testcaddy.URL(ports[0])

		resp, err := testcaddy.Client.Post(base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"[mock:text] hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"chat.completion"`)) {
			t.Errorf("README.md:%d: chat completion: %d %s", b.line, resp.StatusCode, body)
		}

		resp, err = testcaddy.Client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte("not an LLM endpoint")) && !bytes.Contains(body, []byte("hello")) {
			t.Errorf("README.md:%d: GET /: %d %s, want the respond answer", b.line, resp.StatusCode, body)
		}
	}
}

// TestReadmeGoProgram: the README's library program, with the go.mod it
// shows (its replace pointed at this checkout), tidies, vets and runs
// offline, and prints the client's stream.
func TestReadmeGoProgram(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	progs, mods := blocksOf(t, "go"), blocksOf(t, "gomod")
	if len(progs) != 1 || len(mods) != 1 {
		t.Fatalf("%d go and %d gomod blocks in README.md, want one of each", len(progs), len(mods))
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mods[0].text, "=> ../louter\n") {
		t.Fatalf("README.md:%d: the go.mod does not replace the module with ../louter:\n%s", mods[0].line, mods[0].text)
	}
	dir := t.TempDir()
	mod := strings.Replace(mods[0].text, "=> ../louter\n", "=> "+root+"\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(progs[0].text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		// Offline: every module the program needs is louter's, already
		// in the module cache.
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md:%d: go %s: %v\n%s", progs[0].line, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	run("vet", ".")
	out := run("run", ".")
	for _, want := range []string{`"max_completion_tokens":100`, `"text":"Hel"`, `"text":"lo!"`, "event: message_stop"} {
		if !strings.Contains(out, want) {
			t.Errorf("README.md:%d: the program's output lacks %s:\n%s", progs[0].line, want, out)
		}
	}
}

// TestReadmeGeminiHeadless: a headless Gemini CLI command the README shows
// passes --skip-trust, without which Gemini CLI exits (status 55) in a
// folder not trusted interactively; the e2e tests run it with the flag.
func TestReadmeGeminiHeadless(t *testing.T) {
	n := 0
	for _, b := range blocksOf(t, "sh") {
		for _, line := range strings.Split(b.text, "\n") {
			if !strings.Contains(line, " gemini ") || !strings.Contains(line, " -p ") {
				continue
			}
			n++
			if !strings.Contains(line, " --skip-trust") {
				t.Errorf("README.md:%d: headless Gemini CLI without --skip-trust: %s", b.line, line)
			}
		}
	}
	if n == 0 {
		t.Error("README.md shows no headless Gemini CLI command (gemini --skip-trust -p ...)")
	}
}

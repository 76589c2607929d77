package readme

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// block is one fenced code block of the README or of a page of docs/.
type block struct {
	file string // README.md or docs/<page>.md
	lang string
	line int // of the opening fence
	text string
}

// where names the block's place for a message: file:line.
func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var fence = regexp.MustCompile("^```([a-z]*)$")

// docFiles are the documentation files, relative to the repository root:
// README.md and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
	return files
}

// docBlocks returns the fenced code blocks of README.md and docs/*.md,
// wherever a snippet lives now.
func docBlocks(t *testing.T) []block {
	t.Helper()
	var blocks []block
	for _, f := range docFiles(t) {
		blocks = append(blocks, fileBlocks(t, f)...)
	}
	return blocks
}

func fileBlocks(t *testing.T, file string) []block {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
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
			cur = &block{file: file, lang: fence.FindStringSubmatch(l)[1], line: i + 1}
		}
	}
	return blocks
}

// blocksOf returns the blocks of one language, of every documentation
// file, or of the files named.
func blocksOf(t *testing.T, lang string, files ...string) []block {
	t.Helper()
	var all []block
	if len(files) == 0 {
		all = docBlocks(t)
	}
	for _, f := range files {
		all = append(all, fileBlocks(t, f)...)
	}
	var out []block
	for _, b := range all {
		if b.lang == lang {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s blocks in %v", lang, files)
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
			t.Errorf("%s: the Caddyfile block is not as caddy fmt writes it:\n%s\n--- caddy fmt:\n%s", b.where(), b.text, got)
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
			t.Errorf("%s: %v", b.where(), err)
			continue
		}
		if err := caddy.Validate(&cfg); err != nil {
			t.Errorf("%s: caddy validate: %v", b.where(), err)
		}
	}
	if n == 0 {
		t.Error("no whole JSON configuration in the docs")
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

// TestReadmeSharedSite runs the recipes (docs/configuration.md) for sharing a site with
// another handler: the LLM endpoint reaches louter, other requests reach
// the other handler.
func TestReadmeSharedSite(t *testing.T) {
	var recipes []block
	for _, b := range blocksOf(t, "caddyfile", "docs/configuration.md") {
		if strings.HasPrefix(b.text, ":8080 {") && strings.Contains(b.text, "respond") {
			recipes = append(recipes, b)
		}
	}
	if len(recipes) != 2 {
		t.Fatalf("%d site-sharing recipes in docs/configuration.md, want 2 (route and handle)", len(recipes))
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
			t.Errorf("%s: chat completion: %d %s", b.where(), resp.StatusCode, body)
		}

		resp, err = testcaddy.Client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte("not an LLM endpoint")) && !bytes.Contains(body, []byte("hello")) {
			t.Errorf("%s: GET /: %d %s, want the respond answer", b.where(), resp.StatusCode, body)
		}
	}
}

// TestReadmeGoProgram: the library program of docs/library.md, with the go.mod it
// shows (its replace pointed at this checkout), tidies, vets and runs, and
// prints the client's stream, on a warm module cache or a cold one.
func TestReadmeGoProgram(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	progs, mods := blocksOf(t, "go", "docs/library.md"), blocksOf(t, "gomod", "docs/library.md")
	if len(progs) != 1 || len(mods) != 1 {
		t.Fatalf("%d go and %d gomod blocks in docs/library.md, want one of each", len(progs), len(mods))
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mods[0].text, "=> ../louter\n") {
		t.Fatalf("%s: the go.mod does not replace the module with ../louter:\n%s", mods[0].where(), mods[0].text)
	}
	dir := t.TempDir()
	mod := strings.Replace(mods[0].text, "=> ../louter\n", "=> "+root+"\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(progs[0].text), 0o644); err != nil {
		t.Fatal(err)
	}
	// The checkout's go.sum: every module the program needs is one of
	// louter's, so its hashes are there, and tidy verifies what it
	// downloads against them without asking the checksum database. The
	// module proxy stays reachable (the environment's GOPROXY): on a cold
	// module cache tidy must download the go.mod files of the whole module
	// graph, some of which no build of louter ever fetched (.ci/run runs
	// this test once with empty caches to prove it).
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: go %s: %v\n%s", progs[0].where(), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	run("vet", ".")
	out := run("run", ".")
	for _, want := range []string{`"max_completion_tokens":100`, `"text":"Hel"`, `"text":"lo!"`, "event: message_stop"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: the program's output lacks %s:\n%s", progs[0].where(), want, out)
		}
	}
}

// TestReadmeGeminiHeadless: a headless Gemini CLI command the docs show
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
				t.Errorf("%s: headless Gemini CLI without --skip-trust: %s", b.where(), line)
			}
		}
	}
	if n == 0 {
		t.Error("the docs show no headless Gemini CLI command (gemini --skip-trust -p ...)")
	}
}

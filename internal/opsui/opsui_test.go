package opsui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
)

// chromium finds the browser: it skips the test where none is installed,
// except in CI (.ci/run installs Debian's chromium), where that fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on the PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on the PATH: apt-get install chromium to run the usage page's browser test")
	return ""
}

// runChromium runs headless Chromium with args and the URL, bounded.
func runChromium(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-extensions", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(),
		// The page's fetches finish well within this virtual time.
		"--virtual-time-budget=5000",
	}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

const clientKey = "sk-alice-0123456789abcdef0123456789"

// spoofModel holds a right-to-left override: unescaped, it would show as
// "claude-exe.jpg" and turn the text after it around.
const spoofModel = "claude-\u202Egpj.exe"

// TestUsagePageInChromium seeds traffic through a real Caddy (a client
// key, prices, a fallback chain on the mock, recording on), opens the
// usage page (louter_ui, mounted on a site of its own) in headless Chromium, and checks that
// the rendered DOM shows it: alice's spend on the route, the traffic per
// backend, the first backend cooling down after its 429, the fallback and
// the error, and a recorded exchange with both sides. It writes a
// screenshot of each view.
func TestUsagePageInChromium(t *testing.T) {
	bin := chromium(t)
	recDir := t.TempDir()
	cfg := fmt.Sprintf(`:{PORT2} {
	bind 127.0.0.1
	handle_path /ops/* {
		louter_ui
	}
}
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		client alice {
			key_env LOUTER_OPSUI_TEST_KEY
		}
		price * input 3 output 15
		record %s
		backend primary {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend spare {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model claude-* primary {
			fallback spare
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock
}
`, recDir)
	t.Setenv("LOUTER_OPSUI_TEST_KEY", clientKey)
	ports := testcaddy.Start(t, cfg)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	base := testcaddy.URL(ports[0])
	var sendModel func(model, scenario string, stream bool) int

	send := func(scenario string, stream bool) int {
		return sendModel("claude-sonnet-4-5", scenario, stream)
	}
	sendModel = func(model, scenario string, stream bool) int {
		body := fmt.Sprintf(`{"model":%q,"max_tokens":100,"stream":%t,"messages":[{"role":"user","content":"[mock:text] Hi"}]}`, model, stream)
		header := []string{"Anthropic-Version", "2023-06-01", "X-Api-Key", clientKey}
		if scenario != "" {
			header = append(header, "X-Mock-Scenario", scenario)
		}
		status, _ := testcaddy.Do(t, http.MethodPost, base+"/v1/messages", body, header...)
		return status
	}
	for i, stream := range []bool{false, true, false} {
		if code := send("", stream); code != 200 {
			t.Fatalf("request %d: status %d", i, code)
		}
	}
	// A model name that would turn the rest of its line backwards
	// (U+202E, right-to-left override) if the page let it.
	if code := sendModel(spoofModel, "", false); code != 200 {
		t.Fatalf("the spoofing model's request: status %d", code)
	}
	// Both backends get the 429 (forward_headers is the handler's): the
	// first attempt falls back, the second is the client's error, and the
	// mock's Retry-After puts both in a cooldown.
	if code := send("error_429", false); code != 429 {
		t.Fatalf("the 429 scenario: status %d", code)
	}
	// Three overloaded answers without Retry-After: primary has failed
	// four times in a row and cools down for 30 s (fallback_cooldown.go),
	// long enough for the browser to see it on a busy machine (the 429's
	// own cooldown is the mock's Retry-After, 7 s).
	for range 3 {
		if code := send("error_overloaded", false); code == 200 {
			t.Fatal("the overloaded scenario answered 200")
		}
	}
	// The recording is written asynchronously.
	deadline := time.Now().Add(5 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(recDir, "*.jsonl"))
		if len(files) > 0 {
			if b, _ := os.ReadFile(files[0]); bytes.Count(b, []byte("\n")) >= 8 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the recording was not written")
		}
		time.Sleep(50 * time.Millisecond)
	}

	page := testcaddy.URL(ports[2]) + "/ops/"
	dom := string(runChromium(t, bin, page+"#spend", "--dump-dom"))
	if !strings.Contains(dom, `data-loaded="1"`) {
		t.Fatalf("the page did not finish loading its data:\n%s", dom)
	}
	section := func(id string) string {
		start := strings.Index(dom, `<section id="`+id+`"`)
		if start < 0 {
			t.Fatalf("no section %s in the DOM", id)
		}
		end := strings.Index(dom[start:], "</section>")
		return dom[start : start+end]
	}
	checks := []struct {
		view string
		want []string
	}{
		// The ledger counts per route pattern: alice, claude-*, 3 answered
		// requests (the 429 has no usage to price), a non-zero cost.
		{"spend", []string{"<td>alice</td><td>claude-*</td>", "Since "}},
		{"traffic", []string{"primary", "spare", "<td>alice</td><td>claude-sonnet-4-5</td>"}},
		{"health", []string{"<td>primary</td><td>openai_chat</td><td>claude-sonnet-4-5</td><td class=\"cooling\">cooling down until", "<td>spare</td><td>anthropic</td>"}},
		{"errors", []string{`<tr class="fallback">`, `<tr class="error">`, "<td>rate limited</td>", ">429</td>"}},
		{"recordings", []string{"Client request", "Backend request", "Backend response", "Client response", "anthropic → <bdi>primary</bdi> (openai_chat)", "chat.completion.chunk", "message_stop",
			`model <bdi>claude-\u202Egpj.exe</bdi>`}},
	}
	for _, c := range checks {
		s := section(c.view)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("view %s lacks %q:\n%s", c.view, w, s)
			}
		}
	}
	// The override shows escaped, in every view, the recorded bodies
	// included; nothing reorders the text after it.
	if strings.ContainsRune(dom, '\u202E') {
		t.Errorf("the page renders a raw U+202E:\n%s", dom)
	}
	for _, view := range []string{"traffic", "recordings"} {
		if !strings.Contains(section(view), `claude-\u202Egpj.exe`) {
			t.Errorf("view %s does not show the spoofing model escaped:\n%s", view, section(view))
		}
	}
	if strings.Contains(dom, clientKey) || strings.Contains(dom, "sk-alice") {
		t.Error("the page shows the client's key")
	}
	// Nor do the JSON answers behind it, rendered or not.
	for _, api := range []string{"api/state", "api/usage"} {
		status, b := testcaddy.Do(t, http.MethodGet, page+api, "")
		if status != 200 || bytes.Contains(b, []byte("sk-alice")) {
			t.Errorf("%s: %d, holds the key: %t", api, status, bytes.Contains(b, []byte("sk-alice")))
		}
	}
	if strings.Contains(section("spend"), "$0.0000") || !strings.Contains(section("spend"), "0.00") {
		t.Errorf("spend without a cost:\n%s", section("spend"))
	}

	// A screenshot of each view, kept where LOUTER_UI_SCREENSHOTS says
	// (else in the test's temporary folder, whose path is logged).
	out := os.Getenv("LOUTER_UI_SCREENSHOTS")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		png := filepath.Join(out, "usage-"+c.view+".png")
		runChromium(t, bin, page+"#"+c.view, "--screenshot="+png, "--window-size=1280,900")
		fi, err := os.Stat(png)
		if err != nil || fi.Size() < 5000 {
			t.Errorf("screenshot %s: %v (%d bytes)", png, err, fileSize(fi))
			continue
		}
		t.Logf("screenshot of %s: %s (%d bytes)", c.view, png, fi.Size())
	}
}

func fileSize(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}

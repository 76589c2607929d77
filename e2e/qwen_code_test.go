package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// qwenSettings is qwen-code's $HOME/.qwen/settings.json for a headless,
// offline run: OpenAI-compatible auth (the base URL, key and model come
// from OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL), no usage
// statistics, telemetry or update check.
const qwenSettings = `{"security":{"auth":{"selectedType":"openai"}},"privacy":{"usageStatisticsEnabled":false},
 "telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"disableAutoUpdate":true,"disableUpdateNag":true}}`

// TestQwenCodeThroughLouter runs qwen-code, which speaks OpenAI Chat,
// headless against each of the four backend protocols through louter, and
// asks it to run a shell command: the mock answers with a
// run_shell_command call, qwen-code runs it and sends the output back,
// which must reach the backend as that protocol's tool result. qwen-code
// sends no session id to a custom base URL, so louter keys the
// conversation by its first turn: a Responses backend gets the same
// prompt_cache_key on every turn.
func TestQwenCodeThroughLouter(t *testing.T) {
	qwen := agentBinary(t, "qwen")
	// qwen is a node script (#!/usr/bin/env node): the node this test
	// runs with (Node 22 in CI, .ci/run) goes first in its PATH.
	path := "/usr/local/bin:/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path
	}
	for _, backend := range []string{"openai_chat", "anthropic", "gemini", "openai_responses"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel() // -parallel runs (GOMAXPROCS) at a time: the agent's start-up waits as much as it computes
			url, mockPort := startAgentSite(t, backend, "qwen-code-"+backend)
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), []byte(qwenSettings), 0o644); err != nil {
				t.Fatal(err)
			}
			// runIsolated's HOME and PATH come first; later entries win.
			stdout, stderr, err := runIsolated(t, qwen, []string{
				"HOME=" + home,
				"PATH=" + path,
				"OPENAI_BASE_URL=" + url + "/v1",
				"OPENAI_API_KEY=sk-qwen-client-dummy",
				"OPENAI_MODEL=qwen3-coder-plus",
				"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
			}, "--yolo", "-o", "stream-json", "--max-wall-time", "150s",
				`Run the shell command "echo louter-ok" and tell me its output.`)
			if err != nil {
				t.Fatalf("qwen failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			t.Logf("qwen-code transcript:\n%s", stdout)

			// qwen-code's own transcript: the shell tool called with the
			// command, its output back as a tool result, and the result.
			var called, gotResult, answered bool
			for _, line := range strings.Split(stdout, "\n") {
				if !gjson.Valid(line) {
					continue
				}
				ev := gjson.Parse(line)
				ev.Get("message.content").ForEach(func(_, b gjson.Result) bool {
					switch b.Get("type").Str {
					case "tool_use":
						called = called || b.Get("name").Str == "run_shell_command" && strings.Contains(b.Get("input.command").Str, "echo louter-ok")
					case "tool_result":
						gotResult = gotResult || !b.Get("is_error").Bool() && strings.Contains(b.Get("content").Raw, "louter-ok")
					}
					return true
				})
				if ev.Get("type").Str == "result" {
					answered = !ev.Get("is_error").Bool() && strings.Contains(ev.Get("result").Str, "louter-ok")
				}
			}
			if !called || !gotResult || !answered {
				t.Fatalf("qwen-code did not run the command (call: %v, result: %v, answer: %v):\n%s\nstderr:\n%s", called, gotResult, answered, stdout, stderr)
			}

			journal := checkBackendTurn(t, mockPort, backend, "sk-qwen-client-dummy")
			// (An OpenAI Chat backend gets the client's body as it is.)
			if backend == "openai_responses" {
				first := journal[0].Get("body.prompt_cache_key").Str
				for _, req := range journal {
					if got := req.Get("body.prompt_cache_key").Str; got == "" || got != first {
						t.Errorf("prompt_cache_key %q, want the same non-empty key on every turn (first: %q)", got, first)
					}
				}
			}
		})
	}
}

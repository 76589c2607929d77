package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// qwenSettings is qwen-code's $HOME/.qwen/settings.json for a headless,
// offline run with the given auth type (which protocol it speaks; the
// base URL, key and model come from the environment, qwenClients), no
// usage statistics, telemetry or update check.
func qwenSettings(authType string) string {
	return fmt.Sprintf(`{"security":{"auth":{"selectedType":%q}},"privacy":{"usageStatisticsEnabled":false},
 "telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"disableAutoUpdate":true,"disableUpdateNag":true}}`, authType)
}

// qwenClient is one of qwen-code's auth types: the protocol louter
// receives, and the environment that points it at louter's url.
type qwenClient struct {
	protocol string
	env      func(url string) []string
}

// qwenClients are qwen-code 0.24.4's auth types that take a base URL, by
// auth type (its AUTH_ENV_MAPPINGS; the gemini type has no base URL of
// its own and the Google GenAI SDK reads GOOGLE_GEMINI_BASE_URL).
var qwenClients = map[string]qwenClient{
	"openai": {"openai_chat", func(url string) []string {
		return []string{"OPENAI_BASE_URL=" + url + "/v1", "OPENAI_API_KEY=" + qwenClientKey, "OPENAI_MODEL=qwen3-coder-plus"}
	}},
	"openai-responses": {"openai_responses", func(url string) []string {
		return []string{"OPENAI_BASE_URL=" + url + "/v1", "OPENAI_API_KEY=" + qwenClientKey, "OPENAI_MODEL=gpt-5"}
	}},
	"anthropic": {"anthropic", func(url string) []string {
		// A Claude model name: qwen-code then asks for extended thinking
		// and marks four cache breakpoints, as it would toward Anthropic.
		return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=" + qwenClientKey, "ANTHROPIC_MODEL=claude-sonnet-4-5"}
	}},
	"gemini": {"gemini", func(url string) []string {
		return []string{"GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_API_KEY=" + qwenClientKey, "GEMINI_MODEL=gemini-2.5-pro"}
	}},
}

// qwenClientKey is qwen-code's key, in louter's key table as client
// qwenClientName.
const qwenClientKey, qwenClientName = "sk-qwen-client-dummy", "qwen"

// runQwenCode runs qwen-code headless with an auth type against louter's
// url (one backend of the given protocol in front of the mock) and asks it
// to run a shell command: the mock answers with a run_shell_command call,
// qwen-code runs it and sends the output back, which must reach the
// backend as that protocol's tool result. louter has a key table with
// qwen-code's key in it: each auth type's own key header must be read. It
// returns the backend's requests and qwen-code's session id.
func runQwenCode(t *testing.T, authType, backend string) (journal []gjson.Result, session string) {
	t.Helper()
	qwen := agentBinary(t, "qwen")
	// qwen is a node script (#!/usr/bin/env node): the node this test
	// runs with (Node 22 in CI, .ci/run) goes first in its PATH.
	path := "/usr/local/bin:/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path
	}
	sum := sha256.Sum256([]byte(qwenClientKey))
	url, mockPort := startAgentSite(t, backend, "qwen-code-"+authType+"-"+backend,
		"client "+qwenClientName+" {\n\t\t\tkey_sha256 "+hex.EncodeToString(sum[:])+"\n\t\t}")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), []byte(qwenSettings(authType)), 0o644); err != nil {
		t.Fatal(err)
	}
	// runIsolated's HOME and PATH come first; later entries win.
	env := append([]string{"HOME=" + home, "PATH=" + path, "QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}, qwenClients[authType].env(url)...)
	stdout, stderr, err := runIsolated(t, qwen, env, "--yolo", "-o", "stream-json", "--max-wall-time", "150s",
		`Run the shell command "echo louter-ok" and tell me its output.`)
	if err != nil {
		t.Fatalf("qwen failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("qwen-code transcript:\n%s", stdout)

	// qwen-code's own transcript: the shell tool called with the command,
	// its output back as a tool result, and the result.
	var called, gotResult, answered bool
	for _, line := range strings.Split(stdout, "\n") {
		if !gjson.Valid(line) {
			continue
		}
		ev := gjson.Parse(line)
		if id := ev.Get("session_id").Str; id != "" {
			session = id
		}
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
	return checkBackendTurn(t, mockPort, backend, qwenClientKey), session
}

// sameCacheKey checks that every request of a conversation carries the
// same non-empty prompt_cache_key.
func sameCacheKey(t *testing.T, journal []gjson.Result) string {
	t.Helper()
	first := journal[0].Get("body.prompt_cache_key").Str
	for _, req := range journal {
		if got := req.Get("body.prompt_cache_key").Str; got == "" || got != first {
			t.Errorf("prompt_cache_key %q, want the same non-empty key on every turn (first: %q)", got, first)
		}
	}
	return first
}

// TestQwenCodeThroughLouter runs qwen-code with its default OpenAI Chat
// auth type headless against each of the four backend protocols through
// louter. qwen-code sends no session id to a custom base URL, so louter
// keys the conversation by its first turn: a Responses backend gets the
// same prompt_cache_key on every turn.
func TestQwenCodeThroughLouter(t *testing.T) {
	for _, backend := range []string{"openai_chat", "anthropic", "gemini", "openai_responses"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel() // -parallel runs (GOMAXPROCS) at a time: the agent's start-up waits as much as it computes
			journal, _ := runQwenCode(t, "openai", backend)
			// (An OpenAI Chat backend gets the client's body as it is.)
			if backend == "openai_responses" {
				sameCacheKey(t, journal)
			}
		})
	}
}

// TestQwenCodeClientProtocols runs qwen-code with each of its other auth
// types, so that louter receives Anthropic Messages, the Gemini API and
// the Responses API from it, each toward a backend of another protocol
// (and the Gemini API toward its own: the other passthroughs cost a
// qwen-code run each and test louter's passthrough, not these clients). What each sends that matters to louter is in
// docs/agents.md#qwen-code.
func TestQwenCodeClientProtocols(t *testing.T) {
	for _, tc := range []struct {
		auth, backend string
		// check looks at the backend's requests beyond the tool round
		// trip.
		check func(t *testing.T, journal []gjson.Result, session string)
	}{
		// No session id: the conversation's hash keys the Chat
		// backend's prompt_cache_key. qwen-code's cache_control
		// breakpoints have no Chat equivalent but that key; its
		// thinking budget (32000 of 64000 tokens for a Claude model)
		// becomes an effort.
		{"anthropic", "openai_chat", func(t *testing.T, journal []gjson.Result, _ string) {
			sameCacheKey(t, journal)
			if e := journal[0].Get("body.reasoning_effort").Str; e != "high" {
				t.Errorf("reasoning_effort %q, want high (qwen-code's thinking budget_tokens 32000)", e)
			}
		}},
		{"gemini", "anthropic", nil},
		{"gemini", "gemini", nil}, // the one passthrough: the cheapest run
		// qwen-code's own prompt_cache_key, "qwen-code:<session id>",
		// keys the conversation: the Chat backend gets louter's key
		// derived from it (a Responses backend would get qwen-code's
		// own, untouched).
		{"openai-responses", "openai_chat", func(t *testing.T, journal []gjson.Result, session string) {
			if key, want := sameCacheKey(t, journal), clientCacheKey(qwenClientName, "cache:qwen-code:"+session); key != want {
				t.Errorf("prompt_cache_key %q, want %q (from qwen-code's session %s)", key, want, session)
			}
		}},
	} {
		t.Run(tc.auth+"_to_"+tc.backend, func(t *testing.T) {
			t.Parallel()
			journal, session := runQwenCode(t, tc.auth, tc.backend)
			if tc.check != nil {
				tc.check(t, journal, session)
			}
		})
	}
}

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// opencodeConfig is opencode's configuration (OPENCODE_CONFIG_CONTENT)
// for one provider at louter: npm names the AI SDK provider package
// opencode speaks through (bundled in its binary, so nothing is
// installed), baseURL is where that package sends its requests.
func opencodeConfig(t *testing.T, npm, baseURL, model string) string {
	t.Helper()
	cfg := map[string]any{
		"autoupdate": false,
		"share":      "disabled",
		"model":      "louter/" + model,
		"provider": map[string]any{
			"louter": map[string]any{
				"npm":     npm,
				"name":    "louter",
				"options": map[string]any{"baseURL": baseURL, "apiKey": "sk-opencode-client-dummy"},
				"models":  map[string]any{model: map[string]any{"name": model, "tool_call": true}},
			},
		},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpencodeThroughLouter runs opencode headless (opencode run) through
// each of its three provider packages — Anthropic, OpenAI-compatible
// (Chat) and Google — each against a backend of another protocol, so all
// four backend protocols are covered; it asks opencode to run a shell
// command. opencode must run the mock's bash call and send the output
// back, which must reach the backend as that protocol's tool result.
// opencode sends its session id in X-Session-Id whichever package it
// speaks through: on a backend that takes a prompt_cache_key the key must
// be the one derived from that session.
func TestOpencodeThroughLouter(t *testing.T) {
	opencode := agentBinary(t, "opencode")
	for _, tc := range []struct {
		name, npm, path, model, backend string
	}{
		{"anthropic provider to openai_chat", "@ai-sdk/anthropic", "/v1", "claude-sonnet-4-5", "openai_chat"},
		{"google provider to openai_responses", "@ai-sdk/google", "/v1beta", "gemini-2.5-pro", "openai_responses"},
		{"openai-compatible provider to anthropic", "@ai-sdk/openai-compatible", "/v1", "gpt-5.5", "anthropic"},
		{"openai-compatible provider to gemini", "@ai-sdk/openai-compatible", "/v1", "gpt-5.5", "gemini"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // -parallel runs (GOMAXPROCS) at a time: the agent's start-up waits as much as it computes
			url, mockPort := startAgentSite(t, tc.backend, "opencode-"+strings.ReplaceAll(tc.name, " ", "-"))
			// opencode run joins its arguments with spaces and quotes one
			// that holds a space: one word each keeps the prompt as is.
			args := append([]string{"run", "--format", "json", "--auto"},
				strings.Fields(`Run the shell command "echo louter-ok" and tell me its output.`)...)
			stdout, stderr, err := runIsolated(t, opencode, []string{
				"OPENCODE_CONFIG_CONTENT=" + opencodeConfig(t, tc.npm, url+tc.path, tc.model),
				// No models.dev catalogue, update check, LSP download or
				// sharing: nothing to reach but louter.
				"OPENCODE_DISABLE_MODELS_FETCH=1",
				"OPENCODE_DISABLE_AUTOUPDATE=1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
				"OPENCODE_DISABLE_SHARE=1",
			}, args...)
			if err != nil {
				t.Fatalf("opencode failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			t.Logf("opencode transcript:\n%s", stdout)

			// opencode's own transcript: bash ran the command, its output
			// came back, and the answer reports it.
			var ran, answered bool
			var session string
			for _, line := range strings.Split(stdout, "\n") {
				if !gjson.Valid(line) {
					continue
				}
				ev := gjson.Parse(line)
				session = ev.Get("sessionID").Str
				part := ev.Get("part")
				switch ev.Get("type").Str {
				case "tool_use":
					st := part.Get("state")
					ran = ran || part.Get("tool").Str == "bash" && st.Get("status").Str == "completed" &&
						strings.Contains(st.Get("input.command").Str, "echo louter-ok") && strings.Contains(st.Get("output").Str, "louter-ok")
				case "text":
					// The mock repeats the tool result's text: the output
					// itself, whatever wrapper the provider package put
					// around it (@ai-sdk/google's {"name","content"}).
					answered = answered || strings.Contains(part.Get("text").Str, "The command printed: louter-ok")
				}
			}
			if !ran || !answered || session == "" {
				t.Fatalf("opencode did not run the command (ran: %v, answered: %v, session %q):\n%s\nstderr:\n%s", ran, answered, session, stdout, stderr)
			}

			journal := checkBackendTurn(t, mockPort, tc.backend, "sk-opencode-client-dummy")
			if tc.backend == "openai_chat" || tc.backend == "openai_responses" {
				want := sessionCacheKey(session)
				for _, req := range journal {
					if got := req.Get("body.prompt_cache_key").Str; got != want {
						t.Errorf("prompt_cache_key = %q, want %q (from opencode's session %s)", got, want, session)
					}
				}
			}
		})
	}
}

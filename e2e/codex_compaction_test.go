package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// toolHistoryMarker is what a backend request of each protocol holds
// when its history has a tool result.
var toolHistoryMarker = map[string]string{
	"openai_chat": `"tool_call_id"`,
	"anthropic":   `"tool_result"`,
	"gemini":      `"functionResponse"`,
}

// TestCodexAutoCompaction runs Codex 0.169 with its built-in provider and
// model_auto_compact_token_limit set low, through louter to an OpenAI
// Chat, an Anthropic and a Gemini backend, over the WebSocket and over
// HTTP. After the tool call Codex's context is past the limit: it sends a
// create ending with a compaction_trigger and requires exactly one
// compaction item in the answer, which louter makes with its summariser;
// the session then continues with the compacted history (the prompt, the
// item) and completes, and the backend gets the summary in the item's
// place, without the tool call it stands for.
func TestCodexAutoCompaction(t *testing.T) {
	codex := agentBinary(t, "codex")
	for _, protocol := range []string{"openai_chat", "anthropic", "gemini"} {
		for _, ws := range []string{"on", "off"} {
			t.Run(protocol+" websocket "+ws, func(t *testing.T) {
				ports := testcaddy.Start(t, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		stored_responses {
			websocket %s
		}
		backend mock {
			protocol %s
			api_key backend-secret
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name codex-compaction-%s-%s
	}
}
`, ws, protocol, protocol, ws))
				tap := &frameTap{target: fmt.Sprintf("127.0.0.1:%d", ports[0])}
				srv := httptest.NewServer(tap)
				t.Cleanup(srv.Close)
				codexHome := t.TempDir()
				// Codex's own prompt is past 2000 tokens: the first
				// answer puts the session past the limit.
				config := strings.Replace(fmt.Sprintf(codexBuiltinConfig, srv.URL+"/v1"), "[analytics]", "model_auto_compact_token_limit = 2000\n[analytics]", 1)
				if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
					t.Fatal(err)
				}
				stdout, stderr, err := runIsolated(t, codex, []string{
					"CODEX_HOME=" + codexHome,
					"OPENAI_API_KEY=sk-codex-client-dummy",
					"CODEX_API_KEY=sk-codex-client-dummy",
				}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", echoPrompt)
				if err != nil {
					t.Fatalf("codex failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
				}
				var ran, answered bool
				for _, line := range strings.Split(stdout, "\n") {
					item := gjson.Parse(line).Get("item")
					switch item.Get("type").Str {
					case "command_execution":
						ran = ran || strings.Contains(item.Get("aggregated_output").Str, "louter-ok")
					case "agent_message":
						answered = answered || strings.Contains(item.Get("text").Str, "louter-ok")
					}
				}
				if !ran || !answered {
					t.Fatalf("Codex did not complete the session (ran %v, answered %v):\n%s\nstderr:\n%s", ran, answered, stdout, stderr)
				}

				tap.mu.Lock()
				sent, posts := tap.sent, tap.posts
				tap.mu.Unlock()
				for _, p := range posts {
					if strings.HasSuffix(p, "/compact") {
						t.Errorf("Codex called %s; it was seen to compact with a compaction_trigger", p)
					}
				}
				if ws == "on" {
					// On the socket the wire is visible: the trigger,
					// then a turn carrying louter's compaction item.
					trigger, item := -1, -1
					for i, s := range sent {
						in := gjson.Get(s, "input").Array()
						for j, it := range in {
							switch {
							case it.Get("type").Str == "compaction_trigger" && j == len(in)-1 && trigger < 0:
								trigger = i
							case it.Get("type").Str == "compaction" && strings.HasPrefix(it.Get("encrypted_content").Str, "louter_cmp_") && item < 0:
								item = i
							}
						}
					}
					if trigger < 0 || item <= trigger {
						t.Errorf("frames: the trigger at %d, the compaction item at %d; want the trigger, then the item:\n%s", trigger, item, strings.Join(sent, "\n"))
					}
				}

				// The backend: the summary turn, then the compacted turn,
				// whose history is the prompt and the summary, not the
				// tool call and its result.
				journal := mockJournal(t, ports[1]).Array()
				summary := -1
				for i, req := range journal {
					if strings.Contains(req.Get("body").Raw, "handoff summary") {
						summary = i
						break
					}
				}
				if summary < 0 || summary+1 >= len(journal) {
					t.Fatalf("no summary turn followed by a turn among the %d backend requests", len(journal))
				}
				next := journal[summary+1].Get("body").Raw
				if !strings.Contains(next, "Summary of the conversation so far") || !strings.Contains(next, "The command printed: ") ||
					!strings.Contains(next, "echo louter-ok") || strings.Contains(next, toolHistoryMarker[protocol]) || strings.Contains(next, "louter_cmp_") {
					t.Errorf("the turn after the compaction did not carry the compacted history:\n%s", next)
				}
				t.Logf("%d backend requests, the summary turn at %d; %d frames on the socket, %d plain requests", len(journal), summary, len(sent), len(posts))
			})
		}
	}
}

package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestClaudeCodeThroughOpenModelDialects runs Claude Code against mock
// backends that answer like self-hosted open models whose server did not
// parse the model's output: tool calls and reasoning arrive as text in the
// content, cut into chunks of a few bytes. louter's dialect parser must turn
// them into a real tool call for Claude Code to run.
func TestClaudeCodeThroughOpenModelDialects(t *testing.T) {
	claude := agentBinary(t, "claude")
	tests := []struct {
		name          string
		dialect       string // the louter backend's dialect block
		mockDialect   string // what the mock answers in
		toolsInPrompt bool
	}{
		{
			name:        "qwen3_coder",
			dialect:     "tool_calls qwen3_coder\n\t\t\t\treasoning think",
			mockDialect: "qwen3_coder think",
		},
		{
			name:          "hermes tools in prompt",
			dialect:       "tool_calls hermes\n\t\t\t\ttools_in_prompt",
			mockDialect:   "hermes",
			toolsInPrompt: true,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend local {
			protocol openai_chat
			max_tokens 8192
			dialect {
				`+tt.dialect+`
			}
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * local
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		# mocks of one name share a journal: one per subtest
		name open-model-`+strconv.Itoa(i)+`
		dialect `+tt.mockDialect+`
	}
}
`)
			runClaudeEcho(t, claude, testcaddy.URL(ports[0]))

			// The backend really got text-dialect answers' round trip: the
			// tool result came back, as a tool message or, with tools in
			// the prompt, as a <tool_response> in a user message.
			journal := mockJournal(t, ports[1]).Array()
			if len(journal) < 2 {
				t.Fatalf("backend saw %d requests, want at least 2", len(journal))
			}
			var sawResult, sawTools bool
			for i, req := range journal {
				body := req.Get("body")
				if tools := body.Get("tools"); tools.Exists() {
					sawTools = true
					if tt.toolsInPrompt {
						t.Errorf("backend request %d carries tools: %.300s", i, tools.Raw)
					}
				}
				body.Get("messages").ForEach(func(_, m gjson.Result) bool {
					content := m.Get("content").Raw
					switch {
					case m.Get("role").String() == "tool" && strings.Contains(content, "louter-ok"):
						sawResult = true
					case m.Get("role").String() == "user" && strings.Contains(content, "<tool_response>") && strings.Contains(content, "louter-ok"):
						sawResult = true
					}
					return true
				})
			}
			if !sawResult {
				t.Errorf("no backend request carried the tool result:\n%s", journal[len(journal)-1].Raw)
			}
			if !tt.toolsInPrompt && !sawTools {
				t.Errorf("no backend request carried a tools field")
			}
		})
	}
}

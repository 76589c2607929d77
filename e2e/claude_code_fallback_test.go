package e2e

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestClaudeCodeFallback runs Claude Code through louter on a route whose
// Anthropic backend is overloaded (every answer a 529) and which falls back
// to an OpenAI Chat backend: Claude Code must finish with the backup's
// answer as if nothing had happened, without retrying on its side.
func TestClaudeCodeFallback(t *testing.T) {
	claude := agentBinary(t, "claude")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model * anth {
			fallback oai gpt-backup
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name overloaded-primary
		default_scenario error_overloaded
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name openai-backup
		default_scenario text
	}
}
`)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	stdout, stderr, _ := runIsolated(t, claude, []string{
		"ANTHROPIC_BASE_URL=" + testcaddy.URL(ports[0]) + "/anthropic",
		"ANTHROPIC_API_KEY=sk-ant-client-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_UPDATES=1",
		"DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"IS_SANDBOX=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	}, "-p", "Say hello.", "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose")
	var result gjson.Result
	for _, line := range strings.Split(stdout, "\n") {
		if r := gjson.Parse(line); gjson.Valid(line) && r.Get("type").Str == "result" {
			result = r
		}
	}
	if !result.Exists() || result.Get("is_error").Bool() || !strings.Contains(result.Get("result").Str, "Hello from louter_mock (openai-backup).") {
		t.Fatalf("Claude Code did not finish with the backup's answer:\n%s\nstderr:\n%s", stdout, stderr)
	}
	primary, backup := 0, 0
	for _, req := range mockJournal(t, ports[1]).Array() {
		if !strings.Contains(req.Get("path").Str, "count_tokens") {
			primary++
		}
	}
	for _, req := range mockJournal(t, ports[2]).Array() {
		if strings.HasSuffix(req.Get("path").Str, "/chat/completions") {
			backup++
		}
	}
	// The primary is tried until its failures put it in cooldown.
	if primary < 1 || primary > 3 || backup < 1 {
		t.Errorf("primary received %d chat requests, backup %d", primary, backup)
	}
	t.Logf("primary %d requests, backup %d", primary, backup)
}

package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// overflowRun is what Claude Code did with a backend that reports a
// context overflow on every request.
type overflowRun struct {
	requests int    // requests the backend received
	isError  bool   // the final result is an error
	result   string // the final result's text
	stdout   string
}

// ownEstimate matches Claude Code's estimate of the conversation's size in
// its overflow report.
var ownEstimate = regexp.MustCompile(`only ~\d+ tokens`)

// runClaudeOverflow runs Claude Code headless against baseURL with a prompt
// whose marker makes louter_mock answer every request with its overflow
// error, and reports what it did. mockPort is the mock's port, for its
// journal.
func runClaudeOverflow(t *testing.T, claude, baseURL string, mockPort int) overflowRun {
	t.Helper()
	stdout, stderr, _ := runIsolated(t, claude, []string{
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=sk-ant-client-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_UPDATES=1",
		"DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"IS_SANDBOX=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}, "-p", `Summarise this very long document. [mock:overflow]`,
		"--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose")
	run := overflowRun{stdout: stdout}
	for _, line := range strings.Split(stdout, "\n") {
		if r := gjson.Parse(line); gjson.Valid(line) && r.Get("type").Str == "result" {
			run.isError = r.Get("is_error").Bool()
			// Claude Code's own estimate of the conversation's size
			// varies by a few tokens with the base URL it was given.
			run.result = ownEstimate.ReplaceAllString(r.Get("result").Str, "only ~N tokens")
		}
	}
	for _, req := range mockJournal(t, mockPort).Array() {
		if strings.Contains(req.Get("path").Str, "count_tokens") {
			continue
		}
		run.requests++
	}
	t.Logf("%s: %d backend requests, is_error %v, result %q\nstderr:\n%s", baseURL, run.requests, run.isError, run.result, stderr)
	return run
}

// TestClaudeCodeContextOverflow records what Claude Code does when an
// Anthropic-speaking backend reports "prompt is too long" directly, and
// checks it does the same through louter when the overflow comes from an
// OpenAI Chat backend and from a Gemini backend in their own words.
func TestClaudeCodeContextOverflow(t *testing.T) {
	claude := agentBinary(t, "claude")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model * oai
	}
}
:{PORT4} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT3}
		}
		model * gem
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name claude-overflow-direct
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name claude-overflow-openai
	}
}
:{PORT3} {
	bind 127.0.0.1
	louter_mock {
		name claude-overflow-gemini
	}
}
`)
	for _, p := range ports[1:] {
		testcaddy.WaitListening(t, p)
	}
	// Directly, Claude Code (2.1.x) reads the figures out of Anthropic's
	// message and, the conversation being a single exchange it cannot
	// compact, ends with: "Prompt is too long · the request is ~250000
	// tokens (limit 200000) but this conversation is only ~N tokens …".
	direct := runClaudeOverflow(t, claude, testcaddy.URL(ports[1]), ports[1])
	if !direct.isError || !strings.Contains(direct.result, "~250000 tokens (limit 200000)") {
		t.Fatalf("directly, Claude Code did not report the overflow with its figures:\n%s", direct.stdout)
	}
	for _, via := range []struct {
		name            string
		louter, backend int
	}{{"openai_chat", ports[0], ports[2]}, {"gemini", ports[4], ports[3]}} {
		t.Run(via.name, func(t *testing.T) {
			got := runClaudeOverflow(t, claude, testcaddy.URL(via.louter)+"/anthropic", via.backend)
			if got.requests != direct.requests || got.isError != direct.isError || got.result != direct.result {
				t.Errorf("through louter from %s: %d requests, is_error %v, result %q; directly: %d, %v, %q",
					via.name, got.requests, got.isError, got.result, direct.requests, direct.isError, direct.result)
			}
		})
	}
}

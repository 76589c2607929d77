package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// agentBinary returns the path of an npm-installed agent CLI, skipping the
// test when it is not installed (and failing in CI, where .ci/run installs it).
func agentBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run must run `npm ci --prefix e2e` first", name)
		}
		t.Skipf("%s is not installed: run `npm ci --prefix e2e`", name)
	}
	return p
}

// mockJournal returns the requests the mock backend received, oldest first.
func mockJournal(t *testing.T, port int) gjson.Result {
	t.Helper()
	resp, err := testcaddy.Client.Get(testcaddy.URL(port) + "/_mock/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !gjson.ValidBytes(body) {
		t.Fatalf("mock journal: %d %s", resp.StatusCode, body)
	}
	return gjson.ParseBytes(body)
}

// runIsolated runs an agent with a fresh HOME, TMPDIR and working folder,
// only the given environment, no standard input and a time limit.
func runIsolated(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runIn(t, t.TempDir(), t.TempDir(), bin, env, args...)
}

// runIn is runIsolated with the given HOME and working folder, for a test
// that runs an agent again on what an earlier run left there.
func runIn(t *testing.T, home, work, bin string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	cmd.Env = append([]string{
		"HOME=" + home,
		"TMPDIR=" + t.TempDir(),
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		// Belt and braces on top of the network namespace: anything that
		// honours a proxy goes to a dead loopback port.
		"HTTPS_PROXY=http://127.0.0.1:9",
		"HTTP_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost",
	}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, nil
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// TestClaudeCodeThroughOpenAIBackend runs Claude Code, which speaks only
// Anthropic Messages, against an OpenAI Chat backend through louter, and asks
// it to run a shell command. The mock backend answers the first turn with a
// Bash tool call; Claude Code must run it and send the result back, which
// reaches the backend as an OpenAI tool message.
func TestClaudeCodeThroughOpenAIBackend(t *testing.T) {
	claude := agentBinary(t, "claude")
	url, mockPort := startAgentSite(t, "openai_chat", "claude-e2e")
	runClaudeEcho(t, claude, url+"/anthropic")

	// The backend side: OpenAI Chat requests, one carrying the tool result
	// as a tool message; the configured key, never the client's.
	for _, req := range checkBackendTurn(t, mockPort, "openai_chat", "sk-ant-client-dummy") {
		if auth := req.Get("headers.Authorization").String(); !strings.Contains(auth, "Bearer backend-secret") {
			t.Errorf("backend Authorization = %q, want the configured key", auth)
		}
		// Claude Code's context_management (clear_thinking, keep all) is
		// applied by louter, not sent to a backend that has no such member.
		if cm := req.Get("body.context_management"); cm.Exists() {
			t.Errorf("context_management reached the OpenAI backend: %s", cm.Raw)
		}
	}
}

// TestClaudeCodeThroughBedrock runs Claude Code against Claude on AWS
// Bedrock (InvokeModel, event-stream) through louter, which signs every
// request with SigV4; the mock recomputes each signature. The tool result
// must reach Bedrock in the InvokeModel body.
func TestClaudeCodeThroughBedrock(t *testing.T) {
	claude := agentBinary(t, "claude")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend bedrock {
			protocol bedrock
			`+bedrockE2EAuth+`
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * bedrock us.anthropic.claude-sonnet-4-5-20250929-v1:0
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name claude-e2e-bedrock
		`+bedrockE2EMock+`
	}
}
`)
	runClaudeEcho(t, claude, testcaddy.URL(ports[0])+"/anthropic")
	journal := mockJournal(t, ports[1]).Array()
	var sawResult bool
	for _, req := range journal {
		if p := req.Get("protocol").String(); p != "bedrock" {
			t.Errorf("backend request in protocol %q, want bedrock", p)
		}
		if !strings.HasPrefix(req.Get("headers.Authorization").String(), "AWS4-HMAC-SHA256 Credential=AKIDE2ETEST/") {
			t.Errorf("backend request not SigV4-signed: %s", req.Get("headers").Raw)
		}
		sawResult = sawResult || anthropicToolResult(req.Get("body"))
		// Bedrock applies Claude Code's context_management itself, given
		// its beta in the body.
		if typ := req.Get("body.context_management.edits.0.type").Str; typ != "clear_thinking_20251015" {
			t.Errorf("Bedrock body context_management = %s, want Claude Code's", req.Get("body.context_management").Raw)
		}
		if betas := req.Get("body.anthropic_beta").Raw; !strings.Contains(betas, `"context-management-2025-06-27"`) {
			t.Errorf("Bedrock body anthropic_beta = %s, want context-management-2025-06-27", betas)
		}
	}
	if len(journal) < 2 || !sawResult {
		t.Fatalf("no Bedrock request carried the tool result (%d requests)", len(journal))
	}
}

// runClaude runs Claude Code headless (-p, stream-json) against baseURL
// with env added, fails the test if it fails, and returns its output.
func runClaude(t *testing.T, claude, baseURL, prompt string, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runIsolated(t, claude, append(claudeEnv(baseURL), env...), claudeArgs(prompt, args)...)
	if err != nil {
		t.Fatalf("claude failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return stdout, stderr
}

// claudeArgs are the arguments of a headless Claude Code run of prompt.
func claudeArgs(prompt string, args []string) []string {
	return append([]string{"-p", prompt,
		"--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose"}, args...)
}

// claudeEnv is the environment of a headless Claude Code run against
// baseURL: a dummy key, no telemetry, updates or surveys.
func claudeEnv(baseURL string) []string {
	return []string{
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
	}
}

// runClaudeEcho runs Claude Code headless against baseURL, asks it to run
// "echo louter-ok", and fails the test unless Claude Code's own transcript
// shows the Bash tool called with that command and its output coming back.
func runClaudeEcho(t *testing.T, claude, baseURL string) {
	t.Helper()
	stdout, stderr := runClaude(t, claude, baseURL, `Run the shell command "echo louter-ok" and tell me its output.`, nil)

	t.Logf("Claude Code transcript:\n%s", stdout)
	var ranBash, gotResult bool
	for _, line := range strings.Split(stdout, "\n") {
		if !gjson.Valid(line) {
			continue
		}
		msg := gjson.Parse(line)
		msg.Get("message.content").ForEach(func(_, block gjson.Result) bool {
			switch block.Get("type").String() {
			case "tool_use":
				if block.Get("name").String() == "Bash" && strings.Contains(block.Get("input.command").String(), "echo louter-ok") {
					ranBash = true
				}
			case "tool_result":
				if strings.Contains(block.Get("content").Raw, "louter-ok") {
					gotResult = true
				}
			}
			return true
		})
	}
	if !ranBash || !gotResult {
		t.Fatalf("Claude Code did not run the tool (tool_use seen: %v, result seen: %v):\n%s\nstderr:\n%s", ranBash, gotResult, stdout, stderr)
	}
}

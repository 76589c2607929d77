package e2e

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// codexConfig is Codex's config.toml for a local Responses endpoint
// (/work/shared/clients/README.md): the model is pinned, because without
// one Codex switches to a different wire shape; nothing but the provider is
// contacted.
const codexConfig = `model = "gpt-5.5"
model_provider = "local"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
[model_providers.local]
name = "local"
base_url = %q
env_key = "LOCAL_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
[features]
plugins = false
remote_plugin = false
apps = false
`

// TestCodexThroughLouter runs Codex CLI, which speaks only the Responses
// API, against an OpenAI Chat backend and an Anthropic backend through
// louter, and asks it to run a shell command. The mock backend answers the
// first turn with an exec_command call; Codex must run it and send the
// output back, which reaches the backend as that protocol's tool result.
func TestCodexThroughLouter(t *testing.T) {
	codex := agentBinary(t, "codex")
	for _, tc := range []struct {
		name, protocol string
		// dialect is the louter backend's dialect block and the mock's
		// dialect line, for a backend that leaves its markup in the text.
		dialect, mockDialect string
		// toolResult finds the command's output in a backend request body.
		toolResult func(body gjson.Result) bool
		// auth replaces the backend's api_key line (Bedrock's SigV4, which
		// the mock verifies with the credentials of its mockDialect line).
		auth string
	}{
		{name: "openai_chat", protocol: "openai_chat", toolResult: chatToolResult},
		// gpt-oss, Codex's local model, behind a server that leaves its
		// harmony channels in the content.
		{name: "openai_chat gpt-oss harmony", protocol: "openai_chat", toolResult: chatToolResult,
			dialect: "dialect {\n\t\t\t\treasoning harmony\n\t\t\t\treasoning_history reasoning_content\n\t\t\t}", mockDialect: "dialect harmony"},
		{name: "anthropic", protocol: "anthropic", toolResult: anthropicToolResult},
		// Claude on AWS Bedrock (InvokeModel), every request SigV4-signed
		// and checked by the mock.
		{name: "bedrock", protocol: "bedrock", toolResult: anthropicToolResult, auth: bedrockE2EAuth, mockDialect: bedrockE2EMock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ports := testcaddy.Start(t, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol %s
			%s
			%s
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name codex-e2e-%s
		%s
	}
}
`, tc.protocol, cmp.Or(tc.auth, "api_key backend-secret"), tc.dialect, strings.ReplaceAll(tc.name, " ", "-"), tc.mockDialect))
			codexHome := t.TempDir()
			config := fmt.Sprintf(codexConfig, testcaddy.URL(ports[0])+"/codex/v1")
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := runIsolated(t, codex, []string{
				"CODEX_HOME=" + codexHome,
				"LOCAL_API_KEY=sk-codex-client-dummy",
			}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
				`Run the shell command "echo louter-ok" and tell me its output.`)
			if err != nil {
				t.Fatalf("codex failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			t.Logf("Codex transcript:\n%s", stdout)

			// Codex's own transcript: the command ran, printed louter-ok,
			// and the final answer reports it.
			var ran, answered bool
			for _, line := range strings.Split(stdout, "\n") {
				if !gjson.Valid(line) {
					continue
				}
				ev := gjson.Parse(line)
				if ev.Get("type").Str != "item.completed" {
					continue
				}
				item := ev.Get("item")
				switch item.Get("type").Str {
				case "command_execution":
					ran = ran || strings.Contains(item.Get("command").Str, "echo louter-ok") && strings.Contains(item.Get("aggregated_output").Str, "louter-ok")
				case "agent_message":
					answered = answered || strings.Contains(item.Get("text").Str, "louter-ok")
				}
			}
			if !ran || !answered {
				t.Fatalf("Codex did not run the command (ran: %v, answered: %v):\n%s\nstderr:\n%s", ran, answered, stdout, stderr)
			}

			// The backend side: requests in the backend's protocol, one
			// carrying the command's output as a tool result; the client's
			// key never reached it.
			journal := mockJournal(t, ports[1]).Array()
			if len(journal) < 2 {
				t.Fatalf("backend saw %d requests, want at least 2", len(journal))
			}
			var sawResult bool
			for _, req := range journal {
				if p := req.Get("protocol").Str; p != tc.protocol {
					t.Errorf("backend request in protocol %q, want %s", p, tc.protocol)
				}
				if strings.Contains(req.Get("headers").Raw, "sk-codex-client-dummy") {
					t.Errorf("the client's API key reached the backend: %s", req.Get("headers").Raw)
				}
				sawResult = sawResult || tc.toolResult(req.Get("body"))
			}
			if !sawResult {
				t.Fatalf("no backend request carried the command's output as a tool result:\n%s", journal[len(journal)-1].Raw)
			}
		})
	}
}

// A Bedrock backend signing with static SigV4 keys, and the mock line
// that makes the mock verify them.
const (
	bedrockE2EAuth = `auth aws_sigv4 {
				region us-east-1
				access_key_id AKIDE2ETEST
				secret_access_key e2e-bedrock-secret
			}`
	bedrockE2EMock = "bedrock_sigv4 AKIDE2ETEST e2e-bedrock-secret region us-east-1"
)

package e2e

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// geminiSettings is Gemini CLI's $HOME/.gemini/settings.json for a headless,
// offline run: all four keys matter (without selectedType a base URL makes
// it exit 41, "Invalid auth method selected").
const geminiSettings = `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},
 "telemetry":{"enabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":2}}`

// runGeminiCLI runs Gemini CLI headless against louter with its own HOME
// holding the settings, and returns its stream-json transcript.
func runGeminiCLI(t *testing.T, louterURL string, extraArgs ...string) (string, string, error) {
	t.Helper()
	gemini := agentBinary(t, "gemini")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--skip-trust", "-p", `Run the shell command "echo louter-ok" and tell me its output.`, "--yolo", "-o", "stream-json"}, extraArgs...)
	// runIsolated's HOME comes first; a later HOME entry wins in exec.
	return runIsolated(t, gemini, []string{
		"HOME=" + home,
		"GOOGLE_GEMINI_BASE_URL=" + louterURL,
		"GEMINI_API_KEY=gemini-client-dummy",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, args...)
}

// TestGeminiCLI runs Gemini CLI, which speaks only the Gemini API, against
// an OpenAI Chat backend and an Anthropic backend through louter, and asks
// it to run a shell command: the mock answers with a run_shell_command
// call, Gemini CLI runs it and sends its output back, which must reach the
// backend as that protocol's tool result. Once with -m (one request per
// turn) and once without, where every turn starts with Gemini CLI's
// structured-output routing call.
func TestGeminiCLI(t *testing.T) {
	for _, tt := range []struct {
		name, protocol string
		args           []string
		// dialect is the louter backend's dialect block and the mock's
		// dialect line, for a self-hosted model that writes its tool calls
		// and reasoning as text.
		dialect, mockDialect string
		// auth replaces the backend's api_key line.
		auth string
	}{
		{name: "openai_chat", protocol: "openai_chat", args: []string{"-m", "gemini-2.5-pro"}},
		{name: "anthropic", protocol: "anthropic", args: []string{"-m", "gemini-2.5-pro"}},
		{name: "bedrock", protocol: "bedrock", args: []string{"-m", "gemini-2.5-pro"}, auth: bedrockE2EAuth, mockDialect: bedrockE2EMock},
		{name: "openai_chat/router", protocol: "openai_chat"},
		{name: "openai_chat/qwen3-hermes", protocol: "openai_chat", args: []string{"-m", "gemini-2.5-pro"},
			dialect: "dialect {\n\t\t\t\ttool_calls hermes\n\t\t\t\treasoning think\n\t\t\t}", mockDialect: "dialect hermes think"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol `+tt.protocol+`
			`+cmp.Or(tt.auth, "api_key backend-secret")+`
			`+tt.dialect+`
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		# One journal per case: journals are kept per mock name.
		name gemini-cli-`+strings.ReplaceAll(tt.name, "/", "-")+`
		`+tt.mockDialect+`
	}
}
`)
			stdout, stderr, err := runGeminiCLI(t, testcaddy.URL(ports[0]), tt.args...)
			if err != nil {
				t.Fatalf("gemini failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			t.Logf("Gemini CLI transcript:\n%s", stdout)

			// Gemini CLI's own transcript: the shell tool ran and
			// printed louter-ok.
			var ranShell, gotResult bool
			for _, line := range strings.Split(stdout, "\n") {
				if !gjson.Valid(line) {
					continue
				}
				ev := gjson.Parse(line)
				switch ev.Get("type").Str {
				case "tool_use":
					if ev.Get("tool_name").Str == "run_shell_command" && strings.Contains(ev.Get("parameters.command").Str, "echo louter-ok") {
						ranShell = true
					}
				case "tool_result":
					if ev.Get("status").Str == "success" && strings.Contains(ev.Raw, "louter-ok") {
						gotResult = true
					}
				}
			}
			if !ranShell || !gotResult {
				t.Fatalf("Gemini CLI did not run the tool (tool_use: %v, result: %v):\n%s\nstderr:\n%s", ranShell, gotResult, stdout, stderr)
			}

			// The backend: requests in its protocol, the client's key
			// never among them, and the command's output in a tool result.
			journal := mockJournal(t, ports[1]).Array()
			if len(journal) < 2 {
				t.Fatalf("backend saw %d requests, want at least 2", len(journal))
			}
			var sawResult, sawRouter bool
			for _, req := range journal {
				if p := req.Get("protocol").Str; p != tt.protocol {
					t.Errorf("backend request in protocol %q, want %s", p, tt.protocol)
				}
				if strings.Contains(req.Get("headers").Raw, "gemini-client-dummy") || strings.Contains(req.Get("query").Str, "gemini-client-dummy") {
					t.Errorf("the client's API key reached the backend: %s", req.Get("headers").Raw)
				}
				body := req.Get("body")
				if body.Get("response_format.type").Str == "json_schema" || body.Get("tools").Raw == "" && strings.Contains(body.Raw, "model_choice") {
					sawRouter = true
				}
				body.Get("messages").ForEach(func(_, m gjson.Result) bool {
					switch tt.protocol {
					case "openai_chat":
						if m.Get("role").Str == "tool" && strings.Contains(m.Get("content").Raw, "louter-ok") {
							sawResult = true
						}
					case "anthropic", "bedrock":
						m.Get("content").ForEach(func(_, c gjson.Result) bool {
							if c.Get("type").Str == "tool_result" && strings.Contains(c.Get("content").Raw, "louter-ok") {
								sawResult = true
							}
							return true
						})
					}
					return true
				})
			}
			if !sawResult {
				t.Fatalf("no backend request carried the tool result:\n%s", journal[len(journal)-1].Raw)
			}
			if tt.args == nil && !sawRouter {
				t.Errorf("no routing call reached the backend")
			}
		})
	}
}

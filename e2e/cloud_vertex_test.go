package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/cloudmock"
	"github.com/louter/louter/internal/testcaddy"
)

// vertexCaddyfile is louter with a Vertex AI Claude backend and a Vertex
// AI Gemini backend, both authenticated with a service account key whose
// tokens internal/cloudmock's endpoint issues, in front of the Vertex-
// shaped front (which passes on to louter_mock).
const vertexCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend claude {
			protocol vertex_anthropic
			vertex {
				project test-project
				location us-east5
			}
			auth google {
				credentials_file %[1]s
			}
			reverse_proxy %[2]s
		}
		backend gemini {
			protocol vertex_gemini
			vertex {
				project test-project
				location us-east5
			}
			auth google {
				credentials_file %[1]s
			}
			reverse_proxy %[2]s
		}
		model %[3]s %[4]s %[5]s
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name %[6]s
	}
}
`

// startVertex starts the token endpoint, the front and louter routing
// every model to backend (claude or gemini) as rename.
func startVertex(t *testing.T, backend, rename, mockName string) (louter string, front *cloudmock.Front, google *cloudmock.Google) {
	t.Helper()
	google = cloudmock.NewGoogle(t)
	ports := testcaddy.FreePorts(t, 2)
	front = (&cloudmock.Front{Mock: testcaddy.URL(ports[1]), Google: google, Project: "test-project", Location: "us-east5"}).Start(t)
	cf := fmt.Sprintf(vertexCaddyfile, google.WriteCredentials(t, t.TempDir()), strings.TrimPrefix(front.URL, "http://"), "*", backend, rename, mockName)
	cf = strings.NewReplacer("{PORT0}", fmt.Sprint(ports[0]), "{PORT1}", fmt.Sprint(ports[1])).Replace(cf)
	testcaddy.Start(t, cf)
	testcaddy.WaitListening(t, ports[0])
	testcaddy.WaitListening(t, ports[1])
	return testcaddy.URL(ports[0]), front, google
}

// checkVertexFront fails unless the front served every request (none
// refused), each at the backend's Vertex path with an issued token.
func checkVertexFront(t *testing.T, front *cloudmock.Front, google *cloudmock.Google, pathPart string) {
	t.Helper()
	reqs := front.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the Vertex front got %d requests, want a tool round trip", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != 0 || !strings.HasPrefix(r.Path, "/v1/projects/test-project/locations/us-east5/publishers/") || !strings.Contains(r.Path, pathPart) {
			t.Errorf("front: %s %s answered %d", r.Method, r.Path, r.Status)
		}
	}
	if !strings.Contains(reqs[len(reqs)-1].Body, "louter-ok") {
		t.Errorf("the last request does not carry the tool's output: %s", reqs[len(reqs)-1].Body)
	}
	if n := len(google.Issued()); n != 1 {
		t.Errorf("%d tokens issued for the session, want 1", n)
	}
}

// TestClaudeCodeThroughVertex: Claude Code completes a Bash tool round
// trip against Claude on Vertex AI.
func TestClaudeCodeThroughVertex(t *testing.T) {
	claude := agentBinary(t, "claude")
	louter, front, google := startVertex(t, "claude", "claude-sonnet-4-5@20250929", "vertex-claude-code")
	runClaudeEcho(t, claude, louter+"/anthropic")
	checkVertexFront(t, front, google, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:")
}

// TestGeminiCLIThroughVertex: Gemini CLI completes a shell tool round
// trip against Gemini on Vertex AI.
func TestGeminiCLIThroughVertex(t *testing.T) {
	louter, front, google := startVertex(t, "gemini", "gemini-2.5-pro", "vertex-gemini-cli")
	stdout, stderr, err := runGeminiCLI(t, louter, "-m", "gemini-2.5-pro")
	if err != nil {
		t.Fatalf("gemini failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	var ranShell bool
	for _, line := range strings.Split(stdout, "\n") {
		ev := gjson.Parse(line)
		if ev.Get("type").Str == "tool_result" && ev.Get("status").Str == "success" && strings.Contains(ev.Raw, "louter-ok") {
			ranShell = true
		}
	}
	if !ranShell {
		t.Fatalf("Gemini CLI did not run the tool:\n%s\nstderr:\n%s", stdout, stderr)
	}
	checkVertexFront(t, front, google, "/publishers/google/models/gemini-2.5-pro:")
}

// TestCodexThroughVertex: Codex completes an exec_command round trip
// against Claude on Vertex AI.
func TestCodexThroughVertex(t *testing.T) {
	codex := agentBinary(t, "codex")
	louter, front, google := startVertex(t, "claude", "claude-sonnet-4-5@20250929", "vertex-codex")
	codexHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(codexConfig, louter+"/codex/v1")), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runIsolated(t, codex, []string{"CODEX_HOME=" + codexHome, "LOCAL_API_KEY=sk-codex-client-dummy"},
		"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
		`Run the shell command "echo louter-ok" and tell me its output.`)
	if err != nil {
		t.Fatalf("codex failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	var ran bool
	for _, line := range strings.Split(stdout, "\n") {
		item := gjson.Parse(line).Get("item")
		if item.Get("type").Str == "command_execution" && strings.Contains(item.Get("aggregated_output").Str, "louter-ok") {
			ran = true
		}
	}
	if !ran {
		t.Fatalf("Codex did not run the command:\n%s\nstderr:\n%s", stdout, stderr)
	}
	checkVertexFront(t, front, google, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:")
}

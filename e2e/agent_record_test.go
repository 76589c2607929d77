package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/record"
)

var updateRecordings = flag.Bool("update-recordings", false, "rewrite the agent recordings under testdata/recordings")

// recordingsDir holds the recordings kept as regression fixtures (replayed
// by record/fixtures_test.go).
const recordingsDir = "../testdata/recordings"

// TestAgentRecordings runs each agent CLI through louter with record on,
// against the mock on an OpenAI Chat backend, and checks the recording: one
// record per request the mock answered, no credential in it, and every
// record replays through the current translators with no difference. With
// -update-recordings it keeps the recording, made deterministic enough to
// diff (ids, times and temporary paths replaced), as testdata/recordings/
// <agent>.jsonl.
func TestAgentRecordings(t *testing.T) {
	for _, tc := range []struct {
		agent string
		run   func(t *testing.T, louterURL string)
		// secrets are the agent's client key and the backend's.
		secrets []string
	}{
		{"claude-code", runClaudeRecorded, []string{"sk-ant-client-dummy"}},
		{"codex", runCodexRecorded, []string{"sk-codex-client-dummy"}},
		{"gemini-cli", runGeminiRecorded, []string{"gemini-client-dummy"}},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			dir := t.TempDir()
			ports := testcaddy.Start(t, fmt.Sprintf(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend mock {
			protocol openai_chat
			api_key backend-secret-record-0001
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * mock
		record %q
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name record-%s
	}
}
`, dir, tc.agent))
			tc.run(t, testcaddy.URL(ports[0]))
			answered := len(mockJournal(t, ports[1]).Array())
			raw, xs := waitRecording(t, dir, answered)
			for _, s := range append(tc.secrets, "backend-secret-record-0001") {
				if bytes.Contains(raw, []byte(s)) {
					t.Errorf("the recording carries %q", s)
				}
			}
			var report bytes.Buffer
			if s := record.ReplayReport(&report, xs, record.ReportOptions{}); s.Differ > 0 || s.Skipped > 0 || s.Replayed != answered {
				t.Errorf("replay: %+v\n%s", s, report.String())
			}
			if *updateRecordings {
				keep(t, filepath.Join(recordingsDir, tc.agent+".jsonl"), tc.agent, raw)
			}
		})
	}
}

// The agents run in fixed folders rather than t.TempDir's: their paths
// are in the requests (system prompts, tool calls), and a path that
// changes from run to run would change the recording, the input token
// estimates louter announces included.

// agentDirs returns a fresh HOME, working folder and TMPDIR for agent
// under a fixed root, removed when the test ends.
func agentDirs(t *testing.T, agent string) (home, work, tmp string) {
	t.Helper()
	root := filepath.Join(os.TempDir(), "louter-record-"+agent)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	home, work, tmp = filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "tmp")
	for _, d := range []string{home, work, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return home, work, tmp
}

// runAgent runs an agent as runIsolated does, in agentDirs' folders.
func runAgent(t *testing.T, agent, bin string, env []string, args ...string) string {
	t.Helper()
	home, work, tmp := agentDirs(t, agent)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	cmd.Env = append([]string{
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HTTPS_PROXY=http://127.0.0.1:9",
		"HTTP_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost",
	}, env...)
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME_FILE="); ok { // name=content, written under HOME
			name, content, _ := strings.Cut(v, "=")
			p := filepath.Join(home, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, nil
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s failed: %v\nstdout:\n%s\nstderr:\n%s", agent, err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "louter-ok") {
		t.Fatalf("%s did not run the command:\n%s\nstderr:\n%s", agent, out.String(), errb.String())
	}
	return out.String()
}

const echoPrompt = `Run the shell command "echo louter-ok" and tell me its output.`

// runClaudeRecorded runs Claude Code headless, as runClaudeEcho does.
func runClaudeRecorded(t *testing.T, louterURL string) {
	runAgent(t, "claude-code", agentBinary(t, "claude"), []string{
		"ANTHROPIC_BASE_URL=" + louterURL + "/anthropic",
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
	}, "-p", echoPrompt, "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose")
}

// runCodexRecorded runs Codex against louter's Responses endpoint, as
// TestCodexThroughLouter does; its config is written under HOME.
func runCodexRecorded(t *testing.T, louterURL string) {
	runAgent(t, "codex", agentBinary(t, "codex"), []string{
		"HOME_FILE=.codex/config.toml=" + fmt.Sprintf(codexConfig, louterURL+"/codex/v1"),
		"CODEX_HOME=" + filepath.Join(os.TempDir(), "louter-record-codex", "home", ".codex"),
		"LOCAL_API_KEY=sk-codex-client-dummy",
	}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", echoPrompt)
}

// runGeminiRecorded runs Gemini CLI with one model (-m), as runGeminiCLI
// does.
func runGeminiRecorded(t *testing.T, louterURL string) {
	runAgent(t, "gemini-cli", agentBinary(t, "gemini"), []string{
		"HOME_FILE=.gemini/settings.json=" + geminiSettings,
		"GOOGLE_GEMINI_BASE_URL=" + louterURL,
		"GEMINI_API_KEY=gemini-client-dummy",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, "--skip-trust", "-p", echoPrompt, "--yolo", "-o", "stream-json", "-m", "gemini-2.5-pro")
}

// waitRecording waits, up to 10 s, for n records in dir (the writer is
// asynchronous) and returns the raw lines and the records.
func waitRecording(t *testing.T, dir string, n int) ([]byte, []*record.Exchange) {
	t.Helper()
	var raw []byte
	for range 200 {
		raw = nil
		files, _ := record.Files(dir)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, data...)
		}
		if bytes.Count(raw, []byte("\n")) >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	xs, err := record.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != n {
		t.Fatalf("%d records for the %d requests the mock answered", len(xs), n)
	}
	return raw, xs
}

// Run-specific text in a recording: the record ids and times.
var (
	recordID = regexp.MustCompile(`"id":"[0-9a-f-]{36}"`)
	recordAt = regexp.MustCompile(`"time":"[^"]*"`)
)

// keep writes a recording as a fixture, with the run-specific text
// replaced: record ids (agent-NN) and times (a fixed date, one second
// apart). Event timings are kept as they were. Nothing in the bodies is
// changed: the replay must see what louter translated.
func keep(t *testing.T, path, agent string, raw []byte) {
	t.Helper()
	var out bytes.Buffer
	n := 0
	for line := range bytes.Lines(raw) {
		n++
		line = recordID.ReplaceAll(line, fmt.Appendf(nil, `"id":"%s-%02d"`, agent, n))
		line = recordAt.ReplaceAll(line, fmt.Appendf(nil, `"time":"2026-01-01T00:00:%02dZ"`, n))
		out.Write(line)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d records, %d bytes", path, n, out.Len())
}

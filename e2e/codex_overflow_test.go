package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// runCodexOverflow runs Codex against baseURL with a prompt whose marker
// makes louter_mock answer with its overflow error, in the wording named,
// and returns the error messages of Codex's JSON transcript.
func runCodexOverflow(t *testing.T, codex, baseURL, wording string) []string {
	t.Helper()
	codexHome := t.TempDir()
	config := fmt.Sprintf(codexConfig, baseURL)
	config = strings.Replace(config, "[analytics]", fmt.Sprintf("http_headers = { \"X-Mock-Overflow\" = %q }\n[analytics]", wording), 1)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, _ := runIsolated(t, codex, []string{
		"CODEX_HOME=" + codexHome,
		"LOCAL_API_KEY=sk-codex-client-dummy",
	}, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
		`Summarise this very long document. [mock:overflow]`)
	var errs []string
	for _, line := range strings.Split(stdout, "\n") {
		if !gjson.Valid(line) {
			continue
		}
		ev := gjson.Parse(line)
		switch ev.Get("type").Str {
		case "error":
			errs = append(errs, ev.Get("message").Str)
		case "turn.failed":
			errs = append(errs, ev.Get("error.message").Str)
		}
	}
	t.Logf("%s (%s): errors %q\nstdout:\n%s\nstderr:\n%s", baseURL, wording, errs, stdout, stderr)
	return errs
}

// TestCodexContextOverflow records what Codex reports when a Responses
// backend refuses the prompt as too long for the context window, and checks
// it reports the same through louter when llama.cpp behind an OpenAI Chat
// backend or Gemini refuses it in their own words.
func TestCodexContextOverflow(t *testing.T) {
	codex := agentBinary(t, "codex")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model gpt-5.5 oai
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model gpt-5.5 gem
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name codex-overflow
	}
}
`)
	testcaddy.WaitListening(t, ports[1])
	direct := runCodexOverflow(t, codex, testcaddy.URL(ports[1])+"/v1", "responses")
	// Directly, Codex (0.169) recognises context_length_exceeded and
	// reports "Codex ran out of room in the model's context window. …".
	if len(direct) == 0 || !strings.Contains(direct[0], "context window") {
		t.Fatalf("directly, Codex did not report a context overflow: %q", direct)
	}
	for _, via := range []struct{ name, url, wording string }{
		{"openai_chat llama.cpp", testcaddy.URL(ports[0]) + "/codex/v1", "llamacpp"},
		{"gemini", testcaddy.URL(ports[2]) + "/codex/v1", "gemini"},
	} {
		t.Run(via.name, func(t *testing.T) {
			got := runCodexOverflow(t, codex, via.url, via.wording)
			if strings.Join(got, "\n") != strings.Join(direct, "\n") {
				t.Errorf("through louter: %q\ndirectly: %q", got, direct)
			}
		})
	}
}

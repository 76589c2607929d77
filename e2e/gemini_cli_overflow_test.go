package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// runGeminiOverflow runs Gemini CLI against baseURL with a prompt whose
// marker makes louter_mock answer with its overflow error, and returns the
// error messages of its stream-json transcript and the requests the mock
// received.
func runGeminiOverflow(t *testing.T, gemini, baseURL string, mockPort int) (errs []string, requests int) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, _ := runIsolated(t, gemini, []string{
		"HOME=" + home,
		"GOOGLE_GEMINI_BASE_URL=" + baseURL,
		"GEMINI_API_KEY=gemini-client-dummy",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, "--skip-trust", "-p", "Summarise this very long document. [mock:overflow]", "--yolo", "-o", "stream-json", "-m", "gemini-2.5-pro")
	for _, line := range strings.Split(stdout, "\n") {
		if !gjson.Valid(line) {
			continue
		}
		ev := gjson.Parse(line)
		if m := ev.Get("error.message").Str; m != "" {
			errs = append(errs, m)
		} else if ev.Get("type").Str == "error" {
			errs = append(errs, ev.Get("message").Str)
		}
	}
	requests = len(mockJournal(t, mockPort).Array())
	t.Logf("%s: %d requests, errors %q\nstdout:\n%s\nstderr:\n%s", baseURL, requests, errs, stdout, stderr)
	return errs, requests
}

// TestGeminiCLIContextOverflow records what Gemini CLI reports when the
// Gemini API refuses the prompt as too long (0.61: it ends the turn with
// "[API Error: {…The input token count (N) exceeds the maximum number of
// tokens allowed (M)…}]", after one request), and checks it reports the same
// through louter when an Anthropic or an OpenAI Chat backend refuses it in
// their own words.
func TestGeminiCLIContextOverflow(t *testing.T) {
	gemini := agentBinary(t, "gemini")
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT3}
		}
		model * anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT4}
		}
		model * oai
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name gemini-cli-overflow-direct
	}
}
:{PORT3} {
	bind 127.0.0.1
	louter_mock {
		name gemini-cli-overflow-anthropic
	}
}
:{PORT4} {
	bind 127.0.0.1
	louter_mock {
		name gemini-cli-overflow-openai
	}
}
`)
	for _, p := range ports[2:] {
		testcaddy.WaitListening(t, p)
	}
	direct, directN := runGeminiOverflow(t, gemini, testcaddy.URL(ports[2]), ports[2])
	if !strings.Contains(strings.Join(direct, "\n"), "The input token count (250000) exceeds the maximum number of tokens allowed (200000).") {
		t.Fatalf("directly, Gemini CLI did not report the overflow: %q", direct)
	}
	for _, via := range []struct {
		name           string
		louter, mockAt int
	}{{"anthropic", ports[0], ports[3]}, {"openai_chat", ports[1], ports[4]}} {
		t.Run(via.name, func(t *testing.T) {
			got, n := runGeminiOverflow(t, gemini, testcaddy.URL(via.louter), via.mockAt)
			if strings.Join(got, "\n") != strings.Join(direct, "\n") || n != directN {
				t.Errorf("through louter: %d requests, %q\ndirectly: %d, %q", n, got, directN, direct)
			}
		})
	}
}

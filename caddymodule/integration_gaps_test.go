package caddymodule_test

// Integration tests of translation details that only show across protocols:
// Gemini's includeThoughts, long tool names, Anthropic thinking signatures
// through OpenAI Chat clients, Responses answers sent only in
// response.completed, and what the Responses object echoes.

import (
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const gapsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		backend oai {
			protocol openai_chat
			api_key oai-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			api_key resp-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			api_key gem-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model via-openai* oai backend-model
		model via-anthropic* anth backend-model
		model via-responses* resp backend-model
		model via-gemini* gem backend-model
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name gaps-mock
		fixtures_dir ../testdata
	}
}
`

func startGapsEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, gapsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

// TestGeminiIncludeThoughtsAsksToThink: a genai client that sets only
// includeThoughts gets thinking from backends that think only when asked.
func TestGeminiIncludeThoughtsAsksToThink(t *testing.T) {
	e := startGapsEnv(t)
	cfg := &genai.GenerateContentConfig{
		MaxOutputTokens: 16000,
		ThinkingConfig:  &genai.ThinkingConfig{IncludeThoughts: true},
	}
	for _, tt := range []struct {
		model string
		want  map[string]string // backend body path -> value
	}{
		{"via-anthropic-1", map[string]string{"thinking.type": "enabled", "thinking.budget_tokens": "8192"}},
		{"via-responses-1", map[string]string{"reasoning.effort": "medium", "reasoning.summary": "auto"}},
	} {
		for _, stream := range []bool{false, true} {
			e.clearJournals()
			r, _, err := callGemini(t, e, tt.model, "reasoning", stream, nil, cfg)
			if err != nil {
				t.Fatalf("%s stream %v: %v", tt.model, stream, err)
			}
			if r.thinking == "" {
				t.Errorf("%s stream %v: no thoughts reached the client", tt.model, stream)
			}
			body := e.onlyBackendRequest().Get("body")
			for path, want := range tt.want {
				if got := body.Get(path).String(); got != want {
					t.Errorf("%s stream %v: backend %s = %q, want %q", tt.model, stream, path, got, want)
				}
			}
		}
	}
}

// TestResponsesBackendCompletedOnly: a Responses backend that sends its
// whole answer only in response.completed (no item events) reaches
// streaming and non-streaming clients whole.
func TestResponsesBackendCompletedOnly(t *testing.T) {
	e := startGapsEnv(t)
	const scenario = "fixture=openai_responses/completed_only.sse"
	for _, stream := range []bool{false, true} {
		for name, call := range map[string]func() (result, error){
			"anthropic":   func() (result, error) { return callAnthropic(e, "via-responses-1", scenario, stream) },
			"openai_chat": func() (result, error) { return callOpenAI(e, "via-responses-1", scenario, stream) },
		} {
			r, err := call()
			if err != nil {
				t.Fatalf("%s stream %v: %v", name, stream, err)
			}
			if r.text != "Let me look that up." || !slices.Equal(r.toolNames, []string{"get_weather"}) || r.stop != "tool_use" || r.out != 25 {
				t.Errorf("%s stream %v: %+v", name, stream, r)
			}
			if name == "anthropic" && r.thinking != "Checking the weather." {
				t.Errorf("%s stream %v: thinking %q", name, stream, r.thinking)
			}
		}
	}
}

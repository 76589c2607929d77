package caddymodule_test

// Integration test of count_tokens with Anthropic's context_management on
// backends without context editing: the Anthropic SDK's beta CountTokens,
// through a real Caddy, counts the request after the clearing edits, and
// the answer reports the count before them (original_input_tokens), as
// Anthropic's does. A compaction past its trigger is counted uncompacted:
// no model is asked for a summary.

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/testcaddy"
)

func TestIntegrationCountTokensContextEdits(t *testing.T) {
	ports := testcaddy.Start(t, contextEditsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	client := anthropicClient(e, "text")
	const rounds = 6 // 6 tool uses of 3000 bytes: past clear_tool_uses' trigger of 4; Bash's older 2 are cleared

	// count returns the beta count of contextSession's request for
	// model, with its clear_tool_uses edit (clear) and a compact edit
	// whose 2000-token trigger the session is past (compact).
	count := func(model string, clear, compact bool) *anthropic.BetaMessageTokensCount {
		t.Helper()
		p := contextSession(model, rounds)
		cp := anthropic.BetaMessageCountTokensParams{Model: p.Model, Messages: p.Messages, Tools: []anthropic.BetaMessageCountTokensParamsToolUnion{}, Betas: p.Betas}
		if clear {
			cp.ContextManagement = p.ContextManagement
		}
		if compact {
			cp.Betas = append(cp.Betas, "compact-2026-01-12")
			cp.ContextManagement.Edits = append(cp.ContextManagement.Edits, compactSession(model).ContextManagement.Edits...)
		}
		n, err := client.Beta.Messages.CountTokens(context.Background(), cp)
		if err != nil {
			t.Fatalf("count %s (clear %v, compact %v): %v", model, clear, compact, err)
		}
		return n
	}
	original := func(n *anthropic.BetaMessageTokensCount) int64 {
		if !n.JSON.ContextManagement.Valid() {
			return -1
		}
		return n.ContextManagement.OriginalInputTokens
	}

	// Counted locally (an OpenAI Chat backend has no counting endpoint):
	// the edited request's count, and the original's.
	e.clearJournals()
	full := count("via-openai", false, false)
	if original(full) != -1 {
		t.Errorf("a count without context_management reports %s", full.RawJSON())
	}
	for _, compact := range []bool{false, true} {
		edited := count("via-openai", true, compact)
		if edited.InputTokens >= full.InputTokens-1000 {
			t.Errorf("compact %v: count with the edits = %d, without = %d: want over 1000 fewer", compact, edited.InputTokens, full.InputTokens)
		}
		if o := original(edited); o != full.InputTokens {
			t.Errorf("compact %v: original_input_tokens = %d, want %d (the count without the edits): %s", compact, o, full.InputTokens, edited.RawJSON())
		}
	}
	// A compaction past its trigger alone: nothing cleared, counted as
	// sent, the original the same.
	p := contextSession("via-openai", rounds)
	cp := anthropic.BetaMessageCountTokensParams{Model: p.Model, Messages: p.Messages, Tools: []anthropic.BetaMessageCountTokensParamsToolUnion{}, Betas: []anthropic.AnthropicBeta{"compact-2026-01-12"},
		ContextManagement: compactSession("via-openai").ContextManagement}
	n, err := client.Beta.Messages.CountTokens(context.Background(), cp)
	if err != nil {
		t.Fatalf("count past a compaction trigger: %v", err)
	}
	if n.InputTokens != full.InputTokens || original(n) != full.InputTokens {
		t.Errorf("count past a compaction trigger = %s, want %d tokens, the original the same", n.RawJSON(), full.InputTokens)
	}
	if reqs := e.backendRequests(); len(reqs) != 0 {
		t.Errorf("the backend got %d requests (a summary?), want none", len(reqs))
	}

	// Counted by the backend (Gemini's countTokens, and a Messages API
	// server set to polyfill, which on main got the client's request
	// passed through, edits not applied): it gets the edited request,
	// without context_management, and the answer adds what the edits
	// cleared, by the local count.
	for _, model := range []string{"via-gemini", "via-messages-server"} {
		t.Run(model, func(t *testing.T) {
			e.clearJournals()
			n := count(model, true, true)
			reqs := e.backendRequests()
			if len(reqs) != 1 {
				t.Fatalf("the backend got %d requests, want the count", len(reqs))
			}
			body := reqs[0].Get("body").Raw
			if strings.Count(body, "[tool result cleared by context management]") != 2 || strings.Contains(body, "context_management") {
				t.Errorf("backend count request = %.800s", body)
			}
			if n.InputTokens < mock.CountBase || original(n) < n.InputTokens+1000 {
				t.Errorf("count = %s, want the backend's count and an original over 1000 more", n.RawJSON())
			}
		})
	}

	// A backend that edits itself counts itself: it gets the client's
	// context_management, and its answer is passed on.
	e.clearJournals()
	if n := count("via-anthropic", true, false); n.InputTokens < mock.CountBase || original(n) != -1 {
		t.Errorf("native count = %s, want the backend's answer as it is", n.RawJSON())
	}
	if reqs := e.backendRequests(); len(reqs) != 1 || !reqs[0].Get("body.context_management").Exists() {
		t.Errorf("native backend count requests = %v, want one with context_management", reqs)
	}
}

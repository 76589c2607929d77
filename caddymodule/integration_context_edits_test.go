package caddymodule_test

// Integration test of Anthropic's context editing on backends without it:
// an Anthropic SDK client with a long tool session and context_management
// edits, through a real Caddy, to OpenAI Chat and Gemini backends (louter
// applies the edits), an Anthropic backend (it gets them as sent) and a
// Messages API server set to polyfill (louter applies them there too).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const contextEditsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		backend oai {
			protocol openai_chat
			api_key oai-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			api_key gem-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend messages-server {
			protocol anthropic
			api_key local-key
			context_management polyfill
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai-off {
			protocol openai_chat
			api_key oai-backend-key
			context_management off
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model via-openai oai backend-model
		model via-gemini gem backend-model
		model via-anthropic anth backend-model
		model via-messages-server messages-server backend-model
		model via-openai-off oai-off backend-model
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name ctx-mock
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`

// contextSession is a Claude Code-like session of n Read/Bash rounds with
// 3000-byte results, then a question, with a clear_tool_uses edit that
// keeps the newest 2 tool uses and never clears Read.
func contextSession(model string, n int) anthropic.BetaMessageNewParams {
	msgs := []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("look around"))}
	for i := range n {
		name := []string{"Bash", "Read"}[i%2]
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs,
			anthropic.BetaMessageParam{Role: anthropic.BetaMessageParamRoleAssistant, Content: []anthropic.BetaContentBlockParamUnion{
				anthropic.NewBetaToolUseBlock(id, map[string]any{"arg": fmt.Sprintf("call %d", i)}, name)}},
			anthropic.NewBetaUserMessage(anthropic.NewBetaToolResultBlock(id, fmt.Sprintf("result %d ", i)+strings.Repeat("y", 3000), false)))
	}
	msgs = append(msgs, anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("what did you find?")))
	tool := func(name string) anthropic.BetaToolUnionParam {
		return anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{Name: name, InputSchema: anthropic.BetaToolInputSchemaParam{Properties: map[string]any{"arg": map[string]any{"type": "string"}}}}}
	}
	return anthropic.BetaMessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 1024, Messages: msgs,
		Tools: []anthropic.BetaToolUnionParam{tool("Bash"), tool("Read")},
		Betas: []anthropic.AnthropicBeta{"context-management-2025-06-27"},
		ContextManagement: anthropic.BetaContextManagementConfigParam{Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{
			OfClearToolUses20250919: &anthropic.BetaClearToolUses20250919EditParam{
				Trigger:         anthropic.BetaClearToolUses20250919EditTriggerUnionParam{OfToolUses: &anthropic.BetaToolUsesTriggerParam{Value: 4}},
				Keep:            anthropic.BetaToolUsesKeepParam{Value: 2},
				ExcludeTools:    []string{"Read"},
				ClearToolInputs: anthropic.BetaClearToolUses20250919EditClearToolInputsUnionParam{OfBool: anthropic.Bool(true)},
			}}}},
	}
}

// sendBeta sends params with the SDK's beta client and returns the
// message, streamed or not.
func sendBeta(t *testing.T, e *env, params anthropic.BetaMessageNewParams, stream bool) (*anthropic.BetaMessage, error) {
	t.Helper()
	client := anthropicClient(e, "text")
	ctx := context.Background()
	if !stream {
		return client.Beta.Messages.New(ctx, params)
	}
	var msg anthropic.BetaMessage
	s := client.Beta.Messages.NewStreaming(ctx, params)
	var delta gjson.Result
	for s.Next() {
		ev := s.Current()
		if ev.Type == "message_delta" {
			delta = gjson.Parse(ev.RawJSON())
		}
		if err := msg.Accumulate(ev); err != nil {
			return nil, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	// The accumulated message takes context_management from message_delta.
	if cm := delta.Get("context_management"); cm.Exists() {
		if err := msg.ContextManagement.UnmarshalJSON([]byte(cm.Raw)); err != nil {
			return nil, err
		}
	}
	return &msg, nil
}

func TestIntegrationContextEdits(t *testing.T) {
	ports := testcaddy.Start(t, contextEditsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	metrics := testcaddy.URL(ports[2]) + "/metrics"

	// 8 rounds: Bash 0, Read 1, ..., Read 7. The newest 2 are kept, Read is
	// never cleared: Bash 0, 2 and 4 are cleared, inputs included.
	const rounds = 8
	for _, tt := range []struct {
		model, backend string
		applied        bool   // louter applied the edits and reports them
		results        string // gjson path of the backend's tool results, one per round
		native         bool   // the backend got context_management as sent
	}{
		{"via-openai", "oai", true, `body.messages.#(role=="tool")#.content`, false},
		{"via-gemini", "gem", true, `body.contents.#.parts.#.functionResponse.response.output|@flatten`, false},
		{"via-messages-server", "messages-server", true, `body.messages.#.content.#(type=="tool_result")#.content|@flatten`, false},
		{"via-anthropic", "anth", false, `body.messages.#.content.#(type=="tool_result")#.content|@flatten`, true},
		{"via-openai-off", "oai-off", false, `body.messages.#(role=="tool")#.content`, false},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.model, stream), func(t *testing.T) {
				e.clearJournals()
				label := `backend="` + tt.backend + `"`
				m := testcaddy.Scrape(t, metrics)
				reqs, drops := testcaddy.Sum(m, "louter_requests_total", label), testcaddy.Sum(m, "louter_dropped_fields_total", label)
				msg, err := sendBeta(t, e, contextSession(tt.model, rounds), stream)
				if err != nil {
					t.Fatal(err)
				}
				// The clearing (or, off, the member left out) is one dropped
				// field, counted once the exchange has ended.
				for deadline := time.Now().Add(3 * time.Second); testcaddy.Sum(m, "louter_requests_total", label) == reqs && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					m = testcaddy.Scrape(t, metrics)
				}
				wantDrops := 1.0
				if tt.native {
					wantDrops = 0
				}
				if d := testcaddy.Sum(m, "louter_dropped_fields_total", label) - drops; d != wantDrops {
					t.Errorf("louter_dropped_fields_total moved by %v for %s, want %v", d, tt.backend, wantDrops)
				}
				body := e.onlyBackendRequest().Get("body")
				results := e.onlyBackendRequest().Get(tt.results).Array()
				if len(results) != rounds {
					t.Fatalf("backend got %d tool results at %s, want %d", len(results), tt.results, rounds)
				}
				var got []string
				for _, r := range results {
					s := r.String()
					switch {
					case strings.Contains(s, "tool result cleared by context management"):
						got = append(got, "c")
					case strings.Contains(s, "yyyy"):
						got = append(got, "k")
					default:
						got = append(got, "?")
					}
				}
				want := "kkkkkkkk"
				if tt.applied {
					want = "ckckckkk"
				}
				if strings.Join(got, "") != want {
					t.Errorf("tool results = %s, want %s", strings.Join(got, ""), want)
				}
				if cm := body.Get("context_management"); cm.Exists() != tt.native {
					t.Errorf("backend context_management = %s, want it only on the native backend", cm.Raw)
				}
				applied := msg.ContextManagement.AppliedEdits
				if !tt.applied {
					if len(applied) != 0 {
						t.Errorf("applied_edits = %s, want none", msg.ContextManagement.RawJSON())
					}
					return
				}
				if len(applied) != 1 {
					t.Fatalf("applied_edits = %s, want one clear_tool_uses edit", msg.ContextManagement.RawJSON())
				}
				a := applied[0].AsClearToolUses20250919()
				if a.Type != "clear_tool_uses_20250919" || a.ClearedToolUses != 3 || a.ClearedInputTokens < 1000 {
					// 9000 bytes of one letter: ~1500 tokens by louter's estimate.
					t.Errorf("applied edit = %s, want 3 tool uses and over 1000 tokens", applied[0].RawJSON())
				}
			})
		}
	}

	// count_tokens counts the request as louter sends it: with the edits
	// applied, fewer tokens than without them.
	count := func(withEdits bool) int64 {
		t.Helper()
		p := contextSession("via-openai", rounds)
		cp := anthropic.BetaMessageCountTokensParams{Model: p.Model, Messages: p.Messages, Betas: p.Betas}
		if withEdits {
			cp.ContextManagement = p.ContextManagement
		}
		client := anthropicClient(e, "text")
		n, err := client.Beta.Messages.CountTokens(context.Background(), cp)
		if err != nil {
			t.Fatal(err)
		}
		return n.InputTokens
	}
	if edited, full := count(true), count(false); edited >= full-1000 {
		t.Errorf("count_tokens with the edits = %d, without = %d: want over 1000 fewer", edited, full)
	}

	// An edit type louter does not know is the client's 400 naming it,
	// on a backend where louter applies the edits; the backend is not
	// asked.
	e.clearJournals()
	client := anthropicClient(e, "text")
	_, err := client.Beta.Messages.New(context.Background(), contextSession("via-openai", 2),
		aoption.WithJSONSet("context_management.edits.1", map[string]any{"type": "clear_everything_20990101"}))
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		t.Fatalf("unknown edit type: %v, want an API error", err)
	}
	if m := gjson.Get(ae.RawJSON(), "error.message").Str; ae.StatusCode != 400 || gjson.Get(ae.RawJSON(), "error.type").Str != "invalid_request_error" ||
		!strings.Contains(m, `context_management.edits.1.type: unknown context management edit type "clear_everything_20990101"`) {
		t.Errorf("unknown edit type: %d %s", ae.StatusCode, ae.RawJSON())
	}
	if n := len(e.backendRequests()); n != 0 {
		t.Errorf("the backend got %d requests, want none", n)
	}
}

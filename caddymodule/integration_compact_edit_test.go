package caddymodule_test

// Integration test of Anthropic's compact_20260112 edit on a backend
// without context editing: an Anthropic SDK client past the edit's
// trigger, through a real Caddy, to an OpenAI Chat backend on the mock.
// louter asks the backend for a summary of the history, sends the summary
// in its place, and answers with the compaction block first; the client
// sends the block back on the next turn.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// compactSession is contextSession with a compact_20260112 edit whose
// trigger (2000 tokens) the 8 rounds' 24 kB of results are past.
func compactSession(model string) anthropic.BetaMessageNewParams {
	p := contextSession(model, 8)
	p.Betas = []anthropic.AnthropicBeta{"compact-2026-01-12"}
	p.ContextManagement = anthropic.BetaContextManagementConfigParam{Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{
		OfCompact20260112: &anthropic.BetaCompact20260112EditParam{
			Trigger:      anthropic.BetaInputTokensTriggerParam{Value: 2000},
			Instructions: anthropic.String("Keep the tool names."),
		}}}}
	return p
}

func TestIntegrationCompactEdit(t *testing.T) {
	ports := testcaddy.Start(t, contextEditsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	const summary = "Hello from louter_mock (ctx-mock)." // the mock's answer, to the summary request too

	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e.clearJournals()
			params := compactSession("via-openai")
			msg, err := sendBeta(t, e, params, stream)
			if err != nil {
				t.Fatal(err)
			}
			reqs := e.backendRequests()
			if len(reqs) != 2 {
				t.Fatalf("the backend got %d requests, want the summary's and the turn's", len(reqs))
			}
			// The summary request: the history before the newest user
			// turn, then the request for a summary with the instructions.
			sum, turn := reqs[0].Get("body"), reqs[1].Get("body")
			msgs := sum.Get("messages").Array()
			last := msgs[len(msgs)-1].Raw
			if !strings.Contains(last, "You are compacting this conversation") || !strings.Contains(last, "Keep the tool names.") ||
				!strings.Contains(sum.Raw, "yyyy") || strings.Contains(sum.Raw, "what did you find?") || sum.Get("stream").Bool() {
				t.Errorf("summary request = %.600s … %s", sum.Raw, last)
			}
			// The turn: the summary instead of the old history.
			if strings.Contains(turn.Raw, "yyyy") || !strings.Contains(turn.Get("messages.0").Raw, summary) ||
				!strings.Contains(turn.Get("messages.0").Raw, "what did you find?") || turn.Get("messages.#(role==\"tool\")").Exists() {
				t.Errorf("turn request messages = %s", turn.Get("messages").Raw)
			}
			if turn.Get("stream").Bool() != stream {
				t.Errorf("turn request stream = %v, want %v", turn.Get("stream").Bool(), stream)
			}
			// The answer: the compaction block first, then the model's.
			if len(msg.Content) != 2 || msg.Content[0].Type != "compaction" || gjson.Get(msg.RawJSON(), "content.0.content").Str != summary ||
				msg.Content[1].Type != "text" || msg.Content[1].Text != summary {
				t.Fatalf("content = %s", gjson.Get(msg.RawJSON(), "content").Raw)
			}
			applied := gjson.Get(msg.ContextManagement.RawJSON(), "applied_edits")
			if applied.Get("#").Int() != 1 || applied.Get("0.type").Str != "compact_20260112" || applied.Get("0.cleared_input_tokens").Int() < 1500 {
				t.Errorf("applied_edits = %s", applied.Raw)
			}

			// The next turn: the client sends the compaction block back;
			// the backend gets the summary, the answer and the new
			// question, and no second summary is asked for.
			e.clearJournals()
			params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("and then?")))
			next, err := sendBeta(t, e, params, stream)
			if err != nil {
				t.Fatal(err)
			}
			turn = e.onlyBackendRequest().Get("body")
			var roles []string
			for _, m := range turn.Get("messages").Array() {
				roles = append(roles, m.Get("role").Str)
			}
			if strings.Join(roles, ",") != "user,assistant,user" || strings.Contains(turn.Raw, "yyyy") ||
				!strings.Contains(turn.Get("messages.0").Raw, summary) || !strings.Contains(turn.Get("messages.2").Raw, "and then?") {
				t.Errorf("next turn messages = %s", turn.Get("messages").Raw)
			}
			if len(next.Content) != 1 || next.Content[0].Type != "text" {
				t.Errorf("next turn content = %s", gjson.Get(next.RawJSON(), "content").Raw)
			}
			if n := gjson.Get(next.ContextManagement.RawJSON(), "applied_edits.#").Int(); n != 0 {
				t.Errorf("next turn applied_edits = %s, want none", next.ContextManagement.RawJSON())
			}
		})

		// pause_after_compaction: the summary is asked for, the turn is
		// not; the answer is the compaction block alone.
		t.Run(fmt.Sprintf("pause/stream=%v", stream), func(t *testing.T) {
			e.clearJournals()
			params := compactSession("via-openai")
			params.ContextManagement.Edits[0].OfCompact20260112.PauseAfterCompaction = anthropic.Bool(true)
			msg, err := sendBeta(t, e, params, stream)
			if err != nil {
				t.Fatal(err)
			}
			last := e.onlyBackendRequest().Get("body.messages.@reverse.0").Raw
			if !strings.Contains(last, "You are compacting this conversation") {
				t.Errorf("the backend's only request ends with %s, want the summary request", last)
			}
			if msg.StopReason != "compaction" || len(msg.Content) != 1 || msg.Content[0].Type != "compaction" ||
				gjson.Get(msg.RawJSON(), "content.0.content").Str != summary {
				t.Errorf("answer = %s", msg.RawJSON())
			}
			if gjson.Get(msg.ContextManagement.RawJSON(), "applied_edits.0.type").Str != "compact_20260112" {
				t.Errorf("applied_edits = %s", msg.ContextManagement.RawJSON())
			}
		})
	}
}

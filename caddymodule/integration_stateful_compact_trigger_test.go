package caddymodule_test

// Codex's remote compaction through a real Caddy: a create whose last
// input item is a compaction_trigger is answered, on a Chat, an Anthropic
// and a Gemini backend, with exactly one compaction item (JSON, SSE and
// over the WebSocket), made by the summariser /v1/responses/compact uses;
// the next turn carrying the item gets the summary in its place. A
// Responses backend gets the request as sent.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// triggerInput is compactableInput with a compaction_trigger last.
func triggerInput() string {
	return strings.TrimSuffix(compactableInput(), "]") + `,{"type":"compaction_trigger"}]`
}

// checkCompactionAnswer fails t unless final is a completed response
// whose output is one louter compaction item, with usage.
func checkCompactionAnswer(t *testing.T, final gjson.Result) gjson.Result {
	t.Helper()
	item := final.Get("output.0")
	if final.Get("status").Str != "completed" || final.Get("output.#").Int() != 1 || item.Get("type").Str != "compaction" ||
		!strings.HasPrefix(item.Get("id").Str, "cmp_") || !strings.HasPrefix(item.Get("encrypted_content").Str, "louter_cmp_") ||
		final.Get("usage.output_tokens").Int() == 0 {
		t.Fatalf("the answer to a compaction_trigger: %s", final.Raw)
	}
	return item
}

// checkSummaryRequest fails t unless reqs is the one summary turn of
// triggerInput's history.
func checkSummaryRequest(t *testing.T, reqs []gjson.Result) {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("backend requests: %d, want the summary turn alone", len(reqs))
	}
	if sum := reqs[0].Get("body").Raw; !strings.Contains(sum, "assistant-filler") || !strings.Contains(sum, "louter-tail-question") ||
		!strings.Contains(sum, "handoff summary") || strings.Contains(sum, "compaction_trigger") {
		t.Errorf("the summary request: %s", sum)
	}
}

func TestResponsesCompactionTrigger(t *testing.T) {
	e := startResponsesEnv(t)
	for _, model := range []string{"resp-via-openai-1", "resp-via-anthropic-1", "resp-via-gemini-1"} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", model, stream), func(t *testing.T) {
				e.clearJournals()
				body := fmt.Sprintf(`{"model":%q,"store":false,"instructions":"be brief","input":%s}`, model, triggerInput())
				o, err := callResponses(e, "text", stream, rawParams(body))
				if err != nil {
					t.Fatal(err)
				}
				item := checkCompactionAnswer(t, o.final)
				if stream && strings.Join(o.events, " ") != "response.created response.in_progress response.output_item.added response.output_item.done response.completed" {
					t.Errorf("the events: %v", o.events)
				}
				checkSummaryRequest(t, e.backendRequests())

				// Codex's next turn: its user messages, the item, then
				// the new items; the backend gets the summary instead.
				e.clearJournals()
				next := fmt.Sprintf(`{"model":%q,"store":false,"input":[{"role":"user","content":"step 0 please"},%s,{"role":"user","content":"after-compaction"}]}`, model, item.Raw)
				if _, err := callResponses(e, "text", stream, rawParams(next)); err != nil {
					t.Fatal(err)
				}
				got := e.onlyBackendRequest().Get("body").Raw
				if !strings.Contains(got, "Summary of the conversation so far") || !strings.Contains(got, "Hello from louter_mock") ||
					!strings.Contains(got, "after-compaction") || strings.Contains(got, "louter_cmp_") || strings.Contains(got, "assistant-filler") {
					t.Errorf("the turn after the compaction: %s", got)
				}
			})
		}
	}

	t.Run("websocket", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.clearJournals()
		c := dialResponses(t, ctx, e, "text")
		defer c.CloseNow()
		// As Codex does: a turn, then the trigger continuing it on the
		// socket (store false), with the tool output it had to send.
		evs := wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"resp-via-anthropic-1","store":false,"input":%s}`, compactableInput()))
		id := evs[len(evs)-1].Get("response.id").Str
		e.clearJournals()
		evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"resp-via-anthropic-1","store":false,"previous_response_id":%q,"input":[{"type":"compaction_trigger"}]}`, id))
		var types []string
		for _, ev := range evs {
			types = append(types, ev.Get("type").Str)
		}
		if strings.Join(types, " ") != "response.created response.in_progress response.output_item.added response.output_item.done response.completed" ||
			evs[3].Get("item.type").Str != "compaction" {
			t.Fatalf("the frames: %v", evs)
		}
		checkCompactionAnswer(t, evs[4].Get("response"))
		if got := evs[4].Get("response.previous_response_id").Str; got != id {
			t.Errorf("previous_response_id %q, want %q", got, id)
		}
		reqs := e.backendRequests()
		checkSummaryRequest(t, reqs)
		if sum := reqs[0].Get("body").Raw; !strings.Contains(sum, "Hello from louter_mock") {
			t.Errorf("the summary request lacks the socket's history (the first answer): %s", sum)
		}
	})

	t.Run("continued", func(t *testing.T) {
		// A client that chains the trigger's turn by
		// previous_response_id: the rebuilt chain starts at the
		// compaction, the recent user messages kept.
		o, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-gemini-1","input":%s}`, triggerInput())))
		if err != nil {
			t.Fatal(err)
		}
		checkCompactionAnswer(t, o.final)
		e.clearJournals()
		if _, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-gemini-1","previous_response_id":%q,"input":"third-question"}`, o.final.Get("id").Str))); err != nil {
			t.Fatal(err)
		}
		if got := e.onlyBackendRequest().Get("body").Raw; strings.Contains(got, "assistant-filler") || !strings.Contains(got, "Summary of the conversation so far") ||
			!strings.Contains(got, "louter-tail-question") || !strings.Contains(got, "third-question") || strings.Contains(got, "compaction_trigger") {
			t.Errorf("the continued chain: %s", got)
		}
	})

	t.Run("responses backend", func(t *testing.T) {
		// The backend answers (the mock, which does not compact,
		// refuses the item as louter's decoder does: its answer is
		// passed on); louter asks for no summary.
		e.clearJournals()
		_, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-native-1","store":false,"input":%s}`, triggerInput())))
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "input[9]" {
			t.Errorf("the backend's answer was not passed on: %v", err)
		}
		in := e.onlyBackendRequest().Get("body.input")
		if last := in.Get(fmt.Sprint(in.Get("#").Int() - 1)); last.Raw != `{"type":"compaction_trigger"}` || in.Get("#").Int() != 10 {
			t.Errorf("a Responses backend did not get the request as sent: %s", in.Raw)
		}
	})

	t.Run("not last", func(t *testing.T) {
		e.clearJournals()
		_, err := callResponses(e, "text", false, rawParams(`{"model":"resp-via-openai-1","store":false,"input":[{"type":"compaction_trigger"},{"role":"user","content":"hi"}]}`))
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "input[0]" || !strings.Contains(ae.Message, "compaction_trigger") {
			t.Errorf("a trigger before other items: %v", err)
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("%d backend requests", n)
		}
	})
}

// TestResponsesCompactionTriggerStoredOff: without stored responses louter
// cannot keep a summary, and says so by name rather than answering the
// trigger with an ordinary turn.
func TestResponsesCompactionTriggerStoredOff(t *testing.T) {
	ports := testcaddy.Start(t, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		stored_responses off
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * oai
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name trigger-stored-off
	}
}
`)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	for _, stream := range []bool{false, true} {
		_, err := callResponses(e, "text", stream, rawParams(fmt.Sprintf(`{"model":"m","store":false,"input":%s}`, triggerInput())))
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "input[9]" || !strings.Contains(ae.Message, "stored_responses") {
			t.Errorf("stream %v: %v", stream, err)
		}
	}
	if n := len(e.backendRequests()); n != 0 {
		t.Errorf("%d backend requests", n)
	}
}

package caddymodule_test

// Inline compaction (context_management on a Responses request) through a
// real Caddy with the official openai-go client, against an OpenAI Chat
// backend: the backend gets the compacted history, and the client the
// compaction item first in its output, streaming and not.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// compactableInput is a history whose assistant turns are long (past 1000
// tokens together), ending with a user question.
func compactableInput() string {
	filler := strings.Repeat("assistant-filler reads the repository and runs the tests again. ", 60)
	var items []string
	for i := range 4 {
		items = append(items, fmt.Sprintf(`{"role":"user","content":"step %d please"}`, i),
			fmt.Sprintf(`{"role":"assistant","content":%q}`, filler))
	}
	items = append(items, `{"role":"user","content":"louter-tail-question"}`)
	return "[" + strings.Join(items, ",") + "]"
}

func TestResponsesInlineCompaction(t *testing.T) {
	e := startResponsesEnv(t)
	cm := func(threshold int) string {
		return fmt.Sprintf(`"context_management":[{"type":"compaction","compact_threshold":%d}]`, threshold)
	}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e.clearJournals()
			body := fmt.Sprintf(`{"model":"resp-via-openai-1","store":false,"instructions":"be brief","input":%s,%s}`, compactableInput(), cm(1000))
			o, err := callResponses(e, "text", stream, rawParams(body))
			if err != nil {
				t.Fatal(err)
			}
			item := o.final.Get("output.0")
			if item.Get("type").Str != "compaction" || !strings.HasPrefix(item.Get("encrypted_content").Str, "louter_cmp_") ||
				o.final.Get("output.1.type").Str != "message" || !strings.HasPrefix(o.text, "Hello from louter_mock") {
				t.Fatalf("output: %s", o.final.Get("output").Raw)
			}
			if stream && (len(o.doneItems) < 2 || o.doneItems[0].Get("type").Str != "compaction") {
				t.Errorf("the stream's items: %v", o.doneItems)
			}
			reqs := e.backendRequests()
			if len(reqs) != 2 {
				t.Fatalf("backend requests: %d, want the summary and the turn", len(reqs))
			}
			if sum := reqs[0].Get("body").Raw; !strings.Contains(sum, "assistant-filler") || !strings.Contains(sum, "handoff summary") || strings.Contains(sum, "louter-tail-question") {
				t.Errorf("the summary request: %s", sum)
			}
			got := reqs[1].Get("body")
			if reqs[1].Get("protocol").Str != "openai_chat" || strings.Contains(got.Raw, "assistant-filler") || !strings.Contains(got.Raw, "Summary of the conversation so far") ||
				!strings.Contains(got.Raw, "louter-tail-question") || !strings.Contains(got.Raw, "step 3 please") || !strings.Contains(got.Raw, "be brief") {
				t.Errorf("the backend did not get the compacted history: %s", got.Raw)
			}

			// The client continues with its output appended: the item
			// stands for everything before it.
			e.clearJournals()
			next := fmt.Sprintf(`{"model":"resp-via-openai-1","store":false,"input":%s}`, strings.TrimSuffix(compactableInput(), "]")+","+
				o.final.Get("output.0").Raw+","+o.final.Get("output.1").Raw+`,{"role":"user","content":"second-question"}]`)
			if _, err := callResponses(e, "text", stream, rawParams(next)); err != nil {
				t.Fatal(err)
			}
			got = e.onlyBackendRequest().Get("body")
			if strings.Contains(got.Raw, "assistant-filler") || !strings.Contains(got.Raw, "Summary of the conversation so far") ||
				!strings.Contains(got.Raw, "louter-tail-question") || !strings.Contains(got.Raw, "second-question") {
				t.Errorf("the continuation: %s", got.Raw)
			}
		})
	}

	// Stored, then continued by previous_response_id: the chain louter
	// rebuilds starts at the compaction item too.
	o, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-anthropic-1","input":%s,%s}`, compactableInput(), cm(1000))))
	if err != nil || o.final.Get("output.0.type").Str != "compaction" {
		t.Fatalf("stored turn: %v %s", err, o.final.Raw)
	}
	e.clearJournals()
	if _, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-anthropic-1","previous_response_id":%q,"input":"third-question"}`, o.final.Get("id").Str))); err != nil {
		t.Fatal(err)
	}
	if got := e.onlyBackendRequest().Get("body").Raw; strings.Contains(got, "assistant-filler") || !strings.Contains(got, "Summary of the conversation so far") ||
		!strings.Contains(got, "louter-tail-question") || !strings.Contains(got, "third-question") {
		t.Errorf("the continued chain: %s", got)
	}

	// Under the threshold: no compaction, nothing added.
	e.clearJournals()
	o, err = callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-openai-1","store":false,"input":%s,%s}`, compactableInput(), cm(1000000))))
	if err != nil {
		t.Fatal(err)
	}
	if o.final.Get("output.0.type").Str != "message" || len(e.backendRequests()) != 1 || !strings.Contains(e.onlyBackendRequest().Get("body").Raw, "assistant-filler") {
		t.Errorf("under the threshold: %s", o.final.Raw)
	}
	// A Responses backend gets the member and compacts itself.
	e.clearJournals()
	if _, err := callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-native-1","store":false,"input":"hi",%s}`, cm(1000)))); err != nil {
		t.Fatal(err)
	}
	if got := e.onlyBackendRequest().Get("body.context_management.0.compact_threshold").Int(); got != 1000 {
		t.Errorf("a Responses backend did not get context_management: %d", got)
	}
	// A threshold under the API's minimum: 400 naming the field.
	_, err = callResponses(e, "text", false, rawParams(fmt.Sprintf(`{"model":"resp-via-openai-1","input":"hi",%s}`, cm(10))))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "context_management" {
		t.Errorf("threshold 10: %v", err)
	}
}

package caddymodule_test

// Stored interactions through a real, in-process Caddy with the genai SDK's
// Interactions client: previous_interaction_id continues a tool round trip
// on every backend protocol, streaming and not; GET and DELETE in the API's
// shape; store:false; isolation between client keys; thought signatures
// handed back only to the backend that issued them.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"google.golang.org/genai"
	gi "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"

	"github.com/louter/louter/internal/testcaddy"
)

// interactionsGet fetches a stored interaction with key: the status and
// the body.
func interactionsGet(t *testing.T, e *env, id, key string) (int, gjson.Result) {
	t.Helper()
	resp := getURL(t, e.louter+"/gemini/v1beta/interactions/"+id, "X-Goog-Api-Key", key)
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, gjson.ParseBytes(b)
}

// TestInteractionsStored: a tool round trip continued by
// previous_interaction_id on every backend protocol, streaming and not:
// the backend gets the whole conversation, GET returns each turn's own
// timeline (so a turn stores its own steps, not the chain's), another key
// finds nothing, store:false is not kept, and DELETE removes a turn.
func TestInteractionsStored(t *testing.T) {
	e := startResponsesEnv(t)
	ctx := context.Background()
	eachInteractionsBackend(t, func(t *testing.T, b interactionsBackend, stream bool) {
		model := b.model
		const question = "What is the weather in Paris?"
		first, err := interact(t, e, interaction{model: model, scenario: "tool", stream: stream, input: question})
		if err != nil {
			t.Fatal(err)
		}
		call := first.call()
		if first.id == "" || first.status != "requires_action" || call == nil {
			t.Fatalf("turn 1: id %q status %q steps %+v", first.id, first.status, first.steps)
		}

		// Turn 2 sends only the function's result.
		e.clearJournals()
		result := gi.NewStep(gi.FunctionResultStep{CallID: call.ID, Name: genai.Ptr("get_weather"), Result: gi.NewFunctionResultStepResultUnion("sunny-louter-7")})
		second, err := interact(t, e, interaction{model: model, scenario: "text", stream: stream, input: []gi.Step{result}, prev: first.id})
		if err != nil {
			t.Fatal(err)
		}
		if second.status != "completed" || second.id == "" || second.id == first.id {
			t.Fatalf("turn 2: id %q status %q", second.id, second.status)
		}
		body := e.onlyBackendRequest().Get("body").Raw
		if !strings.Contains(body, question) || !strings.Contains(body, "sunny-louter-7") || strings.Count(body, "get_weather") < 2 || !strings.Contains(body, "Be brief.") {
			t.Errorf("the backend did not get the conversation: %s", body)
		}

		// GET: each turn's own steps, input first.
		got, err := interactionsSDK(t, e, "").Interactions.Get(ctx, operations.GetInteractionByIDRequest{ID: second.id})
		if err != nil {
			t.Fatal(err)
		}
		it := got.Interaction
		if it == nil || it.Status != "completed" || it.PreviousInteractionID == nil || *it.PreviousInteractionID != first.id ||
			len(it.Steps) < 2 || it.Steps[0].FunctionResultStep == nil || it.Steps[len(it.Steps)-1].ModelOutputStep == nil {
			t.Fatalf("GET turn 2: %+v", it)
		}
		got, err = interactionsSDK(t, e, "").Interactions.Get(ctx, operations.GetInteractionByIDRequest{ID: first.id})
		if err != nil {
			t.Fatal(err)
		}
		if it := got.Interaction; it == nil || len(it.Steps) < 2 || it.Steps[0].UserInputStep == nil || it.Steps[len(it.Steps)-1].FunctionCallStep == nil ||
			it.Steps[len(it.Steps)-1].FunctionCallStep.Arguments["city"] == nil {
			t.Fatalf("GET turn 1: %+v", it)
		}

		// An interaction is not a response, under the same key.
		if resp := getURL(t, e.louter+"/v1/responses/"+first.id, "X-Goog-Api-Key", "interactions-client-key"); resp.StatusCode != 404 {
			t.Errorf("an interaction read as a response: %d", resp.StatusCode)
		}

		// Another key finds nothing, neither to read nor to continue.
		if status, got := interactionsGet(t, e, second.id, "other-client-key"); status != 404 || got.Get("error.code").Str != "not_found" {
			t.Errorf("GET with another key: %d %s", status, got.Raw)
		}
		if _, err := interact(t, e, interaction{model: model, scenario: "text", stream: stream, input: "and?", prev: first.id, key: "other-client-key"}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("continued with another key: %v", err)
		}

		// store:false continues the chain but is not kept.
		third, err := interact(t, e, interaction{model: model, scenario: "text", stream: stream, input: "Thanks.", prev: second.id, store: genai.Ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		if status, _ := interactionsGet(t, e, third.id, "interactions-client-key"); status != 404 {
			t.Errorf("a store:false interaction was kept: %d", status)
		}

		// DELETE, then the turn is gone.
		if _, err := interactionsSDK(t, e, "").Interactions.Delete(ctx, operations.DeleteInteractionRequest{ID: second.id}); err != nil {
			t.Fatal(err)
		}
		if status, _ := interactionsGet(t, e, second.id, "interactions-client-key"); status != 404 {
			t.Errorf("GET after DELETE: %d", status)
		}
		if _, err := interact(t, e, interaction{model: model, scenario: "text", input: "and?", prev: second.id}); err == nil {
			t.Error("a deleted interaction was continued")
		}
	})
}

// TestInteractionsStoredSignatures: a stored thought step goes back to the
// backend that signed it, and is left out for another backend.
func TestInteractionsStoredSignatures(t *testing.T) {
	e := startResponsesEnv(t)
	for _, b := range []string{"anthropic", "openai_responses", "gemini"} {
		for _, stream := range []bool{false, true} {
			first, err := interact(t, e, interaction{model: interactionsModel(b), scenario: "reasoning", stream: stream, input: "Think first."})
			if err != nil {
				t.Fatal(err)
			}
			sig := ""
			if th := first.thought(); th != nil && th.Signature != nil {
				sig = *th.Signature
			}
			if i := strings.IndexByte(sig, ':'); i >= 0 {
				sig = sig[i+1:] // a Responses backend's packed id:content
			}
			if sig == "" {
				if b != "gemini" {
					t.Errorf("%s: no signed thought in %+v", b, first.steps)
				}
				continue
			}
			for _, next := range []string{b, "openai_chat"} {
				e.clearJournals()
				if _, err := interact(t, e, interaction{model: interactionsModel(next), scenario: "text", stream: stream, input: "And now?", prev: first.id}); err != nil {
					t.Fatal(err)
				}
				body := e.onlyBackendRequest().Get("body").Raw
				if !strings.Contains(body, "Think first.") {
					t.Errorf("%s then %s: history lost: %s", b, next, body)
				}
				if strings.Contains(body, sig) != (next == b) {
					t.Errorf("%s then %s (stream %v): signature sent %v, want %v: %s", b, next, stream, !(next == b), next == b, body)
				}
			}
		}
	}
}

// TestStoredLongChain: 200 turns, each continuing the last with one new
// input, in a store bounded to 600 KB, for the Responses API and the
// Interactions API. Each turn is kept once (its own items, not the
// chain's), so the whole conversation fits and turn 200's backend request
// carries all 200 inputs; a store that kept each turn's whole history
// would need about 200²/2 turns' worth and evict the chain's start.
func TestStoredLongChain(t *testing.T) {
	for _, api := range []struct {
		name, path, prevField string
		auth                  [2]string
		steps                 string // where GET finds one turn's items
		wantSteps             int
	}{
		{"responses", "/v1/responses", "previous_response_id", [2]string{"Authorization", "Bearer chain-key"}, "output", 1},
		{"interactions", "/v1beta/interactions", "previous_interaction_id", [2]string{"X-Goog-Api-Key", "chain-key"}, "steps", 2},
	} {
		t.Run(api.name, func(t *testing.T) {
			e := startStoredEnv(t, "max_stored_bytes 600KB")
			const turns = 200
			prev := ""
			for i := range turns {
				body := fmt.Sprintf(`{"model":"m","input":"turn-%03d %s"`, i, strings.Repeat("x", 500))
				if prev != "" {
					body += fmt.Sprintf(`,%q:%q`, api.prevField, prev)
				}
				if i == turns-1 {
					e.clearJournals()
				}
				resp := post(t, e.louter+api.path, body+"}", api.auth[0], api.auth[1], "X-Mock-Scenario", "echo")
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				prev = gjson.GetBytes(got, "id").Str
				if resp.StatusCode != 200 || prev == "" {
					t.Fatalf("turn %d: %d %s", i, resp.StatusCode, got)
				}
			}
			last := e.onlyBackendRequest().Get("body").Raw
			for _, want := range []string{"turn-000", "turn-100"} {
				if strings.Count(last, want) < 2 {
					t.Errorf("turn 200's backend request lacks %s, asked and answered", want)
				}
			}
			if !strings.Contains(last, "turn-199") {
				t.Error("turn 200's backend request lacks its own input")
			}
			// GET returns one turn's items, whatever the chain's length.
			resp := getURL(t, e.louter+api.path+"/"+prev, api.auth[0], api.auth[1])
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if n := len(gjson.GetBytes(got, api.steps).Array()); resp.StatusCode != 200 || n != api.wantSteps || strings.Contains(string(got), "turn-000") {
				t.Errorf("GET turn 200: %d, %d %s: %.300s", resp.StatusCode, n, api.steps, got)
			}
		})
	}
}

// startStoredEnv starts louter with one OpenAI Chat backend for every
// model and the stored_responses options opts. Its mock has a journal of
// its own: unnamed mocks share one, which other tests count.
func startStoredEnv(t *testing.T, opts string) *env {
	t.Helper()
	ports := testcaddy.Start(t, strings.ReplaceAll(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		stored_responses {
			{OPTS}
		}
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
		name stored-env-mock
	}
}
`, "{OPTS}", opts))
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

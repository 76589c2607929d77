package caddymodule_test

// Stored responses through a real Caddy with the official openai-go
// client: continuation by previous_response_id on a Chat, an Anthropic and
// a Gemini backend (the backend gets the whole history each turn), a tool
// session, retrieval, input items, deletion, isolation between clients,
// store false, and compaction.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// statefulClient is a Responses client with its own key.
func statefulClient(e *env, scenario, key string) openai.Client {
	return openai.NewClient(
		ooption.WithBaseURL(e.louter+"/codex/v1/"),
		ooption.WithAPIKey(key),
		ooption.WithMaxRetries(0),
		ooption.WithRequestTimeout(30*time.Second),
		ooption.WithHeader("X-Mock-Scenario", scenario),
	)
}

// lastBackendBody is the body of the last request the backends received.
func lastBackendBody(t *testing.T, e *env) string {
	t.Helper()
	reqs := e.backendRequests()
	if len(reqs) == 0 {
		t.Fatal("no backend request")
	}
	return reqs[len(reqs)-1].Get("body").Raw
}

func statusOf(err error) int {
	var ae *openai.Error
	if errors.As(err, &ae) {
		return ae.StatusCode
	}
	return 0
}

const execTool = `[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]`

func TestIntegrationStoredResponses(t *testing.T) {
	e := startResponsesEnv(t)
	ctx := context.Background()
	for _, model := range []string{"resp-via-openai-1", "resp-via-anthropic-1", "resp-via-gemini-1"} {
		t.Run(model, func(t *testing.T) {
			e.clearJournals()
			agent := statefulClient(e, "agent", "sk-alice")
			marker := "marker-" + model
			// Turn 1: the model calls the tool. store is not sent: true.
			o1, err := callWith(agent, true, rawParams(fmt.Sprintf(`{"model":%q,"tools":%s,"input":"please run \"echo %s\""}`, model, execTool, marker)))
			if err != nil {
				t.Fatal(err)
			}
			call := o1.final.Get(`output.#(type=="function_call")`)
			if !call.Exists() {
				t.Fatalf("turn 1: no function call: %s", o1.final.Raw)
			}
			id1 := o1.final.Get("id").Str
			// Turn 2: only the tool's output, continuing turn 1.
			o2, err := callWith(agent, true, rawParams(fmt.Sprintf(`{"model":%q,"tools":%s,"previous_response_id":%q,"input":[{"type":"function_call_output","call_id":%q,"output":"out-%s"}]}`,
				model, execTool, id1, call.Get("call_id").Str, marker)))
			if err != nil {
				t.Fatal(err)
			}
			if want := "The command printed: out-" + marker; o2.text != want {
				t.Errorf("turn 2 = %q, want %q (the backend did not get the call and its result)", o2.text, want)
			}
			body := lastBackendBody(t, e)
			if !strings.Contains(body, "echo "+marker) || !strings.Contains(body, "exec_command") || strings.Contains(body, "previous_response_id") {
				t.Errorf("turn 2's backend request lacks turn 1's history: %s", body)
			}
			id2 := o2.final.Get("id").Str
			// Turn 3, non-streaming: the backend gets all of it.
			echo := statefulClient(e, "echo", "sk-alice")
			o3, err := callWith(echo, false, rawParams(fmt.Sprintf(`{"model":%q,"previous_response_id":%q,"input":"third %s"}`, model, id2, marker)))
			if err != nil {
				t.Fatal(err)
			}
			if o3.text != "third "+marker {
				t.Errorf("turn 3 = %q", o3.text)
			}
			body = lastBackendBody(t, e)
			for _, want := range []string{"echo " + marker, "out-" + marker, "The command printed: out-" + marker, "third " + marker} {
				if !strings.Contains(body, want) {
					t.Errorf("turn 3's backend request lacks %q: %s", want, body)
				}
			}
			id3 := o3.final.Get("id").Str

			// Retrieval and input items.
			got, err := echo.Responses.Get(ctx, id2, responses.ResponseGetParams{})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != id2 || got.OutputText() != o2.text || got.PreviousResponseID != id1 {
				t.Errorf("GET %s = %s", id2, got.RawJSON())
			}
			items, err := echo.Responses.InputItems.List(ctx, id2, responses.InputItemListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(items.Data) != 1 || items.Data[0].Type != "function_call_output" || items.Data[0].ID == "" {
				t.Errorf("input items of %s: %+v", id2, items.Data)
			}
			// Another client's key finds nothing.
			mallory := statefulClient(e, "echo", "sk-mallory")
			if _, err := mallory.Responses.Get(ctx, id2, responses.ResponseGetParams{}); statusOf(err) != 404 {
				t.Errorf("another client read the response: %v", err)
			}
			if _, err := callWith(mallory, false, rawParams(fmt.Sprintf(`{"model":%q,"previous_response_id":%q,"input":"x"}`, model, id3))); statusOf(err) != 400 {
				t.Errorf("another client continued the response: %v", err)
			}
			// Deletion: the response is gone, and so is every chain through it.
			if err := echo.Responses.Delete(ctx, id1); err != nil {
				t.Fatal(err)
			}
			if _, err := echo.Responses.Get(ctx, id1, responses.ResponseGetParams{}); statusOf(err) != 404 {
				t.Errorf("deleted response: %v", err)
			}
			_, err = callWith(echo, false, rawParams(fmt.Sprintf(`{"model":%q,"previous_response_id":%q,"input":"x"}`, model, id3)))
			var ae *openai.Error
			if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Code != "previous_response_not_found" || ae.Param != "previous_response_id" {
				t.Errorf("continuing through a deleted response: %v", err)
			}
		})
	}

	t.Run("store false", func(t *testing.T) {
		echo := statefulClient(e, "echo", "sk-alice")
		o, err := callWith(echo, false, rawParams(`{"model":"resp-via-openai-1","store":false,"input":"unstored"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := echo.Responses.Get(ctx, o.final.Get("id").Str, responses.ResponseGetParams{}); statusOf(err) != 404 {
			t.Errorf("a store false response was kept: %v", err)
		}
	})

	t.Run("compaction", func(t *testing.T) {
		e.clearJournals()
		echo := statefulClient(e, "echo", "sk-alice")
		c, err := echo.Responses.Compact(ctx, responses.ResponseCompactParams{
			Model:        "resp-via-anthropic-1",
			Instructions: openai.String("be brief"),
			Input: responses.ResponseCompactParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{
				responses.ResponseInputItemParamOfMessage("remember the word zebra", responses.EasyInputMessageRoleUser),
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		out := gjson.Parse(c.RawJSON())
		if out.Get("object").Str != "response.compaction" || out.Get("output.0.role").Str != "user" || out.Get("output.1.type").Str != "compaction" ||
			!strings.HasPrefix(out.Get("output.1.encrypted_content").Str, "louter_cmp_") {
			t.Fatalf("compact = %s", out.Raw)
		}
		summaryReq := lastBackendBody(t, e)
		if !strings.Contains(summaryReq, "zebra") || !strings.Contains(summaryReq, "handoff summary") {
			t.Errorf("the summary request: %s", summaryReq)
		}
		// The compacted history continues on another backend: the
		// summary stands in for the compaction item.
		next := fmt.Sprintf(`{"model":"resp-via-gemini-1","store":false,"input":[%s,%s,{"role":"user","content":"go on"}]}`,
			out.Get("output.0").Raw, out.Get("output.1").Raw)
		if _, err := callWith(echo, false, rawParams(next)); err != nil {
			t.Fatal(err)
		}
		body := lastBackendBody(t, e)
		if !strings.Contains(body, "Summary of the conversation so far") || !strings.Contains(body, "handoff summary") || strings.Contains(body, "louter_cmp_") {
			t.Errorf("the compacted request: %s", body)
		}
		// Another client cannot use the item; a foreign item is refused.
		mallory := statefulClient(e, "echo", "sk-mallory")
		if _, err := callWith(mallory, false, rawParams(next)); statusOf(err) != 400 {
			t.Errorf("another client's compaction item: %v", err)
		}
		foreign := `{"model":"resp-via-openai-1","store":false,"input":[{"type":"compaction","encrypted_content":"gAAAA-openai"},{"role":"user","content":"go on"}]}`
		_, err = callWith(echo, false, rawParams(foreign))
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "input[0]" {
			t.Errorf("a foreign compaction item: %v", err)
		}
	})

	t.Run("passthrough", func(t *testing.T) {
		// A Responses backend keeps the turns itself: a continuation on it
		// passes previous_response_id through; one on another backend
		// gets the history from louter's store.
		e.clearJournals()
		echo := statefulClient(e, "echo", "sk-alice")
		o1, err := callWith(echo, false, rawParams(`{"model":"resp-native-1","input":"native-first"}`))
		if err != nil {
			t.Fatal(err)
		}
		id1 := o1.final.Get("id").Str
		resp := post(t, e.louter+"/v1/responses", fmt.Sprintf(`{"model":"resp-native-1","previous_response_id":%q,"input":"native-second"}`, id1), "Authorization", "Bearer sk-alice", "X-Mock-Scenario", "echo")
		resp.Body.Close()
		body := lastBackendBody(t, e)
		if gjson.Get(body, "previous_response_id").Str != id1 || strings.Contains(body, "native-first") {
			t.Errorf("the Responses backend did not get the id to continue: %s", body)
		}
		o3, err := callWith(echo, false, rawParams(fmt.Sprintf(`{"model":"resp-via-openai-1","previous_response_id":%q,"input":"on-chat"}`, id1)))
		if err != nil {
			t.Fatal(err)
		}
		body = lastBackendBody(t, e)
		if o3.text != "on-chat" || strings.Count(body, "native-first") < 2 {
			t.Errorf("switching backend lost the history: %q %s", o3.text, body)
		}
	})

	t.Run("conversation", func(t *testing.T) {
		e.clearJournals()
		echo := statefulClient(e, "echo", "sk-alice")
		for _, in := range []string{"conv-one", "conv-two"} {
			if _, err := callWith(echo, false, rawParams(fmt.Sprintf(`{"model":"resp-via-anthropic-1","conversation":{"id":"conv_test"},"input":%q}`, in))); err != nil {
				t.Fatal(err)
			}
		}
		if body := lastBackendBody(t, e); strings.Count(body, "conv-one") < 2 || !strings.Contains(body, "conv-two") || strings.Contains(body, "conv_test") {
			t.Errorf("the conversation's second turn lacks the first: %s", body)
		}
		// Another client's conversation of the same name is its own.
		mallory := statefulClient(e, "echo", "sk-mallory")
		if _, err := callWith(mallory, false, rawParams(`{"model":"resp-via-anthropic-1","conversation":"conv_test","input":"m"}`)); err != nil {
			t.Fatal(err)
		}
		if body := lastBackendBody(t, e); strings.Contains(body, "conv-one") {
			t.Errorf("another client continued the conversation: %s", body)
		}
		_, err := callWith(echo, false, rawParams(`{"model":"resp-via-anthropic-1","conversation":"conv_test","previous_response_id":"resp_x","input":"m"}`))
		if statusOf(err) != 400 {
			t.Errorf("conversation with previous_response_id: %v", err)
		}
	})

	t.Run("unknown id", func(t *testing.T) {
		resp := getURL(t, e.louter+"/v1/responses/resp_nope", "Authorization", "Bearer sk-alice")
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 404 || gjson.GetBytes(raw, "error.type").Str != "invalid_request_error" || !strings.Contains(gjson.GetBytes(raw, "error.message").Str, "resp_nope") {
			t.Errorf("unknown id: %d %s", resp.StatusCode, raw)
		}
	})
}

// callWith is callResponses with a given client.
func callWith(client openai.Client, stream bool, params responses.ResponseNewParams) (respOutcome, error) {
	var o respOutcome
	ctx := context.Background()
	if stream {
		s := client.Responses.NewStreaming(ctx, params)
		for s.Next() {
			ev := s.Current()
			switch ev.Type {
			case "response.completed", "response.incomplete", "response.failed":
				o.final = gjson.Parse(ev.Response.RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			return o, err
		}
		if !o.final.Exists() {
			return o, errors.New("no terminal event")
		}
	} else {
		r, err := client.Responses.New(ctx, params)
		if err != nil {
			return o, err
		}
		o.final = gjson.Parse(r.RawJSON())
	}
	o.result = respResult(o.final)
	return o, nil
}

func getURL(t *testing.T, url string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

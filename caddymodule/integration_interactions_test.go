package caddymodule_test

// Integration tests of the Gemini Interactions API as a client protocol
// through a real, in-process Caddy: the genai Go SDK's own Interactions
// client (google.golang.org/genai/interactions) against louter_mock
// answering as each backend protocol, streaming and not, with a tool round
// trip and thought signatures handed back to the backend that issued them.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"google.golang.org/genai"
	"google.golang.org/genai/interactions/models/apierrors"
	gi "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"
	"google.golang.org/genai/interactions/retry"

	"github.com/louter/louter/internal/testcaddy"
)

// interactionsCall is one create call with the SDK: the interaction (for a
// stream, assembled from its events as a client does), or the error.
type interactionsCall struct {
	id     string
	status string
	steps  []gi.Step
	usage  *gi.Usage
	events []string // a stream's event types, in order
}

func interactionsSDK(t *testing.T, e *env, scenario string) *genai.Client {
	return interactionsClient(t, e.louter+"/gemini", "interactions-client-key", scenario)
}

// interactionsClient is the genai SDK's client of louter at base, with key.
func interactionsClient(t *testing.T, base, key, scenario string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:  key,
		Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: base,
			Headers: http.Header{"X-Mock-Scenario": {scenario}},
			Timeout: genai.Ptr(30 * time.Second),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func interactionsTools() []gi.Tool {
	return []gi.Tool{gi.NewTool(gi.Function{
		Name: genai.Ptr("get_weather"), Description: genai.Ptr("Get the weather for a city"),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	})}
}

// createInteraction sends input (a string or steps) with store:false and
// folds the answer.
func createInteraction(t *testing.T, e *env, model, scenario string, stream bool, input any) (*interactionsCall, error) {
	t.Helper()
	return interact(t, e, interaction{model: model, scenario: scenario, stream: stream, input: input, store: genai.Ptr(false)})
}

// interaction is one create call: the model, the mock's scenario, the
// input (a string or steps), and the stored-state members.
type interaction struct {
	model, scenario string
	stream          bool
	input           any
	store           *bool  // nil: left out (the API's default, true)
	prev            string // previous_interaction_id, or ""
	key             string // the client's key; "": interactions-client-key
}

// interact sends q with the SDK and folds the answer.
func interact(t *testing.T, e *env, q interaction) (*interactionsCall, error) {
	t.Helper()
	input, stream := q.input, q.stream
	var in gi.InteractionsInput
	switch v := input.(type) {
	case string:
		in = gi.NewInteractionsInput(v)
	case []gi.Step:
		in = gi.NewInteractionsInput(v)
	}
	level := gi.ThinkingLevelLow
	summaries := gi.ThinkingSummariesAuto
	create := gi.CreateModelInteraction{
		Model:             gi.Model(q.model),
		Input:             &in,
		SystemInstruction: genai.Ptr("Be brief."),
		Tools:             interactionsTools(),
		Store:             q.store,
		Stream:            genai.Ptr(stream),
		GenerationConfig:  &gi.GenerationConfig{ThinkingLevel: &level, ThinkingSummaries: &summaries},
	}
	if q.prev != "" {
		create.PreviousInteractionID = &q.prev
	}
	key := q.key
	if key == "" {
		key = "interactions-client-key"
	}
	body := operations.NewCreateInteractionRequestBody(create)
	res, err := interactionsClient(t, e.louter+"/gemini", key, q.scenario).Interactions.Create(context.Background(),
		operations.CreateInteractionRequest{Body: body}, operations.WithRetries(retry.Config{Strategy: "none"}))
	if err != nil {
		return nil, err
	}
	if !stream {
		if res.Interaction == nil {
			t.Fatal("no interaction in a non-streaming answer")
		}
		id := ""
		if res.Interaction.ID != nil {
			id = *res.Interaction.ID
		}
		return &interactionsCall{id: id, status: string(res.Interaction.Status), steps: res.Interaction.Steps, usage: res.Interaction.Usage}, nil
	}
	s := res.InteractionSSEStreamEvent
	if s == nil {
		t.Fatal("no stream")
	}
	defer s.Close()
	out := &interactionsCall{}
	var raw []map[string]any // the steps being assembled, as JSON
	var args []string
	for s.Next() {
		ev := gjson.GetBytes(s.RawValue(), "data")
		out.events = append(out.events, ev.Get("event_type").Str)
		i := int(ev.Get("index").Int())
		switch ev.Get("event_type").Str {
		case "interaction.created":
			out.id = ev.Get("interaction.id").Str
		case "step.start":
			var step map[string]any
			_ = json.Unmarshal([]byte(ev.Get("step").Raw), &step)
			raw, args = append(raw, step), append(args, "")
		case "step.delta":
			d, step := ev.Get("delta"), raw[i]
			switch d.Get("type").Str {
			case "text":
				c, _ := step["content"].([]any)
				step["content"] = append(c, map[string]any{"type": "text", "text": d.Get("text").Str})
			case "thought_summary":
				c, _ := step["summary"].([]any)
				step["summary"] = append(c, map[string]any{"type": "text", "text": d.Get("content.text").Str})
			case "thought_signature":
				step["signature"] = d.Get("signature").Str
			case "arguments_delta":
				args[i] += d.Get("arguments").Str
			}
		case "interaction.completed":
			out.status = ev.Get("interaction.status").Str
			var u gi.Usage
			if err := json.Unmarshal([]byte(ev.Get("interaction.usage").Raw), &u); err != nil {
				t.Fatal(err)
			}
			out.usage = &u
		case "error":
			return out, errors.New(ev.Get("error.code").Str + ": " + ev.Get("error.message").Str)
		}
	}
	if err := s.Err(); err != nil {
		return out, err
	}
	for i, step := range raw {
		if args[i] != "" {
			var a map[string]any
			if err := json.Unmarshal([]byte(args[i]), &a); err != nil {
				t.Fatalf("arguments %q: %v", args[i], err)
			}
			step["arguments"] = a
		}
		b, _ := json.Marshal(step)
		var typed gi.Step
		if err := json.Unmarshal(b, &typed); err != nil {
			t.Fatalf("step %s: %v", b, err)
		}
		out.steps = append(out.steps, typed)
	}
	return out, nil
}

// call is the answer's last function_call step, or nil.
func (c *interactionsCall) call() *gi.FunctionCallStep {
	var call *gi.FunctionCallStep
	for _, s := range c.steps {
		if s.FunctionCallStep != nil {
			call = s.FunctionCallStep
		}
	}
	return call
}

// thought is the answer's last thought step, or nil.
func (c *interactionsCall) thought() *gi.ThoughtStep {
	var thought *gi.ThoughtStep
	for _, s := range c.steps {
		if s.ThoughtStep != nil {
			thought = s.ThoughtStep
		}
	}
	return thought
}

func userStep(text string) gi.Step {
	return gi.NewStep(gi.UserInputStep{Content: []gi.Content{gi.NewContent(gi.TextContent{Text: text})}})
}

// interactionsBackend is a backend protocol the Interactions tests reach
// through the Responses tests' configuration (startResponsesEnv): the
// model routed to it, and the start of the backend's path.
type interactionsBackend struct{ protocol, model, path string }

var interactionsBackends = []interactionsBackend{
	{"openai_chat", "resp-via-openai-1", "/v1/chat/completions"},
	{"anthropic", "resp-via-anthropic-1", "/v1/messages"},
	{"openai_responses", "gpt-via-responses-1", "/v1/responses"},
	{"gemini", "resp-via-gemini-1", "/v1beta/models/backend-model:"},
}

// interactionsModel is the model routed to a backend protocol.
func interactionsModel(protocol string) string {
	for _, b := range interactionsBackends {
		if b.protocol == protocol {
			return b.model
		}
	}
	panic("no backend " + protocol)
}

// eachInteractionsBackend runs test on every backend protocol, streaming
// and not, as subtests.
func eachInteractionsBackend(t *testing.T, test func(t *testing.T, b interactionsBackend, stream bool)) {
	for _, b := range interactionsBackends {
		for _, stream := range []bool{false, true} {
			name := b.protocol
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) { test(t, b, stream) })
		}
	}
}

// TestInteractionsClient: a tool round trip and a reasoning round trip on
// every backend protocol, streaming and not.
func TestInteractionsClient(t *testing.T) {
	e := startResponsesEnv(t)
	eachInteractionsBackend(t, func(t *testing.T, b interactionsBackend, stream bool) {
		model := b.model
		// Turn 1: the model calls the tool.
		e.clearJournals()
		first, err := createInteraction(t, e, model, "tool", stream, "What is the weather in Paris?")
		if err != nil {
			t.Fatal(err)
		}
		call := first.call()
		if first.status != "requires_action" || call == nil || call.Name != "get_weather" || call.Arguments["city"] == nil || call.ID == "" {
			t.Fatalf("turn 1: status %q, steps %+v", first.status, first.steps)
		}
		if first.usage == nil || first.usage.TotalInputTokens == nil || *first.usage.TotalInputTokens <= 0 || *first.usage.TotalTokens <= *first.usage.TotalInputTokens {
			t.Errorf("turn 1 usage %+v", first.usage)
		}
		if stream && (first.events[0] != "interaction.created" || first.events[len(first.events)-1] != "interaction.completed") {
			t.Errorf("stream events %v", first.events)
		}
		got := e.onlyBackendRequest()
		if got.Get("protocol").Str != b.protocol || !strings.HasPrefix(got.Get("path").Str, b.path) {
			t.Errorf("backend got %s %s", got.Get("protocol"), got.Get("path"))
		}
		if !strings.Contains(got.Get("body").Raw, "Be brief.") || !strings.Contains(got.Get("body").Raw, "get_weather") {
			t.Errorf("system or tools lost: %s", got.Get("body").Raw)
		}

		// Turn 2: the whole history, the call's result last.
		e.clearJournals()
		history := append([]gi.Step{userStep("What is the weather in Paris?")}, first.steps...)
		history = append(history, gi.NewStep(gi.FunctionResultStep{CallID: call.ID, Name: genai.Ptr("get_weather"),
			Result: gi.NewFunctionResultStepResultUnion("sunny-louter-7")}))
		second, err := createInteraction(t, e, model, "text", stream, history)
		if err != nil {
			t.Fatal(err)
		}
		if second.status != "completed" || len(second.steps) == 0 || second.steps[len(second.steps)-1].ModelOutputStep == nil {
			t.Fatalf("turn 2: status %q steps %+v", second.status, second.steps)
		}
		body := e.onlyBackendRequest().Get("body").Raw
		if !strings.Contains(body, "sunny-louter-7") || strings.Count(body, "get_weather") < 2 {
			t.Errorf("tool result not sent with its call: %s", body)
		}
		// A Gemini backend signs its calls; the signature rode in
		// the call's id and goes back on the functionCall part.
		if sig := base64.StdEncoding.EncodeToString([]byte("louter_mock thought signature")); b.protocol == "gemini" &&
			gjson.Get(body, `contents.#.parts.#(functionCall).thoughtSignature|0`).Str != sig {
			t.Errorf("the call's thought signature was not handed back: %s", body)
		}

		// Reasoning: the thought's summary and signature, handed
		// back, reach the backend that issued the signature.
		e.clearJournals()
		third, err := createInteraction(t, e, model, "reasoning", stream, "Think first.")
		if err != nil {
			t.Fatal(err)
		}
		thought := third.thought()
		if thought == nil || len(thought.Summary) == 0 {
			t.Fatalf("no thought summary: %+v", third.steps)
		}
		if thought.Signature != nil && *thought.Signature != "" {
			e.clearJournals()
			history := append([]gi.Step{userStep("Think first.")}, third.steps...)
			history = append(history, userStep("And now?"))
			if _, err := createInteraction(t, e, model, "text", stream, history); err != nil {
				t.Fatal(err)
			}
			sig := *thought.Signature
			if i := strings.IndexByte(sig, ':'); i >= 0 {
				sig = sig[i+1:] // a Responses backend's packed id:content
			}
			if body := e.onlyBackendRequest().Get("body").Raw; !strings.Contains(body, sig) {
				t.Errorf("signature %q not handed back: %s", sig, body)
			}
		} else if b.protocol == "anthropic" || b.protocol == "openai_responses" {
			t.Errorf("%s signs its thinking, but the thought has no signature", b.protocol)
		}
	})
}

// TestInteractionsClientErrors: errors in the Interactions API's shape, as
// the SDK reads them, before and during a stream; and the stateful parts
// louter does not serve yet, refused by name.
func TestInteractionsClientErrors(t *testing.T) {
	e := startResponsesEnv(t)
	clientErr := func(err error) *apierrors.CreateInteractionClientError {
		ce, _ := errors.AsType[*apierrors.CreateInteractionClientError](err)
		return ce
	}
	for _, tt := range []struct {
		scenario string
		status   int
		code     string
	}{{"error_400", 400, "invalid_request"}, {"error_401", 401, "authentication"}} {
		_, err := createInteraction(t, e, "resp-via-anthropic-1", tt.scenario, false, "hi")
		ce := clientErr(err)
		if ce == nil || ce.HTTPMeta.Response.StatusCode != tt.status || ce.Error_.Code == nil || *ce.Error_.Code != tt.code {
			t.Errorf("%s: %v", tt.scenario, err)
		}
	}
	_, err := createInteraction(t, e, "no-such-model", "text", false, "hi")
	if ce := clientErr(err); ce == nil || ce.HTTPMeta.Response.StatusCode != 404 || *ce.Error_.Code != "not_found" {
		t.Errorf("unknown model: %v", err)
	}
	// Mid-stream: an error event, then the [DONE] sentinel.
	_, err = createInteraction(t, e, "resp-via-openai-1", "stream_error", true, "hi")
	if err == nil || !strings.HasPrefix(err.Error(), "unavailable: ") && !strings.HasPrefix(err.Error(), "internal: ") {
		t.Errorf("stream_error: %v", err)
	}

	// previous_interaction_id of an interaction nobody stored: a 404
	// naming it, in the API's shape; GET likewise.
	_, err = interact(t, e, interaction{model: "resp-via-gemini-1", scenario: "text", input: "and then?", prev: "v1_abc"})
	if ce := clientErr(err); ce == nil || ce.HTTPMeta.Response.StatusCode != 404 || *ce.Error_.Code != "not_found" || !strings.HasPrefix(*ce.Error_.Message, "previous_interaction_id: interaction 'v1_abc' not found") {
		t.Errorf("previous_interaction_id: %v", err)
	}
	resp, err := testcaddy.Client.Get(e.louter + "/gemini/v1beta/interactions/v1_abc")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || gjson.GetBytes(b, "error.code").Str != "not_found" || gjson.GetBytes(b, "error.message").Str != "interaction 'v1_abc' not found" {
		t.Errorf("GET: %d %s", resp.StatusCode, b)
	}
}

// TestInteractionsClientKeys: with a key table, an Interactions request is
// authenticated like every other, and refused in the Interactions API's
// error shape (401, 403, 429 with Retry-After), the key never echoed; a
// slow stream gets keep-alive comments the SDK reads through.
//
// The clients' names are this test's own: a limit's window lives in the
// process's usage pool, which other tests' Caddy configurations share.
func TestInteractionsClientKeys(t *testing.T) {
	ports := testcaddy.Start(t, strings.NewReplacer("{ALICE}", sha256Hex("alice-key"), "{BOB}", sha256Hex("bob-key"), "{CAROL}", sha256Hex("carol-key")).Replace(`
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		keepalive_interval 50ms
		client interactions-alice {
			key_sha256 {ALICE}
		}
		client interactions-bob {
			key_sha256 {BOB}
			models none-*
		}
		client interactions-carol {
			key_sha256 {CAROL}
			requests 1/30d
		}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model via-anthropic anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name interactions-keys-mock
	}
}
`))
	testcaddy.WaitListening(t, ports[1])
	base := testcaddy.URL(ports[0])
	post := func(key string) (int, http.Header, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1beta/interactions", strings.NewReader(`{"model":"via-anthropic","input":"hi","store":false}`))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("X-Goog-Api-Key", key)
		}
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, tt := range []struct {
		key    string
		status int
		code   string
	}{{"", 401, "authentication"}, {"wrong-key", 401, "authentication"}, {"bob-key", 403, "permission_denied"}, {"alice-key", 200, ""}, {"carol-key", 200, ""}, {"carol-key", 429, "rate_limit_exceeded"}} {
		status, h, body := post(tt.key)
		if status != tt.status || gjson.Get(body, "error.code").Str != tt.code {
			t.Errorf("key %q: %d %s, want %d %s", tt.key, status, body, tt.status, tt.code)
		}
		if tt.key != "" && strings.Contains(body, tt.key) {
			t.Errorf("key %q echoed: %s", tt.key, body)
		}
		if status == 429 && h.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}

	// A stream that falls silent between events: keep-alive comments,
	// skipped by the SDK's reader.
	req, _ := http.NewRequest(http.MethodPost, base+"/v1beta/interactions", strings.NewReader(`{"model":"via-anthropic","input":"hi","stream":true}`))
	req.Header.Set("X-Goog-Api-Key", "alice-key")
	req.Header.Set("X-Mock-Scenario", "slow")
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), "\n\n: keep-alive\n\n") || !strings.HasSuffix(string(raw), "event: done\ndata: [DONE]\n\n") {
		t.Errorf("slow stream, raw:\n%s", raw)
	}
	in := gi.NewInteractionsInput("hi")
	res, err := interactionsClient(t, base, "alice-key", "slow").Interactions.Create(context.Background(), operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(
		gi.CreateModelInteraction{Model: "via-anthropic", Input: &in, Stream: genai.Ptr(true), Store: genai.Ptr(false)})})
	if err != nil {
		t.Fatal(err)
	}
	s := res.InteractionSSEStreamEvent
	defer s.Close()
	var text, last string
	for s.Next() {
		ev := s.Value()
		if d := ev.GetDataStepDelta(); d != nil && d.Delta.TextDelta != nil {
			text += d.Delta.TextDelta.Text
		}
		last = gjson.GetBytes(s.RawValue(), "data.event_type").Str
	}
	if err := s.Err(); err != nil || !strings.HasPrefix(text, "Hello from louter_mock") || last != "interaction.completed" {
		t.Errorf("slow stream: %v, text %q, last event %q", err, text, last)
	}
}

package caddymodule_test

// Integration tests of the OpenAI Responses protocol through a real Caddy:
// openai-go's Responses client against OpenAI Chat, Anthropic and Gemini
// backends, and the Anthropic and OpenAI Chat SDKs against a Responses
// backend.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const responsesCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Dialect
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
		model resp-via-openai* oai backend-model
		model resp-via-anthropic* anth backend-model
		model resp-via-gemini* gem backend-model
		model claude-via-responses* resp backend-model
		model gpt-via-responses* resp backend-model
		model resp-native* resp
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name mock-responses
	}
}
`

func startResponsesEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, responsesCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

func responsesClient(e *env, scenario string) openai.Client {
	return openai.NewClient(
		ooption.WithBaseURL(e.louter+"/codex/v1/"),
		ooption.WithAPIKey("sk-responses-client-key"),
		ooption.WithMaxRetries(0),
		ooption.WithRequestTimeout(30*time.Second),
		ooption.WithHeader("X-Mock-Scenario", scenario),
	)
}

// respWeatherTools are the tools of the typed requests.
func respWeatherTools() []responses.ToolUnionParam {
	return []responses.ToolUnionParam{
		responses.ToolParamOfFunction(weatherTool.name, map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		}, false),
		responses.ToolParamOfFunction("get_time", map[string]any{"type": "object", "properties": map[string]any{}}, false),
	}
}

// respOutcome is what a Responses client saw: the common result, the final
// response object and, when streaming, the items output_item.done carried.
type respOutcome struct {
	result
	final     gjson.Result
	doneItems []gjson.Result
	events    []string
}

// callResponses sends params with the Responses client and reads the
// answer as Codex does: items from output_item.done, the end from the
// terminal event.
func callResponses(e *env, scenario string, stream bool, params responses.ResponseNewParams) (respOutcome, error) {
	client := responsesClient(e, scenario)
	ctx := context.Background()
	var o respOutcome
	if stream {
		s := client.Responses.NewStreaming(ctx, params)
		var seq int64
		for s.Next() {
			ev := s.Current()
			if ev.SequenceNumber != seq {
				return o, fmt.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
			}
			seq++
			o.events = append(o.events, ev.Type)
			switch ev.Type {
			case "response.output_item.done":
				o.doneItems = append(o.doneItems, gjson.Parse(ev.Item.RawJSON()))
			case "response.completed", "response.incomplete", "response.failed":
				o.final = gjson.Parse(ev.Response.RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			return o, err
		}
		if !o.final.Exists() {
			return o, errors.New("the stream ended without a terminal event")
		}
		if n := o.final.Get("output.#").Int(); n != int64(len(o.doneItems)) {
			return o, fmt.Errorf("output_item.done carried %d items, the response %d", len(o.doneItems), n)
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

// respResult reads the common result out of a response object.
func respResult(final gjson.Result) result {
	var r result
	calls := false
	final.Get("output").ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").Str {
		case "message":
			it.Get("content").ForEach(func(_, c gjson.Result) bool {
				r.text += c.Get("text").Str
				return true
			})
		case "reasoning":
			it.Get("summary").ForEach(func(_, s gjson.Result) bool {
				r.thinking += s.Get("text").Str
				return true
			})
		case "function_call":
			calls = true
			r.toolNames = append(r.toolNames, it.Get("name").Str)
			r.toolArgs = append(r.toolArgs, it.Get("arguments").Str)
		case "custom_tool_call":
			calls = true
			r.toolNames = append(r.toolNames, it.Get("name").Str)
			r.toolArgs = append(r.toolArgs, it.Get("input").Str)
		}
		return true
	})
	switch {
	case final.Get("status").Str == "incomplete":
		r.stop = "max_tokens"
	case calls:
		r.stop = "tool_use"
	default:
		r.stop = "end_turn"
	}
	r.in, r.out = final.Get("usage.input_tokens").Int(), final.Get("usage.output_tokens").Int()
	return r
}

// rawParams builds request params from raw JSON, for inputs the typed
// params make long-winded (histories, custom tools).
func rawParams(body string) responses.ResponseNewParams {
	return param.Override[responses.ResponseNewParams](json.RawMessage(body))
}

func TestIntegrationResponsesScenarios(t *testing.T) {
	e := startResponsesEnv(t)
	type caller struct {
		name, model, backend string
		call                 func(model, scenario string, stream bool) (result, error)
	}
	viaResponses := func(model, scenario string, stream bool) (result, error) {
		o, err := callResponses(e, scenario, stream, responses.ResponseNewParams{
			Model:     model,
			Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")},
			Tools:     respWeatherTools(),
			Reasoning: openai.ReasoningParam{Effort: openai.ReasoningEffortMedium, Summary: openai.ReasoningSummaryAuto},
		})
		return o.result, err
	}
	callers := []caller{
		{"responses->openai_chat", "resp-via-openai-1", "openai_chat", viaResponses},
		{"responses->anthropic", "resp-via-anthropic-1", "anthropic", viaResponses},
		{"responses->gemini", "resp-via-gemini-1", "gemini", viaResponses},
		{"responses passthrough", "resp-native-1", "openai_responses", viaResponses},
		{"anthropic->responses", "claude-via-responses-1", "openai_responses", func(m, s string, st bool) (result, error) { return callAnthropic(e, m, s, st) }},
		{"openai_chat->responses", "gpt-via-responses-1", "openai_responses", func(m, s string, st bool) (result, error) { return callOpenAI(e, m, s, st) }},
	}
	checks := map[string]func(t *testing.T, r result){
		"text": func(t *testing.T, r result) {
			if !strings.Contains(r.text, "Hello from louter_mock") || r.stop != "end_turn" || len(r.toolNames) != 0 {
				t.Errorf("text: %+v", r)
			}
		},
		"tool": func(t *testing.T, r result) {
			if len(r.toolNames) != 1 || r.toolNames[0] != weatherTool.name || r.stop != "tool_use" || !gjson.Get(r.toolArgs[0], "city").Exists() {
				t.Errorf("tool: %+v", r)
			}
		},
		"parallel_tools": func(t *testing.T, r result) {
			if len(r.toolNames) != 2 || r.toolNames[1] != "get_time" || r.toolArgs[1] != "{}" || r.stop != "tool_use" {
				t.Errorf("parallel_tools: %+v", r)
			}
		},
		"reasoning": func(t *testing.T, r result) {
			if r.thinking == "" || r.text == "" {
				t.Errorf("reasoning: thinking %q, text %q", r.thinking, r.text)
			}
		},
	}
	for _, c := range callers {
		for _, scenario := range []string{"text", "tool", "parallel_tools", "reasoning"} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", c.name, scenario, stream), func(t *testing.T) {
					e.clearJournals()
					r, err := c.call(c.model, scenario, stream)
					if err != nil {
						t.Fatal(err)
					}
					checks[scenario](t, r)
					if r.in <= 0 || r.out <= 0 {
						t.Errorf("usage not delivered: in=%d out=%d", r.in, r.out)
					}
					got := e.onlyBackendRequest()
					if p := got.Get("protocol").Str; p != c.backend {
						t.Errorf("backend received protocol %q, want %q", p, c.backend)
					}
					if c.backend == "openai_responses" && c.model != "resp-native-1" {
						body := got.Get("body")
						if got.Get("path").Str != "/v1/responses" || got.Get("headers.Authorization").Str != "Bearer resp-backend-key" ||
							body.Get("store").Type != gjson.False || body.Get("stream").Bool() != stream || body.Get("tools.0.name").Str != weatherTool.name {
							t.Errorf("responses backend request: %s %s %s", got.Get("path").Str, got.Get("headers").Raw, body.Raw)
						}
					}
				})
			}
		}
	}
}

// TestIntegrationResponsesStreamEvents checks the event sequence a
// Responses client receives from a translated stream.
func TestIntegrationResponsesStreamEvents(t *testing.T) {
	e := startResponsesEnv(t)
	o, err := callResponses(e, "reasoning", true, responses.ResponseNewParams{
		Model: "resp-via-anthropic-1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(o.events, " ")
	want := "response.created response.in_progress " +
		"response.output_item.added response.reasoning_summary_part.added response.reasoning_summary_text.delta"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "response.output_text.done response.content_part.done response.output_item.done response.completed") {
		t.Errorf("events:\n%s", got)
	}
	if o.doneItems[0].Get("type").Str != "reasoning" || o.doneItems[0].Get("encrypted_content").Str == "" {
		t.Errorf("the reasoning item lacks the backend's signature: %s", o.doneItems[0].Raw)
	}
}

// TestIntegrationResponsesToolRoundTrip sends Codex-style histories: the
// function_call items echoed back with their outputs reach each backend in
// its own form, and the answer sees the result.
func TestIntegrationResponsesToolRoundTrip(t *testing.T) {
	e := startResponsesEnv(t)
	history := `{"model":%q,"stream":%v,"store":false,"input":[
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent."}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"What is the weather in Paris?"}]},
		{"type":"function_call","id":"fc_1","call_id":"call_abc","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call","id":"fc_2","call_id":"call_def","name":"get_time","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_abc","output":"sunny, 21C"},
		{"type":"function_call_output","call_id":"call_def","output":[{"type":"input_text","text":"12:00"}]}],
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false},
			{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}},"strict":false},
			{"type":"web_search"}]}`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("anthropic backend/stream=%v", stream), func(t *testing.T) {
			e.clearJournals()
			o, err := callResponses(e, "agent", stream, rawParams(fmt.Sprintf(history, "resp-via-anthropic-1", stream)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(o.text, "sunny, 21C") || !strings.Contains(o.text, "12:00") {
				t.Errorf("the backend did not see the tool results: %+v", o.result)
			}
			body := e.onlyBackendRequest().Get("body")
			msgs := body.Get("messages").Array()
			if len(msgs) != 3 || body.Get("system").Raw == "" || body.Get("tools.#").Int() != 3 ||
				body.Get("tools.2.type").Str != "web_search_20250305" || body.Get("tools.2.name").Str != "web_search" {
				t.Fatalf("anthropic backend body (Codex's web_search as Anthropic's): %s", body.Raw)
			}
			if msgs[1].Get("content.0.type").Str != "tool_use" || msgs[1].Get("content.0.id").Str != "call_abc" || msgs[1].Get("content.0.input.city").Str != "Paris" ||
				msgs[1].Get("content.1.id").Str != "call_def" {
				t.Errorf("assistant turn: %s", msgs[1].Raw)
			}
			if msgs[2].Get("content.0.tool_use_id").Str != "call_abc" || msgs[2].Get("content.1.tool_use_id").Str != "call_def" {
				t.Errorf("tool results: %s", msgs[2].Raw)
			}
		})
	}
	t.Run("openai_chat backend", func(t *testing.T) {
		e.clearJournals()
		if _, err := callResponses(e, "agent", true, rawParams(fmt.Sprintf(history, "resp-via-openai-1", true))); err != nil {
			t.Fatal(err)
		}
		msgs := e.onlyBackendRequest().Get("body.messages").Array()
		if len(msgs) != 5 || msgs[0].Get("role").Str != "system" || msgs[2].Get("tool_calls.#").Int() != 2 ||
			msgs[3].Get("role").Str != "tool" || msgs[3].Get("tool_call_id").Str != "call_abc" || msgs[4].Get("content").Str != "12:00" {
			t.Errorf("openai backend messages: %v", msgs)
		}
	})
	t.Run("anthropic client, responses backend", func(t *testing.T) {
		e.clearJournals()
		r, err := callAnthropic(e, "claude-via-responses-1", "agent", true,
			anthropic.NewUserMessage(anthropic.NewTextBlock(`Run "echo hi"`)),
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_01abc", map[string]any{"city": "Paris"}, weatherTool.name)),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01abc", "sunny, 21C", false)),
		)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.text, "sunny, 21C") {
			t.Errorf("the backend did not see the tool result: %+v", r)
		}
		input := e.onlyBackendRequest().Get("body.input").Array()
		if len(input) != 3 || input[1].Get("type").Str != "function_call" || input[1].Get("call_id").Str != "toolu_01abc" ||
			input[2].Get("type").Str != "function_call_output" || input[2].Get("output").Str != "sunny, 21C" {
			t.Errorf("responses backend input: %v", input)
		}
	})
}

// TestIntegrationResponsesCustomTool checks a freeform tool (Codex's
// apply_patch) both ways: the backend sees a function with one string
// argument, the client gets a custom_tool_call with the raw input, and the
// call and its output go back on the next turn.
func TestIntegrationResponsesCustomTool(t *testing.T) {
	e := startResponsesEnv(t)
	const tools = `"tools":[{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}]`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("call/stream=%v", stream), func(t *testing.T) {
			e.clearJournals()
			o, err := callResponses(e, "tool", stream, rawParams(fmt.Sprintf(`{"model":"resp-via-anthropic-1","input":"Add a file.",%s}`, tools)))
			if err != nil {
				t.Fatal(err)
			}
			item := o.final.Get("output.0")
			if item.Get("type").Str != "custom_tool_call" || item.Get("name").Str != "apply_patch" || item.Get("input").Str != "louter" || item.Get("call_id").Str == "" {
				t.Errorf("custom tool call: %s", o.final.Get("output").Raw)
			}
			if stream && (o.doneItems[0].Get("input").Str != "louter" || !strings.Contains(strings.Join(o.events, " "), "response.custom_tool_call_input.done")) {
				t.Errorf("stream: %v %s", o.events, o.doneItems[0].Raw)
			}
			tool := e.onlyBackendRequest().Get("body.tools.0")
			if tool.Get("name").Str != "apply_patch" || tool.Get("input_schema.properties.input.type").Str != "string" ||
				!strings.Contains(tool.Get("input_schema.properties.input.description").Str, "begin_patch hunk+") {
				t.Errorf("backend tool: %s", tool.Raw)
			}
		})
	}
	t.Run("round trip", func(t *testing.T) {
		e.clearJournals()
		o, err := callResponses(e, "agent", true, rawParams(fmt.Sprintf(`{"model":"resp-via-openai-1","input":[
			{"role":"user","content":"Add a file."},
			{"type":"custom_tool_call","id":"ctc_1","call_id":"call_patch","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"},
			{"type":"custom_tool_call_output","call_id":"call_patch","output":[{"type":"input_text","text":"Success. Updated the following files."}]}],%s}`, tools)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(o.text, "Success. Updated the following files.") {
			t.Errorf("answer: %+v", o.result)
		}
		msgs := e.onlyBackendRequest().Get("body.messages").Array()
		if len(msgs) != 3 || gjson.Get(msgs[1].Get("tool_calls.0.function.arguments").Str, "input").Str != "*** Begin Patch\n*** End Patch\n" ||
			msgs[2].Get("tool_call_id").Str != "call_patch" {
			t.Errorf("backend messages: %v", msgs)
		}
	})
}

// TestIntegrationResponsesReasoningRoundTrip checks that the signature of
// an Anthropic thinking block reaches a Responses client as encrypted
// content and goes back to Anthropic unchanged, and that reasoning from a
// Responses backend goes back to it through an Anthropic client.
func TestIntegrationResponsesReasoningRoundTrip(t *testing.T) {
	e := startResponsesEnv(t)
	e.clearJournals()
	o, err := callResponses(e, "reasoning", true, responses.ResponseNewParams{
		Model:     "resp-via-anthropic-1",
		Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("Think.")},
		Reasoning: openai.ReasoningParam{Effort: openai.ReasoningEffortHigh, Summary: openai.ReasoningSummaryAuto},
	})
	if err != nil {
		t.Fatal(err)
	}
	if th := e.onlyBackendRequest().Get("body.thinking"); th.Get("type").Str != "enabled" || th.Get("budget_tokens").Int() <= 0 {
		t.Errorf("anthropic backend thinking: %s", th.Raw)
	}
	reasoning := o.doneItems[0]
	sig := reasoning.Get("encrypted_content").Str
	if reasoning.Get("type").Str != "reasoning" || sig == "" {
		t.Fatalf("reasoning item: %s", reasoning.Raw)
	}
	e.clearJournals()
	next := fmt.Sprintf(`{"model":"resp-via-anthropic-1","reasoning":{"effort":"high"},"input":[{"role":"user","content":"Think."},%s,%s,{"role":"user","content":"Again."}]}`,
		reasoning.Raw, o.doneItems[1].Raw)
	if _, err := callResponses(e, "text", false, rawParams(next)); err != nil {
		t.Fatal(err)
	}
	block := e.onlyBackendRequest().Get("body.messages.1.content.0")
	if block.Get("type").Str != "thinking" || block.Get("signature").Str != sig || block.Get("thinking").Str != reasoning.Get("summary.0.text").Str {
		t.Errorf("thinking block sent back: %s", block.Raw)
	}

	// The other way: a Responses backend's reasoning through an Anthropic client.
	e.clearJournals()
	client := anthropicClient(e, "reasoning")
	params := anthropicParams("claude-via-responses-1")
	params.Tools = nil
	params.Thinking = anthropic.ThinkingConfigParamOfEnabled(2048)
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Type != "thinking" || !strings.HasPrefix(msg.Content[0].Signature, "rs_") {
		t.Fatalf("anthropic client content: %+v", msg.Content)
	}
	e.clearJournals()
	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("Again.")))
	if _, err := client.Messages.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	body := e.onlyBackendRequest().Get("body")
	item := body.Get(`input.#(type=="reasoning")`)
	if id, enc, _ := strings.Cut(msg.Content[0].Signature, ":"); item.Get("id").Str != id || item.Get("encrypted_content").Str != enc ||
		body.Get("include.0").Str != "reasoning.encrypted_content" || body.Get("reasoning.summary").Str != "auto" {
		t.Errorf("reasoning sent back: %s", body.Raw)
	}
}

// TestIntegrationResponsesImageAndFormat checks images and structured
// output in both directions.
func TestIntegrationResponsesImageAndFormat(t *testing.T) {
	e := startResponsesEnv(t)
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	e.clearJournals()
	if _, err := callResponses(e, "text", false, rawParams(`{"model":"resp-via-anthropic-1","input":[{"role":"user","content":[
		{"type":"input_text","text":"What is in this image?"},{"type":"input_image","image_url":"data:image/png;base64,`+png+`","detail":"auto"}]}],
		"text":{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true}}}`)); err != nil {
		t.Fatal(err)
	}
	body := e.onlyBackendRequest().Get("body")
	if img := body.Get("messages.0.content.1"); img.Get("type").Str != "image" || img.Get("source.data").Str != png {
		t.Errorf("anthropic backend image: %s", img.Raw)
	}
	e.clearJournals()
	if _, err := callResponses(e, "text", true, rawParams(`{"model":"resp-via-openai-1","input":"Answer in JSON.",
		"text":{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true}}}`)); err != nil {
		t.Fatal(err)
	}
	if rf := e.onlyBackendRequest().Get("body.response_format"); rf.Get("type").Str != "json_schema" || rf.Get("json_schema.name").Str != "answer" || rf.Get("json_schema.schema.properties.a.type").Str != "string" {
		t.Errorf("openai backend response_format: %s", rf.Raw)
	}

	e.clearJournals()
	if _, err := callAnthropic(e, "claude-via-responses-1", "text", true, anthropic.NewUserMessage(
		anthropic.NewTextBlock("What is in this image?"), anthropic.NewImageBlockBase64("image/png", png))); err != nil {
		t.Fatal(err)
	}
	if img := e.onlyBackendRequest().Get("body.input.0.content.1"); img.Get("type").Str != "input_image" || img.Get("image_url").Str != "data:image/png;base64,"+png {
		t.Errorf("responses backend image: %s", img.Raw)
	}
	e.clearJournals()
	params := openaiParams("gpt-via-responses-1")
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
		JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: map[string]any{"type": "object"}},
	}}
	oc := openaiClient(e, "text")
	if _, err := oc.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if f := e.onlyBackendRequest().Get("body.text.format"); f.Get("type").Str != "json_schema" || f.Get("name").Str != "answer" || f.Get("schema.type").Str != "object" {
		t.Errorf("responses backend text.format: %s", f.Raw)
	}
}

// TestIntegrationResponsesErrors checks upstream errors, mid-stream
// failures and the stateless refusal, in the Responses error shape.
func TestIntegrationResponsesErrors(t *testing.T) {
	e := startResponsesEnv(t)
	simple := responses.ResponseNewParams{Model: "resp-via-anthropic-1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
	for _, tc := range []struct {
		scenario string
		status   int
		typ      string
	}{{"error_429", 429, "rate_limit_exceeded"}, {"error_500", 500, "server_error"}, {"error_401", 401, "invalid_request_error"}} {
		t.Run(tc.scenario, func(t *testing.T) {
			_, err := callResponses(e, tc.scenario, false, simple)
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != tc.status || oe.Type != tc.typ {
				t.Errorf("error = %v", err)
			}
		})
	}
	for _, scenario := range []string{"stream_error", "stream_cut"} {
		t.Run(scenario, func(t *testing.T) {
			o, err := callResponses(e, scenario, true, simple)
			if err == nil {
				t.Fatalf("a failed stream ended without an error: %v", o.events)
			}
			if len(o.events) > 0 && o.events[len(o.events)-1] == "response.completed" {
				t.Errorf("a failed stream completed: %v", o.events)
			}
		})
	}
	t.Run("anthropic client, responses backend errors", func(t *testing.T) {
		_, err := callAnthropic(e, "claude-via-responses-1", "error_429", false)
		var ae *anthropic.Error
		if !errors.As(err, &ae) || ae.StatusCode != 429 || gjson.Get(ae.RawJSON(), "error.type").Str != "rate_limit_error" {
			t.Errorf("error = %v", err)
		}
		r, err := callAnthropic(e, "claude-via-responses-1", "stream_error", true)
		if err == nil {
			t.Errorf("a failed Responses stream reached the Anthropic client as a success: %+v", r)
		}
	})
	t.Run("previous_response_id", func(t *testing.T) {
		e.clearJournals()
		resp := post(t, e.louter+"/v1/responses", `{"model":"resp-via-openai-1","input":"hi","previous_response_id":"resp_123"}`)
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || gjson.GetBytes(raw, "error.param").Str != "previous_response_id" || gjson.GetBytes(raw, "error.type").Str != "invalid_request_error" {
			t.Errorf("stateless refusal: %d %s", resp.StatusCode, raw)
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("the refused request reached a backend (%d requests)", n)
		}
		// Nor does a Responses backend under its own key, for which every
		// client is one: an id louter does not hold for this client is
		// not asked of it (with pass_client_auth it is, see
		// integration_stateful_chain_test.go).
		resp = post(t, e.louter+"/v1/responses", `{"model":"resp-native-1","input":"hi","previous_response_id":"resp_123"}`)
		raw, _ = io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || gjson.GetBytes(raw, "error.code").Str != "previous_response_not_found" {
			t.Errorf("passthrough: %d %s", resp.StatusCode, raw)
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("an unknown id reached the Responses backend (%d requests)", n)
		}
	})
}

package caddymodule_test

// Integration tests of backend dialects: louter_mock answers like a
// self-hosted OpenAI-compatible server whose parser was off, with tool calls
// and reasoning as text in the content, cut into chunks of a few bytes;
// every client protocol must get real tool calls with typed arguments and
// real reasoning, and never a marker as text.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const dialectCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Dialect
		backend qwen {
			protocol openai_chat
			dialect {
				tool_calls qwen3_coder
				reasoning think
			}
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend hermes {
			protocol openai_chat
			dialect {
				tool_calls hermes
			}
			reverse_proxy 127.0.0.1:{PORT2}
		}
		backend gptoss {
			protocol openai_chat
			dialect {
				reasoning harmony
				reasoning_history reasoning_content
			}
			reverse_proxy 127.0.0.1:{PORT3}
		}
		backend prompted {
			protocol openai_chat
			dialect {
				tool_calls qwen3_coder
				tools_in_prompt
				max_tokens_field max_tokens
				drop_params temperature
			}
			reverse_proxy 127.0.0.1:{PORT4}
		}
		model qwen-* qwen
		model hermes-* hermes
		model gptoss-* gptoss
		model prompted-* prompted
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name qwen
		dialect qwen3_coder think_open
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name hermes
		dialect hermes reasoning
		fixtures_dir ../testdata
	}
}
:{PORT3} {
	bind 127.0.0.1
	louter_mock {
		name gptoss
		dialect harmony
	}
}
:{PORT4} {
	bind 127.0.0.1
	louter_mock {
		name prompted
		dialect qwen3_coder_bare think
	}
}
`

func startDialectEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, dialectCaddyfile)
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	for _, p := range ports[1:] {
		testcaddy.WaitListening(t, p)
		e.mocks = append(e.mocks, testcaddy.URL(p))
	}
	return e
}

// forecastSchema has a parameter of every JSON type, all required, so the
// mock's synthesized arguments use each: Qwen3-Coder XML carries them as
// untyped text, and louter must type them back by this schema.
var forecastSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city":    map[string]any{"type": "string"},
		"days":    map[string]any{"type": "integer", "minimum": 3},
		"hourly":  map[string]any{"type": "boolean"},
		"scale":   map[string]any{"type": "number", "minimum": 2},
		"units":   map[string]any{"type": "string", "enum": []string{"metric", "imperial"}},
		"options": map[string]any{"type": "object", "properties": map[string]any{"alerts": map[string]any{"type": "boolean"}}, "required": []string{"alerts"}},
		"fields":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1},
	},
	"required": []string{"city", "days", "hourly", "scale", "units", "options", "fields"},
}

// forecastArgs is what the mock synthesizes for forecastSchema.
const forecastArgs = `{"city":"louter","days":3,"hourly":true,"scale":2,"units":"metric","options":{"alerts":true},"fields":["louter"]}`

const forecastDesc = "Get a weather forecast"

func dialectAnthropic(e *env, model, scenario string, stream bool, msgs ...anthropic.MessageParam) (result, error) {
	props := forecastSchema["properties"]
	params := anthropicParams(model, msgs...)
	params.Tools = []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{
			Name:        "get_forecast",
			Description: anthropic.String(forecastDesc),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: forecastSchema["required"].([]string)},
		}},
		{OfTool: &anthropic.ToolParam{Name: "get_time", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}},
	}
	return runAnthropic(e, scenario, stream, params)
}

func dialectOpenAI(e *env, model, scenario string, stream bool) (result, error) {
	params := openaiParams(model)
	params.Tools = []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_forecast", Description: openai.String(forecastDesc), Parameters: shared.FunctionParameters(forecastSchema),
		}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_time", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}},
		}),
	}
	return runOpenAI(e, scenario, stream, params)
}

func dialectResponses(e *env, model, scenario string, stream bool) (result, error) {
	schema, _ := json.Marshal(forecastSchema)
	o, err := callResponses(e, scenario, stream, rawParams(fmt.Sprintf(`{"model":%q,"input":"What is the forecast for Paris?",
		"tools":[{"type":"function","name":"get_forecast","description":%q,"parameters":%s},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}}]}`, model, forecastDesc, schema)))
	return o.result, err
}

func dialectGemini(t *testing.T) func(e *env, model, scenario string, stream bool) (result, error) {
	return func(e *env, model, scenario string, stream bool) (result, error) {
		cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "get_forecast", Description: forecastDesc, ParametersJsonSchema: forecastSchema},
			{Name: "get_time", ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
		}}}}
		r, _, err := callGemini(t, e, model, scenario, stream, nil, cfg)
		if err == nil {
			r.stop = canonicalGeminiStop(r.stop, len(r.toolNames) > 0)
		}
		return r, err
	}
}

// canonicalGeminiStop maps a Gemini finish reason onto the canonical stop
// reason; Gemini reports STOP for tool calls too.
func canonicalGeminiStop(finish string, calls bool) string {
	switch {
	case finish == "STOP" && calls:
		return "tool_use"
	case finish == "STOP":
		return "end_turn"
	case finish == "MAX_TOKENS":
		return "max_tokens"
	}
	return finish
}

// markers are text no client may ever see from a dialect backend.
var markers = []string{"<tool_call", "</tool_call", "<function=", "</function", "<parameter=", "<think>", "</think>", "<|"}

func checkNoMarkers(t *testing.T, what, s string) {
	t.Helper()
	for _, m := range markers {
		if strings.Contains(s, m) {
			t.Errorf("%s contains %q: %q", what, m, s)
		}
	}
}

func TestIntegrationDialects(t *testing.T) {
	e := startDialectEnv(t)
	type call func(e *env, model, scenario string, stream bool) (result, error)
	clients := []struct {
		name string
		call call
	}{
		{"anthropic", func(e *env, m, s string, st bool) (result, error) { return dialectAnthropic(e, m, s, st) }},
		{"openai_chat", dialectOpenAI},
		{"openai_responses", dialectResponses},
		{"gemini", dialectGemini(t)},
	}
	// One model per backend; every mock answers with reasoning.
	models := []string{"qwen-3-coder", "hermes-qwen3", "gptoss-20b", "prompted-qwen"}
	for _, model := range models {
		for _, c := range clients {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", model, c.name, stream), func(t *testing.T) {
					r, err := c.call(e, model, "tool", stream)
					if err != nil {
						t.Fatal(err)
					}
					if len(r.toolNames) != 1 || r.toolNames[0] != "get_forecast" || r.stop != "tool_use" {
						t.Fatalf("tool: %+v", r)
					}
					if !jsonEqual(r.toolArgs[0], forecastArgs) {
						t.Errorf("arguments %s, want %s", r.toolArgs[0], forecastArgs)
					}
					checkNoMarkers(t, "text", r.text)
					checkNoMarkers(t, "thinking", r.thinking)

					r, err = c.call(e, model, "parallel_tools", stream)
					if err != nil {
						t.Fatal(err)
					}
					if len(r.toolNames) != 2 || r.toolNames[0] != "get_forecast" || r.toolNames[1] != "get_time" || r.stop != "tool_use" {
						t.Fatalf("parallel_tools: %+v", r)
					}
					if !jsonEqual(r.toolArgs[1], "{}") {
						t.Errorf("second call's arguments %s, want {}", r.toolArgs[1])
					}

					r, err = c.call(e, model, "reasoning", stream)
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(r.text, "Hello from louter_mock") || r.stop != "end_turn" {
						t.Errorf("reasoning: text %q, stop %s", r.text, r.stop)
					}
					if !strings.Contains(r.thinking, "Let me think about this.") {
						t.Errorf("reasoning not surfaced: thinking %q", r.thinking)
					}
					checkNoMarkers(t, "text", r.text)
					checkNoMarkers(t, "thinking", r.thinking)
				})
			}
		}
	}
}

// TestIntegrationDialectOpenAIClientReasoning checks that an OpenAI Chat
// client of a dialect backend gets the reasoning in reasoning_content: with
// a dialect the answer is parsed, not passed through.
func TestIntegrationDialectOpenAIClientReasoning(t *testing.T) {
	e := startDialectEnv(t)
	for _, stream := range []bool{false, true} {
		r, err := dialectOpenAI(e, "qwen-3-coder", "reasoning", stream)
		if err != nil {
			t.Fatal(err)
		}
		if r.thinking != "Let me think about this." || !strings.HasPrefix(r.text, "Hello from louter_mock") {
			t.Errorf("stream=%v: thinking %q, text %q", stream, r.thinking, r.text)
		}
	}
}

func TestIntegrationDialectToolRoundTrip(t *testing.T) {
	e := startDialectEnv(t)
	history := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("What is the forecast for Paris?")),
		anthropic.NewAssistantMessage(
			anthropic.NewThinkingBlock("sig", "The user wants a forecast."),
			anthropic.NewToolUseBlock("toolu_01:abc.def", map[string]any{"city": "Paris", "days": 3}, "get_forecast"),
		),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01:abc.def", "sunny, 21C", false)),
	}
	t.Run("native tools", func(t *testing.T) {
		e.clearJournals()
		r, err := dialectAnthropic(e, "qwen-3-coder", "agent", true, history...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.text, "sunny, 21C") {
			t.Errorf("the backend did not see the tool result: %+v", r)
		}
		msgs := e.onlyBackendRequest().Get("body.messages").Array()
		if len(msgs) != 3 {
			t.Fatalf("backend got %d messages, want 3", len(msgs))
		}
		// The id has characters OpenAI-compatible servers reject: the
		// backend sees a valid one, the same in the call and the result.
		id := msgs[1].Get("tool_calls.0.id").String()
		if id == "toolu_01:abc.def" || strings.ContainsAny(id, ":.") || msgs[2].Get("tool_call_id").String() != id {
			t.Errorf("tool call id %q, result id %q", id, msgs[2].Get("tool_call_id"))
		}
	})
	t.Run("reasoning sent back", func(t *testing.T) {
		e.clearJournals()
		if _, err := dialectAnthropic(e, "gptoss-20b", "agent", false, history...); err != nil {
			t.Fatal(err)
		}
		msgs := e.onlyBackendRequest().Get("body.messages").Array()
		if len(msgs) != 3 || msgs[1].Get("reasoning_content").String() != "The user wants a forecast." {
			t.Errorf("assistant turn without its reasoning: %s", msgs)
		}
	})
	t.Run("tools in prompt", func(t *testing.T) {
		e.clearJournals()
		r, err := dialectAnthropic(e, "prompted-qwen", "agent", true, history...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.text, "sunny, 21C") {
			t.Errorf("the backend did not see the tool result: %+v", r)
		}
		body := e.onlyBackendRequest().Get("body")
		if body.Get("tools").Exists() || body.Get("tool_choice").Exists() || body.Get("temperature").Exists() {
			t.Errorf("tools or dropped parameters sent: %s", body.Raw)
		}
		if !body.Get("max_tokens").Exists() || body.Get("max_completion_tokens").Exists() {
			t.Errorf("max_tokens_field max_tokens not applied: %s", body.Raw)
		}
		msgs := body.Get("messages").Array()
		if len(msgs) < 4 || !strings.Contains(msgs[0].Get("content").String(), "<function>") ||
			!strings.Contains(msgs[2].Get("content").String(), "<function=get_forecast>") ||
			!strings.Contains(msgs[3].Get("content").String(), "<tool_response>") {
			t.Errorf("tools and history not rendered as text: %s", body.Get("messages").Raw)
		}
	})
}

// TestIntegrationDialectMalformedCall checks that a call the parser cannot
// read reaches the client as text, not lost and not a broken tool call.
func TestIntegrationDialectMalformedCall(t *testing.T) {
	e := startDialectEnv(t)
	for _, stream := range []bool{false, true} {
		r, err := dialectAnthropic(e, "hermes-qwen3", "fixture=dialects/hermes_malformed.sse", stream)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.toolNames) != 0 || !strings.Contains(r.text, "<tool_call>") {
			t.Errorf("stream=%v: %+v", stream, r)
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

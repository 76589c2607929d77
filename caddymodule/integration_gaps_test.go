package caddymodule_test

// Integration tests of translation details that only show across protocols:
// Gemini's includeThoughts, long tool names, Anthropic thinking signatures
// through OpenAI Chat clients, Responses answers sent only in
// response.completed, and what the Responses object echoes.

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const gapsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
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
		model via-openai* oai backend-model
		model via-anthropic* anth backend-model
		model via-responses* resp backend-model
		model via-gemini* gem backend-model
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name gaps-mock
		fixtures_dir ../testdata
	}
}
`

func startGapsEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, gapsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

// TestGeminiIncludeThoughtsAsksToThink: a genai client that sets only
// includeThoughts gets thinking from backends that think only when asked.
func TestGeminiIncludeThoughtsAsksToThink(t *testing.T) {
	e := startGapsEnv(t)
	cfg := &genai.GenerateContentConfig{
		MaxOutputTokens: 16000,
		ThinkingConfig:  &genai.ThinkingConfig{IncludeThoughts: true},
	}
	for _, tt := range []struct {
		model string
		want  map[string]string // backend body path -> value
	}{
		{"via-anthropic-1", map[string]string{"thinking.type": "enabled", "thinking.budget_tokens": "8192"}},
		{"via-responses-1", map[string]string{"reasoning.effort": "medium", "reasoning.summary": "auto"}},
	} {
		for _, stream := range []bool{false, true} {
			e.clearJournals()
			r, _, err := callGemini(t, e, tt.model, "reasoning", stream, nil, cfg)
			if err != nil {
				t.Fatalf("%s stream %v: %v", tt.model, stream, err)
			}
			if r.thinking == "" {
				t.Errorf("%s stream %v: no thoughts reached the client", tt.model, stream)
			}
			body := e.onlyBackendRequest().Get("body")
			for path, want := range tt.want {
				if got := body.Get(path).String(); got != want {
					t.Errorf("%s stream %v: backend %s = %q, want %q", tt.model, stream, path, got, want)
				}
			}
		}
	}
}

// TestResponsesBackendCompletedOnly: a Responses backend that sends its
// whole answer only in response.completed (no item events) reaches
// streaming and non-streaming clients whole.
func TestResponsesBackendCompletedOnly(t *testing.T) {
	e := startGapsEnv(t)
	const scenario = "fixture=openai_responses/completed_only.sse"
	for _, stream := range []bool{false, true} {
		for name, call := range map[string]func() (result, error){
			"anthropic":   func() (result, error) { return callAnthropic(e, "via-responses-1", scenario, stream) },
			"openai_chat": func() (result, error) { return callOpenAI(e, "via-responses-1", scenario, stream) },
		} {
			r, err := call()
			if err != nil {
				t.Fatalf("%s stream %v: %v", name, stream, err)
			}
			if r.text != "Let me look that up." || !slices.Equal(r.toolNames, []string{"get_weather"}) || r.stop != "tool_use" || r.out != 25 {
				t.Errorf("%s stream %v: %+v", name, stream, r)
			}
			if name == "anthropic" && r.thinking != "Checking the weather." {
				t.Errorf("%s stream %v: thinking %q", name, stream, r.thinking)
			}
		}
	}
}

// longMCPTool is a Claude Code MCP tool name past OpenAI's and Gemini's
// 64-character limit.
const longMCPTool = "mcp__claude_ai_Atlassian_Rovo__getAccessibleAtlassianResourcesForCurrentUser"

// TestLongToolNamesEveryBackend: a tool name longer than the backend
// accepts is shortened for every backend protocol, without any dialect
// block; the client sees its own name in the answer, streamed or not, and
// the history it sends back reaches the backend shortened the same way.
func TestLongToolNamesEveryBackend(t *testing.T) {
	e := startGapsEnv(t)
	for _, tt := range []struct {
		model    string
		toolPath string // where the backend request declares the first tool's name
	}{
		{"via-openai-1", "tools.0.function.name"},
		{"via-responses-1", "tools.0.name"},
		{"via-gemini-1", "tools.0.functionDeclarations.0.name"},
	} {
		for _, stream := range []bool{false, true} {
			params := anthropicParams(tt.model)
			params.Tools = append([]anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				Name:        longMCPTool,
				InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"q": map[string]any{"type": "string"}}},
			}}}, params.Tools...)
			e.clearJournals()
			msg, err := anthropicMessage(e, "tool", stream, params)
			if err != nil {
				t.Fatalf("%s stream %v: %v", tt.model, stream, err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Name != longMCPTool {
				t.Fatalf("%s stream %v: the client got %+v, want a call of %s", tt.model, stream, msg.Content, longMCPTool)
			}
			sent := e.onlyBackendRequest().Get("body")
			short := sent.Get(tt.toolPath).String()
			if len(short) > 64 || short == "" || !strings.HasPrefix(longMCPTool, short[:40]) {
				t.Fatalf("%s: the backend was offered %q", tt.model, short)
			}

			// The next turn: the call and its result, in the client's names.
			params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(
				anthropic.NewToolResultBlock(msg.Content[0].ID, "3 sites", false)))
			e.clearJournals()
			if _, err := anthropicMessage(e, "echo", stream, params); err != nil {
				t.Fatalf("%s stream %v, second turn: %v", tt.model, stream, err)
			}
			body := e.onlyBackendRequest().Get("body").Raw
			if strings.Contains(body, longMCPTool) || strings.Count(body, `"`+short+`"`) < 2 {
				t.Errorf("%s stream %v: history not shortened as %q:\n%s", tt.model, stream, short, body)
			}
		}
	}
}

// anthropicMessage sends params with the Anthropic SDK and returns the
// whole message, streamed or not.
func anthropicMessage(e *env, scenario string, stream bool, params anthropic.MessageNewParams) (*anthropic.Message, error) {
	client := anthropicClient(e, scenario)
	ctx := context.Background()
	if !stream {
		return client.Messages.New(ctx, params)
	}
	var msg anthropic.Message
	s := client.Messages.NewStreaming(ctx, params)
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			return nil, err
		}
	}
	return &msg, s.Err()
}

// TestAnthropicSignatureSurvivesOpenAIClient: an OpenAI Chat client on an
// Anthropic backend with thinking on sends the tool-call turn back as
// openai-go's ToParam keeps it (content, tool-call ids, names, arguments;
// no reasoning_content). The backend still receives the thinking block,
// signed, first in the assistant turn, and thinking stays on.
func TestAnthropicSignatureSurvivesOpenAIClient(t *testing.T) {
	e := startGapsEnv(t)
	const sig = "EuYBCkQYAiJAk9Rz1pN0Uq3Jm0f8Wc2s7XhTgQfLr5vY1bKcA+eDpUoMiHnJ/3wZx6tVy4qE0sRlG8aFkCj2Oh5PdBmI9NnXEgx0aWQtc2lnbmF0dXJlGgwQ5Yz4pL8mN2rT6vUiMGRmYWtlIGJ1dCBzaGFwZWQgbGlrZSBhIHJlYWwgc2lnbmF0dXJl"
	for _, stream := range []bool{false, true} {
		body := openaiToolTurnViaToParam(t, e, "via-anthropic-1", "fixture=anthropic/stream_thinking_tool_use.sse", stream)
		turn := body.Get("messages.1.content")
		if b := turn.Get("0"); b.Get("type").Str != "thinking" || b.Get("signature").Str != sig ||
			b.Get("thinking").Str != "The user wants the weather in Paris. I will call get_weather." {
			t.Errorf("stream %v: the assistant turn starts with %s", stream, b.Raw)
		}
		if last := turn.Get(strconv.Itoa(len(turn.Array()) - 1)); last.Get("type").Str != "tool_use" || last.Get("id").Str != "toolu_01ThinkTool" {
			t.Errorf("stream %v: tool_use %s", stream, last.Raw)
		}
		if r := body.Get("messages.2.content.0"); r.Get("tool_use_id").Str != "toolu_01ThinkTool" {
			t.Errorf("stream %v: tool_result %s", stream, r.Raw)
		}
		if body.Get("thinking.type").Str != "enabled" {
			t.Errorf("stream %v: thinking %s", stream, body.Get("thinking").Raw)
		}
	}
}

// TestResponsesObjectEchoesRequest: the response object a Responses client
// gets, whole or in each stream event that carries one, repeats the
// request's tools, tool choice, sampling, output limit and reasoning, as
// the real API does.
func TestResponsesObjectEchoesRequest(t *testing.T) {
	e := startGapsEnv(t)
	params := responses.ResponseNewParams{
		Model:             "via-anthropic-1",
		Input:             responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")},
		Tools:             respWeatherTools(),
		ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		Temperature:       openai.Float(0.25),
		TopP:              openai.Float(0.5),
		MaxOutputTokens:   openai.Int(3000),
		ParallelToolCalls: openai.Bool(false),
		Reasoning:         shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryDetailed},
	}
	check := func(where string, r *responses.Response) {
		t.Helper()
		if len(r.Tools) != 2 || r.Tools[0].Name != weatherTool.name || r.Tools[0].Type != "function" ||
			!strings.Contains(r.Tools[0].RawJSON(), `"required":["city"]`) || r.Tools[1].Name != "get_time" {
			t.Errorf("%s: tools %s", where, r.JSON.Tools.Raw())
		}
		if r.ToolChoice.OfToolChoiceMode != responses.ToolChoiceOptionsRequired {
			t.Errorf("%s: tool_choice %s", where, r.JSON.ToolChoice.Raw())
		}
		if r.Temperature != 0.25 || r.TopP != 0.5 || r.MaxOutputTokens != 3000 || r.ParallelToolCalls {
			t.Errorf("%s: temperature %v top_p %v max_output_tokens %v parallel %v", where, r.Temperature, r.TopP, r.MaxOutputTokens, r.ParallelToolCalls)
		}
		if r.Reasoning.Effort != shared.ReasoningEffortLow || r.Reasoning.Summary != shared.ReasoningSummaryDetailed {
			t.Errorf("%s: reasoning %s", where, r.JSON.Reasoning.Raw())
		}
	}
	client := responsesClient(e, "tool")
	r, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	check("response", r)
	s := client.Responses.NewStreaming(context.Background(), params)
	seen := 0
	for s.Next() {
		switch ev := s.Current(); ev.Type {
		case "response.created", "response.in_progress", "response.completed":
			seen++
			check(ev.Type, &ev.Response)
		}
	}
	if err := s.Err(); err != nil || seen != 3 {
		t.Fatalf("stream: %v, %d response objects", err, seen)
	}
}

// TestResponsesReasoningSurvivesOpenAIClient: a Responses backend's
// encrypted reasoning comes back to it, as a reasoning item before the
// function call, from an OpenAI Chat client that echoes only what ToParam
// keeps.
func TestResponsesReasoningSurvivesOpenAIClient(t *testing.T) {
	e := startGapsEnv(t)
	for _, stream := range []bool{false, true} {
		body := openaiToolTurnViaToParam(t, e, "via-responses-1", "fixture=openai_responses/reasoning_tool_call.sse", stream)
		var types []string
		var reasoning, call gjson.Result
		body.Get("input").ForEach(func(_, it gjson.Result) bool {
			types = append(types, it.Get("type").Str)
			switch it.Get("type").Str {
			case "reasoning":
				reasoning = it
			case "function_call":
				call = it
			}
			return true
		})
		if !slices.Equal(types, []string{"message", "reasoning", "function_call", "function_call_output"}) {
			t.Fatalf("stream %v: input items %v", stream, types)
		}
		if reasoning.Get("id").Str != "rs_68c2e5f21c48819093e1c0b4f2a5d6e70c7b9e2f1a6d8c3b" ||
			reasoning.Get("encrypted_content").Str != "gAAAAABowuXyQm9uZ2VuY3J5cHRlZF9yZWFzb25pbmdfYmxvYl9mb3JfdGVzdHNfMDEyMzQ1Njc4OQ==" {
			t.Errorf("stream %v: reasoning item %s", stream, reasoning.Raw)
		}
		if call.Get("call_id").Str != "call_Wz0cXPzcbS1qPN2mDPbUy8Wd" {
			t.Errorf("stream %v: function call %s", stream, call.Raw)
		}
	}
}

// openaiToolTurnViaToParam has the OpenAI Chat SDK ask model for a tool
// call (the backend answers as scenario says), sends the answer back as
// ToParam keeps it with the tool's result, and returns the body the
// backend received for that second turn.
func openaiToolTurnViaToParam(t *testing.T, e *env, model, scenario string, stream bool) gjson.Result {
	t.Helper()
	params := openaiParams(model)
	params.ReasoningEffort = shared.ReasoningEffortMedium
	params.MaxCompletionTokens = openai.Int(16000)
	client := openaiClient(e, scenario)
	var m openai.ChatCompletionMessage
	if stream {
		s := client.Chat.Completions.NewStreaming(context.Background(), params)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		m = acc.Choices[0].Message
	} else {
		c, err := client.Chat.Completions.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		m = c.Choices[0].Message
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "get_weather" {
		t.Fatalf("stream %v: tool calls %+v", stream, m.ToolCalls)
	}
	params.Messages = append(params.Messages, m.ToParam(), openai.ToolMessage("sunny", m.ToolCalls[0].ID))
	e.clearJournals()
	echo := openaiClient(e, "echo")
	if _, err := echo.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatalf("stream %v, second turn: %v", stream, err)
	}
	return e.onlyBackendRequest().Get("body")
}

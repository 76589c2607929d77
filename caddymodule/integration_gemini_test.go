package caddymodule_test

// Integration tests of the Gemini protocol through a real, in-process
// Caddy: the official genai Go SDK as client against OpenAI Chat and
// Anthropic backends, and the Anthropic and OpenAI SDKs against a Gemini
// backend (louter_mock answering as Gemini), streaming and not.

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

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const geminiCaddyfile = `
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
		backend gem {
			protocol gemini
			api_key gem-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model gemini-via-openai* oai backend-model
		model gemini-via-anthropic* anth backend-model
		model claude-via-gemini* gem gemini-backend-model
		model gpt-via-gemini* gem gemini-backend-model
		model gemini-native* gem
		model gemini-listed oai
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name gemini-mock
	}
}
`

func startGeminiEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, geminiCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

func geminiClient(t *testing.T, e *env, scenario string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:  "gemini-client-key",
		Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: e.louter + "/gemini/",
			Headers: http.Header{"X-Mock-Scenario": {scenario}},
			Timeout: genai.Ptr(30 * time.Second),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func geminiConfig() *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "get_weather", Description: "Get the weather for a city", ParametersJsonSchema: map[string]any{
				"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}},
			{Name: "get_time", Description: "The time"},
		}}},
		ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](2048)},
	}
}

// callGemini sends contents with the genai SDK and folds the answer into a
// result; finish is Gemini's finishReason.
func callGemini(t *testing.T, e *env, model, scenario string, stream bool, contents []*genai.Content, cfg *genai.GenerateContentConfig) (r result, finish string, err error) {
	t.Helper()
	c := geminiClient(t, e, scenario)
	if contents == nil {
		contents = genai.Text("What is the weather in Paris?")
	}
	if cfg == nil {
		cfg = geminiConfig()
	}
	ctx := context.Background()
	add := func(resp *genai.GenerateContentResponse) {
		if len(resp.Candidates) > 0 {
			cand := resp.Candidates[0]
			if cand.Content != nil {
				for _, p := range cand.Content.Parts {
					switch {
					case p.FunctionCall != nil:
						args, _ := json.Marshal(p.FunctionCall.Args)
						r.toolNames = append(r.toolNames, p.FunctionCall.Name)
						r.toolArgs = append(r.toolArgs, string(args))
					case p.Thought:
						r.thinking += p.Text
					default:
						r.text += p.Text
					}
				}
			}
			if cand.FinishReason != "" {
				finish = string(cand.FinishReason)
			}
		}
		if u := resp.UsageMetadata; u != nil {
			r.in, r.out = int64(u.PromptTokenCount), int64(u.CandidatesTokenCount+u.ThoughtsTokenCount)
		}
	}
	if stream {
		for resp, err := range c.Models.GenerateContentStream(ctx, model, contents, cfg) {
			if err != nil {
				return r, finish, err
			}
			add(resp)
		}
	} else {
		resp, err := c.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return r, finish, err
		}
		add(resp)
	}
	r.stop = finish
	return r, finish, nil
}

var geminiBackends = []struct{ model, protocol, path string }{
	{"gemini-via-openai-1", "openai_chat", "/v1/chat/completions"},
	{"gemini-via-anthropic-1", "anthropic", "/v1/messages"},
}

func TestGeminiClientScenarios(t *testing.T) {
	e := startGeminiEnv(t)
	tests := []struct {
		scenario string
		check    func(t *testing.T, r result, finish string)
	}{
		{"text", func(t *testing.T, r result, finish string) {
			if !strings.HasPrefix(r.text, "Hello from louter_mock") || finish != "STOP" {
				t.Errorf("text %q finish %q", r.text, finish)
			}
		}},
		{"tool", func(t *testing.T, r result, finish string) {
			if len(r.toolNames) != 1 || r.toolNames[0] != "get_weather" || !gjson.Get(r.toolArgs[0], "city").Exists() || finish != "STOP" {
				t.Errorf("calls %v %v finish %q", r.toolNames, r.toolArgs, finish)
			}
		}},
		{"parallel_tools", func(t *testing.T, r result, finish string) {
			if len(r.toolNames) != 2 || r.toolNames[1] != "get_time" || r.toolArgs[1] != "{}" {
				t.Errorf("calls %v %v", r.toolNames, r.toolArgs)
			}
		}},
		{"reasoning", func(t *testing.T, r result, finish string) {
			if r.thinking != "Let me think about this." || !strings.HasPrefix(r.text, "Hello") {
				t.Errorf("thinking %q text %q", r.thinking, r.text)
			}
		}},
		{"long", func(t *testing.T, r result, finish string) {
			if !strings.HasSuffix(r.text, "word200 ") {
				t.Errorf("text ends %q", r.text[max(0, len(r.text)-20):])
			}
		}},
	}
	for _, b := range geminiBackends {
		for _, stream := range []bool{false, true} {
			for _, tt := range tests {
				name := b.protocol + "/" + tt.scenario
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					e.clearJournals()
					r, finish, err := callGemini(t, e, b.model, tt.scenario, stream, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					tt.check(t, r, finish)
					if r.in <= 0 || r.out <= 0 {
						t.Errorf("usage not delivered: in=%d out=%d", r.in, r.out)
					}
					got := e.onlyBackendRequest()
					if got.Get("protocol").Str != b.protocol || got.Get("path").Str != b.path {
						t.Errorf("backend got %s %s", got.Get("protocol"), got.Get("path"))
					}
					body := got.Get("body")
					if body.Get("model").Str != "backend-model" || body.Get("stream").Bool() != stream {
						t.Errorf("backend body model %q stream %v", body.Get("model"), body.Get("stream"))
					}
				})
			}
		}
	}
}

// TestGeminiClientToolRoundTrip replays Gemini CLI's history shape (calls
// without ids answered by name, a placeholder signature) to both backends:
// every tool result must name its call's id, and images in function
// responses must arrive.
func TestGeminiClientToolRoundTrip(t *testing.T) {
	e := startGeminiEnv(t)
	png := []byte("\x89PNG\r\n\x1a\n-louter-test-image-")
	call := genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"})
	call.ThoughtSignature = []byte("skip_thought_signature_validator")
	call2 := genai.NewPartFromFunctionCall("get_time", map[string]any{})
	contents := []*genai.Content{
		genai.NewContentFromText("What is the weather in Paris, and the time?", genai.RoleUser),
		genai.NewContentFromParts([]*genai.Part{call, call2}, genai.RoleModel),
		genai.NewContentFromParts([]*genai.Part{
			genai.NewPartFromFunctionResponse("get_time", map[string]any{"output": "noon"}),
			genai.NewPartFromFunctionResponseWithParts("get_weather", map[string]any{"output": "sunny"},
				[]*genai.FunctionResponsePart{genai.NewFunctionResponsePartFromBytes(png, "image/png")}),
			genai.NewPartFromBytes(png, "image/png"),
		}, genai.RoleUser),
	}
	for _, b := range geminiBackends {
		t.Run(b.protocol, func(t *testing.T) {
			e.clearJournals()
			r, _, err := callGemini(t, e, b.model, "echo", true, contents, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = r
			body := e.onlyBackendRequest().Get("body")
			raw := body.Raw
			if strings.Count(raw, base64.StdEncoding.EncodeToString(png)) < 2 {
				t.Errorf("images lost: %s", raw)
			}
			var callIDs, resultIDs []string
			switch b.protocol {
			case "openai_chat":
				body.Get("messages").ForEach(func(_, m gjson.Result) bool {
					m.Get("tool_calls").ForEach(func(_, c gjson.Result) bool { callIDs = append(callIDs, c.Get("id").Str); return true })
					if m.Get("role").Str == "tool" {
						resultIDs = append(resultIDs, m.Get("tool_call_id").Str)
					}
					return true
				})
			case "anthropic":
				body.Get("messages").ForEach(func(_, m gjson.Result) bool {
					m.Get("content").ForEach(func(_, c gjson.Result) bool {
						switch c.Get("type").Str {
						case "tool_use":
							callIDs = append(callIDs, c.Get("id").Str)
						case "tool_result":
							resultIDs = append(resultIDs, c.Get("tool_use_id").Str)
						}
						return true
					})
					return true
				})
			}
			if len(callIDs) != 2 || len(resultIDs) != 2 || callIDs[0] == callIDs[1] {
				t.Fatalf("calls %v results %v in %s", callIDs, resultIDs, raw)
			}
			// The time result came first but answers the second call.
			if resultIDs[0] != callIDs[1] || resultIDs[1] != callIDs[0] {
				t.Errorf("results %v do not answer calls %v", resultIDs, callIDs)
			}
		})
	}
}

func TestGeminiClientStructuredOutput(t *testing.T) {
	e := startGeminiEnv(t)
	cfg := &genai.GenerateContentConfig{
		ResponseMIMEType: "application/json",
		// Gemini CLI's router sends Gemini's upper-case types here.
		ResponseJsonSchema: map[string]any{"type": "OBJECT", "properties": map[string]any{
			"model_choice": map[string]any{"type": "STRING", "enum": []string{"flash", "pro"}}}, "required": []string{"model_choice"}},
	}
	e.clearJournals()
	if _, _, err := callGemini(t, e, "gemini-via-openai-1", "text", false, nil, cfg); err != nil {
		t.Fatal(err)
	}
	rf := e.onlyBackendRequest().Get("body.response_format")
	if rf.Get("type").Str != "json_schema" || rf.Get("json_schema.schema.type").Str != "object" || rf.Get("json_schema.schema.properties.model_choice.type").Str != "string" {
		t.Errorf("response_format %s", rf.Raw)
	}
}

func TestGeminiClientErrors(t *testing.T) {
	e := startGeminiEnv(t)
	for _, b := range geminiBackends {
		for _, tt := range []struct {
			scenario string
			code     int
			status   string
		}{{"error_429", 429, "RESOURCE_EXHAUSTED"}, {"error_401", 401, "UNAUTHENTICATED"}, {"error_400", 400, "INVALID_ARGUMENT"}} {
			_, _, err := callGemini(t, e, b.model, tt.scenario, false, nil, nil)
			var ae genai.APIError
			if !errors.As(err, &ae) || ae.Code != tt.code || ae.Status != tt.status {
				t.Errorf("%s %s: %v", b.protocol, tt.scenario, err)
			}
		}
		// Mid-stream: the SDK's iterator returns the error.
		_, _, err := callGemini(t, e, b.model, "stream_error", true, nil, nil)
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Status != "UNAVAILABLE" {
			t.Errorf("%s stream_error: %v", b.protocol, err)
		}
	}
	// An unknown model is a Gemini 404.
	_, _, err := callGemini(t, e, "no-such-model", "text", false, nil, nil)
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 404 {
		t.Errorf("unknown model: %v", err)
	}
}

// TestGeminiClientJSONArrayAndAux covers what the SDK does not use: the
// streamed JSON array (no alt=sse), ?key= credentials, countTokens and the
// model list.
func TestGeminiClientJSONArrayAndAux(t *testing.T) {
	e := startGeminiEnv(t)
	e.clearJournals()
	resp := post(t, e.louter+"/v1beta/models/gemini-via-anthropic-1:streamGenerateContent?key=client-key",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	body, _ := io.ReadAll(resp.Body)
	var chunks []map[string]any
	if err := json.Unmarshal(body, &chunks); err != nil || len(chunks) < 2 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%v %q:\n%s", err, resp.Header.Get("Content-Type"), body)
	}
	if !strings.Contains(string(body), `"finishReason":"STOP"`) {
		t.Errorf("no finish reason:\n%s", body)
	}
	got := e.onlyBackendRequest()
	if got.Get("query").Str != "" && strings.Contains(got.Get("query").Raw, "client-key") || strings.Contains(got.Get("headers").Raw, "client-key") {
		t.Errorf("the client's key reached the backend: %s", got.Raw)
	}

	resp = post(t, e.louter+"/v1beta/models/gemini-via-openai-1:countTokens", `{"contents":[{"parts":[{"text":"count these tokens please"}]}]}`)
	body, _ = io.ReadAll(resp.Body)
	if gjson.GetBytes(body, "totalTokens").Int() <= 0 {
		t.Errorf("countTokens: %d %s", resp.StatusCode, body)
	}
	for path, want := range map[string]string{"/v1beta/models": "models.#(name==\"models/gemini-listed\")", "/v1beta/models/gemini-listed": "supportedGenerationMethods"} {
		r, err := testcaddy.Client.Get(e.louter + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !gjson.GetBytes(b, want).Exists() {
			t.Errorf("GET %s: %d %s", path, r.StatusCode, b)
		}
	}
	r, _ := testcaddy.Client.Get(e.louter + "/v1beta/models/unknown")
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("unknown model: %d", r.StatusCode)
	}
}

// TestGeminiBackend drives a Gemini backend with the Anthropic and OpenAI
// SDKs.
func TestGeminiBackend(t *testing.T) {
	e := startGeminiEnv(t)
	type call func(e *env, model, scenario string, stream bool) (result, error)
	sdks := []struct {
		name, model string
		call        call
	}{
		{"anthropic", "claude-via-gemini-1", func(e *env, m, s string, st bool) (result, error) { return callAnthropic(e, m, s, st) }},
		{"openai_chat", "gpt-via-gemini-1", func(e *env, m, s string, st bool) (result, error) { return callOpenAI(e, m, s, st) }},
	}
	for _, sdk := range sdks {
		for _, stream := range []bool{false, true} {
			for _, scenario := range []string{"text", "tool", "parallel_tools", "reasoning"} {
				name := sdk.name + "/" + scenario
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					e.clearJournals()
					r, err := sdk.call(e, sdk.model, scenario, stream)
					if err != nil {
						t.Fatal(err)
					}
					switch scenario {
					case "text":
						if !strings.HasPrefix(r.text, "Hello from louter_mock") || r.stop != "end_turn" {
							t.Errorf("text %q stop %q", r.text, r.stop)
						}
					case "tool":
						if len(r.toolNames) != 1 || r.toolNames[0] != "get_weather" || r.stop != "tool_use" || !gjson.Get(r.toolArgs[0], "city").Exists() {
							t.Errorf("calls %v %v stop %q", r.toolNames, r.toolArgs, r.stop)
						}
					case "parallel_tools":
						if len(r.toolNames) != 2 || r.toolArgs[1] != "{}" || r.stop != "tool_use" {
							t.Errorf("calls %v %v stop %q", r.toolNames, r.toolArgs, r.stop)
						}
					case "reasoning":
						if r.thinking != "Let me think about this." {
							t.Errorf("thinking %q", r.thinking)
						}
					}
					if r.in <= 0 || r.out <= 0 {
						t.Errorf("usage in=%d out=%d", r.in, r.out)
					}
					got := e.onlyBackendRequest()
					wantPath, wantQuery := "/v1beta/models/gemini-backend-model:generateContent", ""
					if stream {
						wantPath, wantQuery = "/v1beta/models/gemini-backend-model:streamGenerateContent", "alt=sse"
					}
					if got.Get("protocol").Str != "gemini" || got.Get("path").Str != wantPath || got.Get("query").Str != wantQuery {
						t.Errorf("backend got %s %s?%s", got.Get("protocol"), got.Get("path"), got.Get("query"))
					}
					if k := got.Get("headers.X-Goog-Api-Key.0").Str + got.Get("headers.X-Goog-Api-Key").Str; !strings.Contains(k, "gem-backend-key") {
						t.Errorf("backend key: %s", got.Get("headers").Raw)
					}
					if body := got.Get("body"); body.Get("model").Exists() || !body.Get("contents").IsArray() {
						t.Errorf("backend body %s", body.Raw)
					}
				})
			}
		}
	}
}

// TestGeminiBackendToolRoundTrip checks that the thought signature Gemini
// put on its function call survives an Anthropic client (in the tool-use
// id) and an OpenAI client (in the tool-call id) and goes back on the
// functionCall part, and that each tool result gets its function's name.
func TestGeminiBackendToolRoundTrip(t *testing.T) {
	e := startGeminiEnv(t)
	wantSig := base64.StdEncoding.EncodeToString([]byte("louter_mock thought signature"))
	check := func(t *testing.T) {
		t.Helper()
		got := e.onlyBackendRequest()
		contents := got.Get("body").Get("contents")
		fc := contents.Get("1.parts.#(functionCall).functionCall")
		sig := contents.Get("1.parts.#(functionCall).thoughtSignature").Str
		fr := contents.Get("2.parts.0.functionResponse")
		if fc.Get("name").Str != "get_weather" || sig != wantSig {
			t.Errorf("functionCall %s signature %q, want %q", fc.Raw, sig, wantSig)
		}
		if fr.Get("name").Str != "get_weather" || fr.Get("response.output").Str != "sunny" || fr.Get("id").Str != fc.Get("id").Str {
			t.Errorf("functionResponse %s for call %s", fr.Raw, fc.Raw)
		}
	}
	t.Run("anthropic", func(t *testing.T) {
		client := anthropicClient(e, "tool")
		params := anthropicParams("claude-via-gemini-1")
		msg, err := client.Messages.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				id = b.ID
			}
		}
		if !strings.Contains(id, "-ts-") {
			t.Fatalf("tool use id %q carries no signature", id)
		}
		params.Messages = append(params.Messages, msg.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "sunny", false)))
		e.clearJournals()
		echo := anthropicClient(e, "echo")
		if _, err := echo.Messages.New(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		check(t)
	})
	t.Run("openai_chat", func(t *testing.T) {
		client := openaiClient(e, "tool")
		params := openaiParams("gpt-via-gemini-1")
		c, err := client.Chat.Completions.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		m := c.Choices[0].Message
		if len(m.ToolCalls) != 1 {
			t.Fatalf("tool calls %+v", m.ToolCalls)
		}
		params.Messages = append(params.Messages, m.ToParam(), openai.ToolMessage("sunny", m.ToolCalls[0].ID))
		e.clearJournals()
		echo := openaiClient(e, "echo")
		if _, err := echo.Chat.Completions.New(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		check(t)
	})
}

func TestGeminiBackendErrors(t *testing.T) {
	e := startGeminiEnv(t)
	for _, tt := range []struct {
		scenario string
		status   int
		anthType string
	}{{"error_429", 429, "rate_limit_error"}, {"error_401", 401, "authentication_error"}, {"error_500", 500, "api_error"}} {
		_, err := callAnthropic(e, "claude-via-gemini-1", tt.scenario, false)
		if status, typ := apiErrorOf(t, err); status != tt.status || typ != tt.anthType {
			t.Errorf("%s: %d %s", tt.scenario, status, typ)
		}
		_, err = callOpenAI(e, "gpt-via-gemini-1", tt.scenario, true)
		if status, _ := apiErrorOf(t, err); status != tt.status {
			t.Errorf("openai %s: %d", tt.scenario, status)
		}
	}
	_, err := callAnthropic(e, "claude-via-gemini-1", "stream_error", true)
	if err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("mid-stream error: %v", err)
	}
}

// TestGeminiPassthrough: a Gemini client on a Gemini backend passes
// through, the model renamed in the path only.
func TestGeminiPassthrough(t *testing.T) {
	e := startGeminiEnv(t)
	for _, stream := range []bool{false, true} {
		e.clearJournals()
		r, finish, err := callGemini(t, e, "gemini-native-1", "tool", stream, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.toolNames) != 1 || finish != "STOP" {
			t.Errorf("stream %v: %+v %q", stream, r, finish)
		}
		got := e.onlyBackendRequest()
		if !strings.HasPrefix(got.Get("path").Str, "/v1beta/models/gemini-native-1:") || got.Get("body").Get("model").Exists() {
			t.Errorf("backend got %s %s", got.Get("path"), got.Get("body"))
		}
	}
}

// TestGeminiClientOverloaded: an overloaded backend reaches a Gemini client
// as Gemini reports it, 503 UNAVAILABLE, never with Anthropic's 529.
func TestGeminiClientOverloaded(t *testing.T) {
	e := startGeminiEnv(t)
	for _, model := range []string{"gemini-via-anthropic-1", "gemini-via-openai-1"} {
		for _, stream := range []bool{false, true} {
			_, _, err := callGemini(t, e, model, "error_overloaded", stream, nil, nil)
			var ae genai.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("%s stream %v: not an API error: %v", model, stream, err)
			}
			if ae.Code != http.StatusServiceUnavailable || ae.Status != "UNAVAILABLE" {
				t.Errorf("%s stream %v: %d %s, want 503 UNAVAILABLE", model, stream, ae.Code, ae.Status)
			}
		}
	}
}

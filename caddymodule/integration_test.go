package caddymodule_test

// Integration tests through a real, in-process Caddy: Caddyfile → louter →
// stock reverse_proxy → louter_mock, with the official Anthropic and OpenAI
// Go SDKs as clients, streaming and not, in all four directions.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const integrationCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Dialect
		backend oai {
			protocol openai_chat
			api_key oai-backend-key
			reverse_proxy 127.0.0.1:{PORT1} 127.0.0.1:{PORT2} {
				lb_policy round_robin
			}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai-passauth {
			protocol openai_chat
			pass_client_auth
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend dead {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT3}
		}
		model claude-via-openai* oai backend-model
		model gpt-via-anthropic* anth backend-model
		model claude-native* anth
		model gpt-native* oai
		model gpt-passauth* oai-passauth
		model dead-* dead
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name mock-a
	}
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name mock-b
	}
}
`

// env is one running Caddy shared by the tests of this file.
type env struct {
	t      *testing.T
	louter string
	mocks  []string
}

func startEnv(t *testing.T) *env {
	t.Helper()
	return startMockEnv(t, testcaddy.Options{}, integrationCaddyfile, 2)
}

// startMockEnv starts caddyfile, louter on {PORT0} and louter_mock on
// the mocks ports after it ({PORT1}, ...), and waits until they all
// listen.
func startMockEnv(t *testing.T, opts testcaddy.Options, caddyfile string, mocks int) *env {
	t.Helper()
	ports := testcaddy.StartWith(t, opts, caddyfile)
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	for _, p := range ports[1 : 1+mocks] {
		testcaddy.WaitListening(t, p)
		e.mocks = append(e.mocks, testcaddy.URL(p))
	}
	return e
}

func (e *env) clearJournals() {
	for _, m := range e.mocks {
		req, _ := http.NewRequest(http.MethodDelete, m+"/_mock/requests", nil)
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			e.t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// backendRequests returns what the mock backends received since the last
// clearJournals, across both mocks.
func (e *env) backendRequests() []gjson.Result {
	var out []gjson.Result
	for _, m := range e.mocks {
		resp, err := testcaddy.Client.Get(m + "/_mock/requests")
		if err != nil {
			e.t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out = append(out, gjson.ParseBytes(body).Array()...)
	}
	return out
}

// onlyBackendRequest returns the single request the backends received.
func (e *env) onlyBackendRequest() gjson.Result {
	e.t.Helper()
	reqs := e.backendRequests()
	if len(reqs) != 1 {
		e.t.Fatalf("backends received %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// result is what a client saw, whatever its protocol.
type result struct {
	text, thinking string
	toolNames      []string
	toolArgs       []string
	stop           string // canonical: end_turn, tool_use, max_tokens
	in, out        int64
}

var weatherTool = struct{ name, desc string }{"get_weather", "Get the weather for a city"}

func anthropicClient(e *env, scenario string, opts ...aoption.RequestOption) anthropic.Client {
	opts = append([]aoption.RequestOption{
		aoption.WithBaseURL(e.louter + "/anthropic"),
		aoption.WithAPIKey("sk-ant-client-key"),
		aoption.WithMaxRetries(0),
		aoption.WithRequestTimeout(30 * time.Second),
		aoption.WithHeader("X-Mock-Scenario", scenario),
	}, opts...)
	return anthropic.NewClient(opts...)
}

func anthropicParams(model string, msgs ...anthropic.MessageParam) anthropic.MessageNewParams {
	if len(msgs) == 0 {
		msgs = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))}
	}
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 1024,
		Messages:  msgs,
		Tools: []anthropic.ToolUnionParam{
			{OfTool: &anthropic.ToolParam{
				Name:        weatherTool.name,
				Description: anthropic.String(weatherTool.desc),
				InputSchema: anthropic.ToolInputSchemaParam{
					Properties: map[string]any{"city": map[string]any{"type": "string"}},
					Required:   []string{"city"},
				},
			}},
			{OfTool: &anthropic.ToolParam{
				Name:        "get_time",
				InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
			}},
		},
	}
}

func callAnthropic(e *env, model, scenario string, stream bool, msgs ...anthropic.MessageParam) (result, error) {
	return runAnthropic(e, scenario, stream, anthropicParams(model, msgs...))
}

// runAnthropic sends params with the Anthropic SDK and reads the answer.
func runAnthropic(e *env, scenario string, stream bool, params anthropic.MessageNewParams) (result, error) {
	client := anthropicClient(e, scenario)
	ctx := context.Background()
	var msg anthropic.Message
	if stream {
		s := client.Messages.NewStreaming(ctx, params)
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				return result{}, fmt.Errorf("accumulate: %w", err)
			}
		}
		if err := s.Err(); err != nil {
			return result{}, err
		}
	} else {
		m, err := client.Messages.New(ctx, params)
		if err != nil {
			return result{}, err
		}
		msg = *m
	}
	var r result
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.text += b.Text
		case "thinking":
			r.thinking += b.Thinking
		case "tool_use":
			r.toolNames = append(r.toolNames, b.Name)
			r.toolArgs = append(r.toolArgs, string(b.Input))
		}
	}
	r.stop = string(msg.StopReason)
	r.in, r.out = msg.Usage.InputTokens+msg.Usage.CacheReadInputTokens+msg.Usage.CacheCreationInputTokens, msg.Usage.OutputTokens
	return r, nil
}

func openaiClient(e *env, scenario string) openai.Client {
	return openai.NewClient(
		ooption.WithBaseURL(e.louter+"/v1/"),
		ooption.WithAPIKey("sk-openai-client-key"),
		ooption.WithMaxRetries(0),
		ooption.WithRequestTimeout(30*time.Second),
		ooption.WithHeader("X-Mock-Scenario", scenario),
	)
}

func openaiParams(model string, msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	if len(msgs) == 0 {
		msgs = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")}
	}
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: msgs,
		Tools: []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:        weatherTool.name,
				Description: openai.String(weatherTool.desc),
				Parameters: shared.FunctionParameters{
					"type":       "object",
					"properties": map[string]any{"city": map[string]any{"type": "string"}},
					"required":   []string{"city"},
				},
			}),
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:       "get_time",
				Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}},
			}),
		},
	}
}

func canonicalFinish(f string) string {
	switch f {
	case "stop":
		return "end_turn"
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return f
}

func callOpenAI(e *env, model, scenario string, stream bool, msgs ...openai.ChatCompletionMessageParamUnion) (result, error) {
	return runOpenAI(e, scenario, stream, openaiParams(model, msgs...))
}

// runOpenAI sends params with the OpenAI SDK and reads the answer, the
// reasoning_content extension included.
func runOpenAI(e *env, scenario string, stream bool, params openai.ChatCompletionNewParams) (result, error) {
	client := openaiClient(e, scenario)
	ctx := context.Background()
	var r result
	var c openai.ChatCompletion
	if stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			chunk := s.Current()
			if !acc.AddChunk(chunk) {
				return result{}, fmt.Errorf("accumulator rejected chunk %s", chunk.RawJSON())
			}
			if len(chunk.Choices) > 0 {
				if f, ok := chunk.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
					var s string
					_ = json.Unmarshal([]byte(f.Raw()), &s)
					r.thinking += s
				}
			}
		}
		if err := s.Err(); err != nil {
			return result{}, err
		}
		c = acc.ChatCompletion
	} else {
		cc, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return result{}, err
		}
		c = *cc
		if f, ok := c.Choices[0].Message.JSON.ExtraFields["reasoning_content"]; ok {
			_ = json.Unmarshal([]byte(f.Raw()), &r.thinking)
		}
	}
	if len(c.Choices) != 1 {
		return result{}, fmt.Errorf("got %d choices", len(c.Choices))
	}
	m := c.Choices[0].Message
	r.text = m.Content
	for _, tc := range m.ToolCalls {
		r.toolNames = append(r.toolNames, tc.Function.Name)
		r.toolArgs = append(r.toolArgs, tc.Function.Arguments)
	}
	r.stop = canonicalFinish(c.Choices[0].FinishReason)
	r.in, r.out = c.Usage.PromptTokens, c.Usage.CompletionTokens
	return r, nil
}

// client is one protocol's SDK driving louter with a model that routes to a
// backend.
type client struct {
	name    string
	model   string
	backend string // the protocol the backend must have received
	call    func(e *env, model, scenario string, stream bool) (result, error)
}

var clients = []client{
	{"anthropic->openai_chat", "claude-via-openai-1", "openai_chat", func(e *env, m, s string, st bool) (result, error) { return callAnthropic(e, m, s, st) }},
	{"openai_chat->anthropic", "gpt-via-anthropic-1", "anthropic", func(e *env, m, s string, st bool) (result, error) { return callOpenAI(e, m, s, st) }},
	{"anthropic passthrough", "claude-native-1", "anthropic", func(e *env, m, s string, st bool) (result, error) { return callAnthropic(e, m, s, st) }},
	{"openai_chat passthrough", "gpt-native-1", "openai_chat", func(e *env, m, s string, st bool) (result, error) { return callOpenAI(e, m, s, st) }},
}

func TestIntegrationScenarios(t *testing.T) {
	e := startEnv(t)
	tests := []struct {
		scenario string
		check    func(t *testing.T, r result)
	}{
		{"text", func(t *testing.T, r result) {
			if !strings.Contains(r.text, "Hello from louter_mock") || r.stop != "end_turn" || len(r.toolNames) != 0 {
				t.Errorf("text: %+v", r)
			}
		}},
		{"tool", func(t *testing.T, r result) {
			if len(r.toolNames) != 1 || r.toolNames[0] != weatherTool.name || r.stop != "tool_use" {
				t.Fatalf("tool: %+v", r)
			}
			if !gjson.Valid(r.toolArgs[0]) || !gjson.Get(r.toolArgs[0], "city").Exists() {
				t.Errorf("tool arguments %q lack the required city", r.toolArgs[0])
			}
		}},
		{"parallel_tools", func(t *testing.T, r result) {
			if len(r.toolNames) != 2 || r.toolNames[0] != weatherTool.name || r.toolNames[1] != "get_time" || r.stop != "tool_use" {
				t.Fatalf("parallel_tools: %+v", r)
			}
			if r.toolArgs[1] != "{}" {
				t.Errorf("a tool without arguments must get {}, got %q", r.toolArgs[1])
			}
		}},
		{"reasoning", func(t *testing.T, r result) {
			if r.thinking == "" || r.text == "" {
				t.Errorf("reasoning: thinking %q, text %q", r.thinking, r.text)
			}
		}},
	}
	for _, c := range clients {
		for _, tt := range tests {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", c.name, tt.scenario, stream), func(t *testing.T) {
					e.clearJournals()
					r, err := c.call(e, c.model, tt.scenario, stream)
					if err != nil {
						t.Fatal(err)
					}
					tt.check(t, r)
					if r.in <= 0 || r.out <= 0 {
						t.Errorf("usage not delivered: in=%d out=%d", r.in, r.out)
					}
					got := e.onlyBackendRequest()
					if p := got.Get("protocol").String(); p != c.backend {
						t.Errorf("backend received protocol %q, want %q", p, c.backend)
					}
				})
			}
		}
	}
}

// TestIntegrationUpstreamErrors checks that upstream error statuses reach
// every client with the same status, in the client's error shape, with
// Retry-After passed on.
func TestIntegrationUpstreamErrors(t *testing.T) {
	e := startEnv(t)
	for _, c := range clients {
		for _, tc := range []struct {
			scenario string
			status   int
		}{{"error_429", 429}, {"error_500", 500}, {"error_401", 401}} {
			t.Run(c.name+"/"+tc.scenario, func(t *testing.T) {
				_, err := c.call(e, c.model, tc.scenario, false)
				status, typ := apiErrorOf(t, err)
				if status != tc.status {
					t.Errorf("status %d, want %d (%v)", status, tc.status, err)
				}
				if typ == "" {
					t.Errorf("error without a type in the client's shape: %v", err)
				}
			})
		}
	}
	// Retry-After and the exact error shapes, with raw HTTP.
	body := `{"model":"claude-via-openai-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	resp := post(t, e.louter+"/v1/messages", body, "X-Mock-Scenario", "error_429")
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if gjson.GetBytes(raw, "type").String() != "error" || gjson.GetBytes(raw, "error.type").String() != "rate_limit_error" {
		t.Errorf("anthropic error shape: %s", raw)
	}
	body = `{"model":"gpt-via-anthropic-1","messages":[{"role":"user","content":"hi"}]}`
	resp = post(t, e.louter+"/v1/chat/completions", body, "X-Mock-Scenario", "error_429")
	raw, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || gjson.GetBytes(raw, "error.message").String() == "" {
		t.Errorf("openai error: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
}

func apiErrorOf(t *testing.T, err error) (int, string) {
	t.Helper()
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return ae.StatusCode, gjson.Get(ae.RawJSON(), "error.type").String()
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode, oe.Type + oe.Code
	}
	t.Fatalf("not an API error: %v", err)
	return 0, ""
}

func post(t *testing.T, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
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

// TestIntegrationMidStreamFailures checks that an upstream error event, a
// cut connection and a malformed chunk mid-stream reach streaming clients as
// errors of their own protocol, never as a silently truncated answer.
func TestIntegrationMidStreamFailures(t *testing.T) {
	e := startEnv(t)
	for _, c := range clients {
		for _, scenario := range []string{"stream_error", "stream_cut"} {
			t.Run(c.name+"/"+scenario, func(t *testing.T) {
				r, err := c.call(e, c.model, scenario, true)
				if err == nil {
					t.Fatalf("a failed stream was taken for a complete answer: %+v", r)
				}
			})
		}
	}
	// The raw client streams end with the protocol's error event.
	resp := post(t, e.louter+"/v1/messages", `{"model":"claude-via-openai-1","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "stream_cut")
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), "event: error") || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("anthropic client stream after an upstream cut:\n%s", raw)
	}
	resp = post(t, e.louter+"/v1/chat/completions", `{"model":"gpt-via-anthropic-1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "stream_malformed")
	raw, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `data: {"error"`) || !strings.HasSuffix(strings.TrimSpace(string(raw)), "data: [DONE]") {
		t.Errorf("openai client stream after a malformed upstream chunk:\n%s", raw)
	}
}

// waitCancelled reports whether n backend requests (since the journals
// were cleared) were cancelled, waiting up to 5s.
func (e *env) waitCancelled(n int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got := 0
		for _, r := range e.backendRequests() {
			if r.Get("cancelled").Bool() {
				got++
			}
		}
		if got >= n {
			return true
		}
	}
	return false
}

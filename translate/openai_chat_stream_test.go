package translate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

func oaiCodec(t testing.TB) translate.Codec {
	t.Helper()
	c, ok := translate.Lookup(translate.ProtocolOpenAIChat)
	if !ok {
		t.Fatal("openai_chat codec not registered")
	}
	return c
}

// oaiDecodeSSE frames body with stream.SSEParser, fed in pieces of step
// bytes (so events straddle reads, as they do on the network), and decodes
// it with the OpenAI Chat stream decoder.
func oaiDecodeSSE(t testing.TB, body []byte, step int) []translate.Event {
	t.Helper()
	dec := oaiCodec(t).NewStreamDecoder()
	var p stream.SSEParser
	var evs []translate.Event
	fn := func(name string, data []byte) { evs = dec.Decode(evs, name, data) }
	for len(body) > 0 {
		n := min(step, len(body))
		if err := p.Feed(body[:n], fn); err != nil {
			t.Fatal(err)
		}
		body = body[n:]
	}
	if err := p.Close(fn); err != nil {
		t.Fatal(err)
	}
	return dec.End(evs)
}

// oaiSummary describes an accumulated response in one line per part.
func oaiSummary(r *translate.Response) string {
	var b strings.Builder
	for _, p := range r.Parts {
		switch p.Type {
		case translate.PartToolCall:
			fmt.Fprintf(&b, "tool %s(%s)\n", p.ToolCall.Name, p.ToolCall.Arguments)
		default:
			fmt.Fprintf(&b, "%s %q\n", p.Type, p.Text)
		}
	}
	u := r.Usage
	fmt.Fprintf(&b, "stop %s usage %d/%d cache_read=%d reasoning=%d", r.StopReason, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.ReasoningTokens)
	return b.String()
}

func TestOpenAIChatStreamFixtures(t *testing.T) {
	tests := []struct {
		file string
		want string // oaiSummary of the accumulated response
		err  string // or the error the stream ends with
	}{
		{"openai_chat/tool_call_include_usage.sse",
			"tool get_weather({\"city\":\"New York City\"})\nstop tool_use usage 44/16 cache_read=0 reasoning=0", ""},
		{"openai_chat/parallel_tool_calls.sse",
			"text \"Checking both.\"\ntool get_weather({\"city\": \"Paris\"})\ntool get_stock({\"ticker\":\"AAPL\"})\nstop tool_use usage 149/60 cache_read=128 reasoning=0", ""},
		{"openai_chat/reasoning_then_content.sse",
			"thinking \"The user wants a haiku.\"\ntext \"Autumn moonlight— a worm digs silently\"\nstop end_turn usage 20/35 cache_read=0 reasoning=12", ""},
		{"openai_chat/vllm_reasoning_field.sse",
			"thinking \"Thinking.\"\ntext \"Done.\"\nstop end_turn usage 0/0 cache_read=0 reasoning=0", ""},
		{"openai_chat/deepseek_usage_on_finish.sse",
			"thinking \"Need the weather tool.\"\ntool get_weather({\"location\":\"Hangzhou\"})\nstop tool_use usage 374/61 cache_read=256 reasoning=17", ""},
		{"openai_chat/ollama_whole_tool_call.sse",
			"tool read_file({\"path\":\"go.mod\"})\ntool list_dir({\"path\":\".\"})\nstop tool_use usage 0/0 cache_read=0 reasoning=0", ""},
		{"openai_chat/finish_stop_with_tool_calls.sse",
			"tool Bash({\"command\":\"ls\"})\nstop tool_use usage 10/5 cache_read=0 reasoning=0", ""},
		{"openai_chat/zero_argument_tool_call.sse",
			"tool get_time({})\nstop tool_use usage 30/7 cache_read=0 reasoning=0", ""},
		{"openai_chat/refusal.sse",
			"text \"I'm sorry, I can't help with that.\"\nstop refusal usage 0/0 cache_read=0 reasoning=0", ""},
		{"openai_chat/mid_stream_error.sse", "",
			"api_error: The server had an error while processing your request. Sorry about that!"},
		{"openai_chat/malformed_chunk.sse", "",
			`api_error: malformed upstream chunk: {"id":"chatcmpl-bad","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" wor`},
		{"openai_chat/cut_stream.sse", "",
			"api_error: upstream stream ended before the response was complete"},
		// The lead's captured real streams.
		{"captured/openai_chat_parallel_tools.sse",
			"tool GetWeatherArgs({\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"})\ntool get_stock_price({\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"})\nstop tool_use usage 149/60 cache_read=0 reasoning=0", ""},
		{"captured/openai_chat_tool_call_usage.sse",
			"tool get_weather({\"city\":\"New York City\"})\nstop tool_use usage 44/16 cache_read=0 reasoning=0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			evs := oaiDecodeSSE(t, body, 7)
			if dir, name := filepath.Split(tt.file); dir == "openai_chat/" {
				translate.OAIGolden(t, "openai_chat/stream_decode_"+strings.TrimSuffix(name, ".sse")+".events", translate.OAIDumpEvents(evs))
			}
			// The same body read at once gives the same events.
			if whole := oaiDecodeSSE(t, body, len(body)+1); string(translate.OAIDumpEvents(whole)) != string(translate.OAIDumpEvents(evs)) {
				t.Errorf("events depend on read boundaries")
			}

			var acc translate.Accumulator
			for i := range evs {
				acc.Add(&evs[i])
			}
			resp, rerr := acc.Result()
			if tt.err != "" {
				if rerr == nil || rerr.Error() != tt.err {
					t.Fatalf("error = %v, want %s", rerr, tt.err)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("stream ended with %v", rerr)
			}
			if got := oaiSummary(resp); got != tt.want {
				t.Errorf("accumulated:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// oaiServe serves body as an OpenAI chat completions stream.
func oaiServe(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// oaiSDKStream reads a served stream with the official openai-go SDK and
// its ChatCompletionAccumulator, as a Go client of louter would.
func oaiSDKStream(t *testing.T, body []byte) (openai.ChatCompletionAccumulator, []openai.ChatCompletionChunk, error) {
	t.Helper()
	srv := oaiServe(t, body)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	s := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What's the weather?")},
	})
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	var chunks []openai.ChatCompletionChunk
	for s.Next() {
		c := s.Current()
		if !acc.AddChunk(c) {
			t.Fatalf("accumulator rejected chunk %s", c.RawJSON())
		}
		chunks = append(chunks, c)
	}
	return acc, chunks, s.Err()
}

// oaiEncodeSSE runs IR events through the OpenAI Chat stream encoder and
// frames the result as SSE.
func oaiEncodeSSE(t *testing.T, req *translate.Request, evs []translate.Event) []byte {
	t.Helper()
	enc := oaiCodec(t).NewStreamEncoder(req)
	var out stream.SSEOutput
	for i := range evs {
		enc.Encode(&out, &evs[i])
	}
	return append([]byte(nil), out.Bytes()...)
}

func TestOpenAIChatStreamEncoderWithOpenAISDK(t *testing.T) {
	resp := &translate.Response{
		ID:    "msg_01XFDUDYJgAACzvnptvVoYEL",
		Model: "claude-sonnet-4-5",
		Parts: []translate.Part{
			{Type: translate.PartThinking, Text: "Weather first.", Signature: "EqQBCkYIBxgC"},
			{Type: translate.PartText, Text: "Let me check <that> & \"this\"."},
			{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_01A", Name: "get_weather", Arguments: `{"city":"Paris","units":"c"}`}},
			{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_01B", Name: "get_time", Arguments: `{}`}},
		},
		StopReason: translate.StopToolUse,
		Usage:      translate.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 1024, ReasoningTokens: 9},
	}
	body := oaiEncodeSSE(t, &translate.Request{Model: "gpt-4o", Stream: true, IncludeUsage: true}, translate.ResponseEvents(nil, resp))
	acc, chunks, err := oaiSDKStream(t, body)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if acc.ID != translate.OwnID("msg_01XFDUDYJgAACzvnptvVoYEL", "chatcmpl-") || acc.Model != "gpt-4o" {
		t.Errorf("id %q model %q", acc.ID, acc.Model)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("%d choices", len(acc.Choices))
	}
	msg := acc.Choices[0].Message
	if msg.Content != `Let me check <that> & "this".` {
		t.Errorf("content = %q", msg.Content)
	}
	if len(msg.ToolCalls) != 2 ||
		!strings.HasPrefix(msg.ToolCalls[0].ID, "toolu_01A-th-") || msg.ToolCalls[0].Function.Name != "get_weather" || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris","units":"c"}` ||
		msg.ToolCalls[1].ID != "toolu_01B" || msg.ToolCalls[1].Function.Name != "get_time" || msg.ToolCalls[1].Function.Arguments != `{}` {
		t.Errorf("tool calls = %+v", msg.ToolCalls)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish_reason = %q", acc.Choices[0].FinishReason)
	}
	u := acc.Usage
	if u.PromptTokens != 1200 || u.CompletionTokens != 80 || u.TotalTokens != 1280 ||
		u.PromptTokensDetails.CachedTokens != 1024 || u.CompletionTokensDetails.ReasoningTokens != 9 {
		t.Errorf("usage = %+v", u)
	}
	// Reasoning reaches the SDK as an extra delta field.
	var reasoning string
	for _, c := range chunks {
		if len(c.Choices) > 0 {
			if f, ok := c.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
				reasoning += strings.Trim(f.Raw(), `"`)
			}
		}
	}
	if reasoning != "Weather first." {
		t.Errorf("reasoning_content = %q", reasoning)
	}
}

// TestOpenAIChatTranscodeWithOpenAISDK: an OpenAI backend's stream,
// transcoded OpenAI → IR → OpenAI chunk by chunk, is read by the SDK as the
// same completion.
func TestOpenAIChatTranscodeWithOpenAISDK(t *testing.T) {
	upstream, err := os.ReadFile(filepath.Join("..", "testdata", "openai_chat", "parallel_tool_calls.sse"))
	if err != nil {
		t.Fatal(err)
	}
	c := oaiCodec(t)
	req := &translate.Request{Model: "gpt-4o", Stream: true, IncludeUsage: true}
	tc := stream.NewTranscoder(&stream.SSEParser{}, c.NewStreamDecoder(), c.NewStreamEncoder(req), &stream.SSEOutput{})
	var body []byte
	for len(upstream) > 0 {
		n := min(13, len(upstream))
		body = append(body, tc.Write(upstream[:n])...)
		upstream = upstream[n:]
	}
	body = append(body, tc.Close()...)

	acc, _, err := oaiSDKStream(t, body)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	msg := acc.Choices[0].Message
	if acc.ID != "chatcmpl-par1" || msg.Content != "Checking both." || len(msg.ToolCalls) != 2 ||
		msg.ToolCalls[0].Function.Arguments != `{"city": "Paris"}` || msg.ToolCalls[1].Function.Arguments != `{"ticker":"AAPL"}` ||
		msg.ToolCalls[1].ID != "call_stock0002" || acc.Choices[0].FinishReason != "tool_calls" ||
		acc.Usage.PromptTokens != 149 || acc.Usage.PromptTokensDetails.CachedTokens != 128 {
		t.Errorf("accumulated %+v usage %+v", msg, acc.Usage)
	}
}

func TestOpenAIChatStreamErrorWithOpenAISDK(t *testing.T) {
	var em translate.Emitter
	evs := em.Start(nil, "chatcmpl-e", "m", nil)
	evs = em.Text(evs, "partial")
	evs = em.Fail(evs, &translate.Error{Status: 429, Kind: translate.ErrRateLimit, Message: "Rate limit reached"})
	body := oaiEncodeSSE(t, &translate.Request{Model: "gpt-4o"}, evs)
	acc, _, err := oaiSDKStream(t, body)
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "Rate limit reached") || !strings.Contains(se.Message, "rate_limit_exceeded") {
		t.Fatalf("err = %v, want the in-stream error", err)
	}
	if acc.Choices[0].Message.Content != "partial" {
		t.Errorf("content before the error = %q", acc.Choices[0].Message.Content)
	}
}

// TestOpenAIChatEncodeClaudeCodeRequest sends the Anthropic codec's reading
// of a Claude Code request to an OpenAI-compatible backend: the body must be
// a well-formed Chat Completions conversation (every tool message answers a
// call of the assistant message right before it).
func TestOpenAIChatEncodeClaudeCodeRequest(t *testing.T) {
	anth, ok := translate.Lookup(translate.ProtocolAnthropic)
	if !ok {
		t.Skip("anthropic codec not registered")
	}
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "anthropic", "request_claude_code.json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := anth.DecodeRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	body, err := oaiCodec(t).EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	root := gjson.ParseBytes(body)
	if root.Get("model").Str != req.Model || root.Get("messages.0.role").Str != "system" {
		t.Errorf("model %q, first message %s", root.Get("model").Str, root.Get("messages.0").Raw)
	}
	pending := map[string]bool{}
	prev := ""
	for i, m := range root.Get("messages").Array() {
		role := m.Get("role").Str
		switch role {
		case "assistant":
			clear(pending)
			for _, tc := range m.Get("tool_calls").Array() {
				pending[tc.Get("id").Str] = true
				if !gjson.Valid(tc.Get("function.arguments").Str) {
					t.Errorf("message %d: arguments are not JSON: %s", i, tc.Raw)
				}
			}
		case "tool":
			id := m.Get("tool_call_id").Str
			if (prev != "assistant" && prev != "tool") || !pending[id] {
				t.Errorf("message %d: tool result %q does not follow its call (previous %s)", i, id, prev)
			}
			delete(pending, id)
			if m.Get("content").Type != gjson.String {
				t.Errorf("message %d: tool content must be a string: %s", i, m.Raw)
			}
		case "user", "system":
			if len(pending) > 0 {
				t.Errorf("message %d: calls %v unanswered before a %s message", i, pending, role)
			}
		default:
			t.Errorf("message %d: role %q", i, role)
		}
		prev = role
	}
	for _, k := range []string{"thinking", "metadata", "cache_control", "signature"} {
		if strings.Contains(string(body), `"`+k+`"`) {
			t.Errorf("%q leaked into the OpenAI body", k)
		}
	}
	if !root.Get("stream_options.include_usage").Bool() && req.Stream {
		t.Error("a streaming request must ask for usage")
	}
}

// TestOpenAIChatFromAnthropicStreamWithOpenAISDK: an Anthropic backend's
// stream, transcoded to OpenAI Chat chunk by chunk, is what an openai-go
// client accumulates into the same answer.
func TestOpenAIChatFromAnthropicStreamWithOpenAISDK(t *testing.T) {
	anth, ok := translate.Lookup(translate.ProtocolAnthropic)
	if !ok {
		t.Skip("anthropic codec not registered")
	}
	tests := []struct {
		file      string
		content   string
		reasoning string
		tools     string // name(arguments), one per line
		finish    string
	}{
		{"stream_tool_use.sse", "I'll check the current weather in Paris for you.", "", "get_weather({\"location\": \"Paris\"})\nget_time({})", "tool_calls"},
		{"stream_thinking.sse", "", "Let me add 2 and 2. That is 4.", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			upstream, err := os.ReadFile(filepath.Join("..", "testdata", "anthropic", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			req := &translate.Request{Model: "gpt-4o", Stream: true, IncludeUsage: true}
			tc := stream.NewTranscoder(&stream.SSEParser{}, anth.NewStreamDecoder(), oaiCodec(t).NewStreamEncoder(req), &stream.SSEOutput{})
			var body []byte
			for len(upstream) > 0 {
				n := min(29, len(upstream))
				body = append(body, tc.Write(upstream[:n])...)
				upstream = upstream[n:]
			}
			body = append(body, tc.Close()...)

			acc, chunks, err := oaiSDKStream(t, body)
			if err != nil {
				t.Fatalf("stream error: %v\n%s", err, body)
			}
			msg := acc.Choices[0].Message
			if tt.content != "" && msg.Content != tt.content {
				t.Errorf("content = %q, want %q", msg.Content, tt.content)
			}
			var reasoning string
			for _, c := range chunks {
				if len(c.Choices) > 0 {
					if f, ok := c.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
						var s string
						if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
							t.Fatal(err)
						}
						reasoning += s
					}
				}
			}
			if tt.reasoning != "" && reasoning != tt.reasoning {
				t.Errorf("reasoning = %q, want %q", reasoning, tt.reasoning)
			}
			var tools []string
			for _, c := range msg.ToolCalls {
				tools = append(tools, c.Function.Name+"("+c.Function.Arguments+")")
			}
			if got := strings.Join(tools, "\n"); got != tt.tools {
				t.Errorf("tool calls:\n%s\nwant:\n%s", got, tt.tools)
			}
			if tt.finish != "" && acc.Choices[0].FinishReason != tt.finish {
				t.Errorf("finish_reason = %q, want %q", acc.Choices[0].FinishReason, tt.finish)
			}
			if acc.Usage.PromptTokens == 0 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
				t.Errorf("usage = %+v", acc.Usage)
			}
		})
	}
}

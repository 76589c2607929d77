package translate_test

// The official Go SDK as the client: what Claude Code's own SDK family
// accepts is the real test of the stream encoder and the error body.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/louter/louter/translate"
)

// anthSDKClient serves one canned response body on loopback and returns a
// client that talks to it.
func anthSDKClient(t *testing.T, status int, contentType string, body []byte) anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
}

var anthSDKParams = anthropic.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 1024,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather?"))},
}

func TestAnthropicStreamEncodeWithSDK(t *testing.T) {
	sse := anthEncodeSSE(t, &translate.Request{Model: "claude-sonnet-4-5"}, anthRepresentativeEvents())
	client := anthSDKClient(t, 200, "text/event-stream", sse)

	s := client.Messages.NewStreaming(context.Background(), anthSDKParams)
	var msg anthropic.Message
	var partials []string
	for s.Next() {
		ev := s.Current()
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			partials = append(partials, ev.Delta.PartialJSON)
		}
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate: %v", err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}

	if len(msg.Content) != 5 {
		t.Fatalf("content blocks = %d, want 5: %+v", len(msg.Content), msg.Content)
	}
	if c := msg.Content[0]; c.Type != "thinking" || c.Thinking != "The user wants the weather. I'll call the tool." || c.Signature != "c2lnbmF0dXJl" {
		t.Errorf("thinking = %+v", c)
	}
	if c := msg.Content[1]; c.Type != "text" || c.Text != "Checking \"Paris\" <now> & then\nreporting…" {
		t.Errorf("text = %q", c.Text)
	}
	if c := msg.Content[2]; c.Type != "tool_use" || c.ID != "call_ZdsDNL5i3dJdqkL9wPzZ8yk4" || c.Name != "get_weather" || string(c.Input) != `{"location": "Paris, FR"}` {
		t.Errorf("tool_use = %+v input %s", c, c.Input)
	}
	// Accumulate turns unparsable input into {}: check the raw fragments too.
	if got := strings.Join(partials, "|"); got != `{"location":| "Paris, FR"}|{}` {
		t.Errorf("partial_json fragments = %s", got)
	}
	if c := msg.Content[3]; c.Name != "get_time" || string(c.Input) != "{}" {
		t.Errorf("argument-less tool_use = %+v input %s", c, c.Input)
	}
	if c := msg.Content[4]; c.Type != "redacted_thinking" || c.Data != "opaque==" {
		t.Errorf("redacted = %+v", c)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || msg.Model != "claude-sonnet-4-5" {
		t.Errorf("stop/model = %q/%q", msg.StopReason, msg.Model)
	}
	u := msg.Usage
	if u.InputTokens != 376 || u.CacheReadInputTokens != 1024 || u.CacheCreationInputTokens != 100 || u.OutputTokens != 42 {
		t.Errorf("usage = %+v", u)
	}
}

func TestAnthropicStreamErrorWithSDK(t *testing.T) {
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	var e translate.Emitter
	var evs []translate.Event
	evs = e.Start(evs, "m", "x", nil)
	evs = e.Text(evs, "partial")
	evs = e.Fail(evs, &translate.Error{Status: 529, Kind: translate.ErrOverloaded, Message: "Overloaded"})
	sse := anthEncodeSSE(t, &translate.Request{Model: "claude-sonnet-4-5"}, evs)
	client := anthSDKClient(t, 200, "text/event-stream", sse)

	s := client.Messages.NewStreaming(context.Background(), anthSDKParams)
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "Overloaded") {
		t.Errorf("stream error = %v, want the overloaded error", err)
	}

	// Non-streaming: the error body is what the SDK parses into an *Error.
	body := c.EncodeError(&translate.Error{Status: 429, Kind: translate.ErrRateLimit, Message: "Number of requests exceeded"})
	client = anthSDKClient(t, 429, "application/json", body)
	_, err := client.Messages.New(context.Background(), anthSDKParams)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || !strings.Contains(apiErr.Error(), "Number of requests exceeded") {
		t.Errorf("error = %v", err)
	}
}

func TestAnthropicEncodeResponseWithSDK(t *testing.T) {
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	body, err := c.EncodeResponse(&translate.Response{
		ID: "msg_1",
		Parts: []translate.Part{
			{Type: translate.PartText, Text: "Calling."},
			{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}},
		},
		StopReason: translate.StopToolUse,
		Usage:      translate.Usage{InputTokens: 30, OutputTokens: 5, CacheWriteTokens: 10},
	}, &translate.Request{Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	client := anthSDKClient(t, 200, "application/json", body)
	msg, err := client.Messages.New(context.Background(), anthSDKParams)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != "Calling." || string(msg.Content[1].Input) != `{"location":"Paris"}` ||
		msg.StopReason != anthropic.StopReasonToolUse || msg.Usage.InputTokens != 20 || msg.Usage.CacheCreationInputTokens != 10 {
		t.Errorf("message = %+v", msg)
	}
}

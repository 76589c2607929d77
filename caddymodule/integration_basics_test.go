package caddymodule_test

// Integration tests of the basics through a real, in-process Caddy (the
// environment is integration_test.go's): a tool round trip, images,
// credentials, load balancing, louter's own errors, requests louter does
// not handle, and a client going away mid-stream.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// TestIntegrationToolRoundTrip sends a tool result back and checks that the
// backend received it in its own protocol, tied to the right call.
func TestIntegrationToolRoundTrip(t *testing.T) {
	e := startEnv(t)
	t.Run("anthropic client, openai backend", func(t *testing.T) {
		e.clearJournals()
		r, err := callAnthropic(e, "claude-via-openai-1", "agent", true,
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
		msgs := e.onlyBackendRequest().Get("body.messages").Array()
		if len(msgs) != 3 {
			t.Fatalf("backend got %d messages, want 3", len(msgs))
		}
		call := msgs[1].Get("tool_calls.0")
		if msgs[1].Get("role").String() != "assistant" || call.Get("id").String() != "toolu_01abc" ||
			call.Get("function.name").String() != weatherTool.name || gjson.Get(call.Get("function.arguments").String(), "city").String() != "Paris" {
			t.Errorf("assistant tool call: %s", msgs[1].Raw)
		}
		if msgs[2].Get("role").String() != "tool" || msgs[2].Get("tool_call_id").String() != "toolu_01abc" || !strings.Contains(msgs[2].Get("content").String(), "sunny, 21C") {
			t.Errorf("tool result: %s", msgs[2].Raw)
		}
	})
	t.Run("openai client, anthropic backend", func(t *testing.T) {
		e.clearJournals()
		assistant := openai.ChatCompletionAssistantMessageParam{
			ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       "call_abc",
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: weatherTool.name, Arguments: `{"city":"Paris"}`},
			}}},
		}
		r, err := callOpenAI(e, "gpt-via-anthropic-1", "agent", false,
			openai.UserMessage("What is the weather in Paris?"),
			openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant},
			openai.ToolMessage("sunny, 21C", "call_abc"),
		)
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
		use := msgs[1].Get("content.0")
		if use.Get("type").String() != "tool_use" || use.Get("id").String() != "call_abc" || use.Get("input.city").String() != "Paris" {
			t.Errorf("assistant tool_use: %s", msgs[1].Raw)
		}
		res := msgs[2].Get("content.0")
		if msgs[2].Get("role").String() != "user" || res.Get("type").String() != "tool_result" || res.Get("tool_use_id").String() != "call_abc" || !strings.Contains(res.Get("content").Raw, "sunny, 21C") {
			t.Errorf("tool_result: %s", msgs[2].Raw)
		}
	})
}

// TestIntegrationImageInput checks that an image reaches the backend in the
// backend's own form.
func TestIntegrationImageInput(t *testing.T) {
	e := startEnv(t)
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	e.clearJournals()
	if _, err := callAnthropic(e, "claude-via-openai-1", "text", false, anthropic.NewUserMessage(
		anthropic.NewTextBlock("What is in this image?"), anthropic.NewImageBlockBase64("image/png", png))); err != nil {
		t.Fatal(err)
	}
	parts := e.onlyBackendRequest().Get("body.messages.0.content")
	if parts.Get("1.type").String() != "image_url" || parts.Get("1.image_url.url").String() != "data:image/png;base64,"+png {
		t.Errorf("openai backend got image as %s", parts.Raw)
	}
	e.clearJournals()
	if _, err := callOpenAI(e, "gpt-via-anthropic-1", "text", false, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("What is in this image?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + png}),
	})); err != nil {
		t.Fatal(err)
	}
	img := e.onlyBackendRequest().Get("body.messages.0.content.1")
	if img.Get("type").String() != "image" || img.Get("source.type").String() != "base64" || img.Get("source.media_type").String() != "image/png" || img.Get("source.data").String() != png {
		t.Errorf("anthropic backend got image as %s", img.Raw)
	}
}

// TestIntegrationCredentials checks that client keys never reach a backend
// unless the backend is configured to pass them through, and that backend
// keys go in the backend protocol's own header.
func TestIntegrationCredentials(t *testing.T) {
	e := startEnv(t)
	tests := []struct {
		name, path, model, wantHeader, wantValue, mustNotContain string
	}{
		{"anthropic client to openai backend", "/v1/messages", "claude-via-openai-1", "Authorization", "Bearer oai-backend-key", "client-secret"},
		{"openai client to anthropic backend", "/v1/chat/completions", "gpt-via-anthropic-1", "X-Api-Key", "anth-backend-key", "client-secret"},
		{"anthropic passthrough", "/v1/messages", "claude-native-1", "X-Api-Key", "anth-backend-key", "client-secret"},
		{"openai passthrough", "/v1/chat/completions", "gpt-native-1", "Authorization", "Bearer oai-backend-key", "client-secret"},
		{"pass_client_auth", "/v1/chat/completions", "gpt-passauth-1", "Authorization", "Bearer client-secret", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.clearJournals()
			body := fmt.Sprintf(`{"model":%q,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, tt.model)
			resp := post(t, e.louter+tt.path+"?key=client-secret", body,
				"X-Api-Key", "client-secret", "Authorization", "Bearer client-secret", "X-Goog-Api-Key", "client-secret", "X-Mock-Scenario", "text")
			if resp.StatusCode != 200 {
				raw, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			got := e.onlyBackendRequest()
			if v := got.Get("headers." + tt.wantHeader).String(); !strings.Contains(v, tt.wantValue) {
				t.Errorf("backend %s = %q, want %q", tt.wantHeader, v, tt.wantValue)
			}
			if tt.mustNotContain != "" && (strings.Contains(got.Get("headers").Raw, tt.mustNotContain) || strings.Contains(got.Get("query").Raw, tt.mustNotContain)) {
				t.Errorf("a client credential reached the backend: headers %s query %s", got.Get("headers").Raw, got.Get("query").Raw)
			}
		})
	}
}

// TestIntegrationLoadBalancing proves that one backend spreads requests over
// its two upstreams through stock reverse_proxy load balancing.
func TestIntegrationLoadBalancing(t *testing.T) {
	e := startEnv(t)
	seen := map[string]int{}
	for i := 0; i < 6; i++ {
		resp := post(t, e.louter+"/v1/messages", `{"model":"claude-via-openai-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "text")
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		seen[resp.Header.Get("X-Mock-Backend")]++
	}
	if seen["mock-a"] != 3 || seen["mock-b"] != 3 {
		t.Errorf("round robin over two upstreams gave %v, want 3 each", seen)
	}
}

// TestIntegrationClientErrors checks louter's own errors, raised before any
// upstream call, in each client's shape.
func TestIntegrationClientErrors(t *testing.T) {
	e := startEnv(t)
	tests := []struct {
		name, path, body string
		status           int
		shape            string // gjson path that must exist
	}{
		{"anthropic invalid JSON", "/v1/messages", `{"model":`, 400, "error.type"},
		{"openai invalid JSON", "/v1/chat/completions", `{"model":`, 400, "error.message"},
		{"anthropic unknown model", "/v1/messages", `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 404, "error.type"},
		{"openai unknown model", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, "error.message"},
		{"anthropic impossible request", "/v1/messages", `{"model":"claude-via-openai-1","max_tokens":5,"messages":"hi"}`, 400, "error.type"},
		{"openai impossible request", "/v1/chat/completions", `{"model":"gpt-via-anthropic-1","messages":[{"role":"wizard","content":"hi"}]}`, 400, "error.message"},
		{"dead upstream, anthropic client", "/v1/messages", `{"model":"dead-1","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 502, "error.type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.clearJournals()
			resp := post(t, e.louter+tt.path, tt.body)
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !gjson.GetBytes(raw, tt.shape).Exists() {
				t.Errorf("got %d %s, want %d with %s", resp.StatusCode, raw, tt.status, tt.shape)
			}
			if n := len(e.backendRequests()); n != 0 && tt.status != 502 {
				t.Errorf("a rejected request reached the backend %d times", n)
			}
		})
	}
}

// TestIntegrationNotOurs checks that requests louter does not handle go to
// the next handler unchanged.
func TestIntegrationNotOurs(t *testing.T) {
	e := startEnv(t)
	resp, err := testcaddy.Client.Get(e.louter + "/v1/users")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// No handler after louter in this site: Caddy's empty 200.
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "" {
		t.Errorf("GET /v1/users: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestIntegrationClientDisconnect checks that a client going away mid-stream
// cancels the upstream request.
func TestIntegrationClientDisconnect(t *testing.T) {
	e := startEnv(t)
	e.clearJournals()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.louter+"/v1/messages",
		strings.NewReader(`{"model":"claude-via-openai-1","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Mock-Scenario", "slow")
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatalf("no first event: %v", err)
	}
	cancel()
	resp.Body.Close()
	if !e.waitCancelled(1) {
		t.Fatal("the upstream request was not cancelled when the client disconnected")
	}
}

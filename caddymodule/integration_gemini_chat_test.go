package caddymodule_test

import (
	"context"
	"testing"

	"google.golang.org/genai"
)

// TestGeminiSDKChatKeepsStreamedTurn: a genai Chat session (which keeps
// its own history) on an Anthropic backend, thinking on, streams one turn
// and sends the next. The chat keeps a streamed turn only if every chunk
// is valid by the SDK's rules (a content with no parts is not) and keeps
// only the parts that carry data (an empty text with a signature does
// not), so the second request the backend gets must carry the first turn
// whole: the user's message, then the answer, its thinking block signed.
func TestGeminiSDKChatKeepsStreamedTurn(t *testing.T) {
	const sig = "EuYBCkQYAiJAk9Rz1pN0Uq3Jm0f8Wc2s7XhTgQfLr5vY1bKcA+eDpUoMiHnJ/3wZx6tVy4qE0sRlG8aFkCj2Oh5PdBmI9NnXEgx0aWQtc2lnbmF0dXJlGgwQ5Yz4pL8mN2rT6vUiMGRmYWtlIGJ1dCBzaGFwZWQgbGlrZSBhIHJlYWwgc2lnbmF0dXJl"
	toolResult := genai.NewPartFromFunctionResponse("get_weather", map[string]any{"output": "18C"})
	toolResult.FunctionResponse.ID = "toolu_01ThinkTool"
	e := startGapsEnv(t)
	for _, tt := range []struct {
		name    string
		fixture string
		first   string
		next    genai.Part
		// want is the assistant turn's blocks, each as type and the
		// field that says it (thinking, text, tool name); sig, the
		// thinking block's signature.
		want [][2]string
		sig  string
		last string // the type of the last message's first block
	}{
		{
			// The fixture's signature is not base64: the SDK could not
			// hold it, louter leaves it out, and the unsigned thinking
			// cannot go to Anthropic. The answer must stay.
			name: "text answer", fixture: "anthropic/stream_thinking.sse",
			first: "What is 2 + 2?", next: genai.Part{Text: "And 3 + 3?"},
			want: [][2]string{{"text", "2 + 2 = 4"}}, last: "text",
		},
		{
			name: "signed thinking and a tool call", fixture: "anthropic/stream_thinking_tool_use.sse",
			first: "What is the weather in Paris?", next: *toolResult,
			want: [][2]string{
				{"thinking", "The user wants the weather in Paris. I will call get_weather."},
				{"text", "Let me check."}, {"tool_use", "get_weather"},
			},
			sig: sig, last: "tool_result",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := geminiClient(t, e, "fixture="+tt.fixture)
			chat, err := c.Chats.Create(ctx, "via-anthropic-1", geminiConfig(), nil)
			if err != nil {
				t.Fatal(err)
			}
			send := func(p genai.Part) {
				t.Helper()
				for _, err := range chat.SendMessageStream(ctx, p) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			send(genai.Part{Text: tt.first})
			e.clearJournals()
			send(tt.next)
			body := e.onlyBackendRequest().Get("body")
			msgs := body.Get("messages")
			if n := len(msgs.Array()); n != 3 {
				t.Fatalf("the backend got %d messages, want 3: %s", n, msgs.Raw)
			}
			if m := msgs.Get("0"); m.Get("role").Str != "user" || m.Get("content.0.text").Str != tt.first {
				t.Errorf("first message %s", m.Raw)
			}
			turn := msgs.Get("1")
			blocks := turn.Get("content").Array()
			if turn.Get("role").Str != "assistant" || len(blocks) != len(tt.want) {
				t.Fatalf("the assistant turn is %s", turn.Raw)
			}
			for i, w := range tt.want {
				b := blocks[i]
				got := map[string]string{"thinking": b.Get("thinking").Str, "text": b.Get("text").Str, "tool_use": b.Get("name").Str}[w[0]]
				if b.Get("type").Str != w[0] || got != w[1] {
					t.Errorf("block %d is %s, want a %s %q", i, b.Raw, w[0], w[1])
				}
				if w[0] == "thinking" && b.Get("signature").Str != tt.sig {
					t.Errorf("thinking signature %q, want %q", b.Get("signature").Str, tt.sig)
				}
			}
			if m := msgs.Get("2"); m.Get("role").Str != "user" || m.Get("content.0.type").Str != tt.last {
				t.Errorf("last message %s", m.Raw)
			}
			if tt.sig != "" && body.Get("thinking.type").Str != "enabled" {
				t.Errorf("thinking %s", body.Get("thinking").Raw)
			}
		})
	}
}

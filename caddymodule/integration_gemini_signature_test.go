package caddymodule_test

import (
	"context"
	"testing"

	"google.golang.org/genai"
)

// TestGeminiSDKEchoKeepsAnthropicSignature: a genai client on an Anthropic
// backend, thinking on, streams a thinking+tool call answer, keeps each
// chunk's content as the SDK decoded it (its Part structs, an empty text
// omitted: the signature's part comes back with no text) and sends the
// turn back with the tool's result. The backend must get the thinking
// block whole and signed, first in the assistant turn.
func TestGeminiSDKEchoKeepsAnthropicSignature(t *testing.T) {
	e := startGapsEnv(t)
	const sig = "EuYBCkQYAiJAk9Rz1pN0Uq3Jm0f8Wc2s7XhTgQfLr5vY1bKcA+eDpUoMiHnJ/3wZx6tVy4qE0sRlG8aFkCj2Oh5PdBmI9NnXEgx0aWQtc2lnbmF0dXJlGgwQ5Yz4pL8mN2rT6vUiMGRmYWtlIGJ1dCBzaGFwZWQgbGlrZSBhIHJlYWwgc2lnbmF0dXJl"
	ctx := context.Background()
	c := geminiClient(t, e, "fixture=anthropic/stream_thinking_tool_use.sse")
	contents := genai.Text("What is the weather in Paris?")
	var turn []*genai.Content
	for resp, err := range c.Models.GenerateContentStream(ctx, "via-anthropic-1", contents, geminiConfig()) {
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Candidates) > 0 && resp.Candidates[0].Content != nil && len(resp.Candidates[0].Content.Parts) > 0 {
			turn = append(turn, resp.Candidates[0].Content)
		}
	}
	result := genai.NewPartFromFunctionResponse("get_weather", map[string]any{"output": "18C"})
	result.FunctionResponse.ID = "toolu_01ThinkTool"
	contents = append(append(contents, turn...), genai.NewContentFromParts([]*genai.Part{result}, genai.RoleUser))
	e.clearJournals()
	if _, err := c.Models.GenerateContent(ctx, "via-anthropic-1", contents, geminiConfig()); err != nil {
		t.Fatal(err)
	}
	body := e.onlyBackendRequest().Get("body")
	blocks := body.Get("messages.1.content")
	if b := blocks.Get("0"); b.Get("type").Str != "thinking" || b.Get("signature").Str != sig ||
		b.Get("thinking").Str != "The user wants the weather in Paris. I will call get_weather." {
		t.Errorf("the assistant turn is %s", blocks.Raw)
	}
	if body.Get("thinking.type").Str != "enabled" {
		t.Errorf("thinking %s", body.Get("thinking").Raw)
	}
}

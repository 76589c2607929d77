package caddymodule_test

import (
	"context"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
)

// claudeCodeBetas is what Claude Code 2.1.330 sends in anthropic-beta.
const claudeCodeBetas = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,advanced-tool-use-2025-11-20,effort-2025-11-24"

// TestIntegrationBetasBedrock: Claude Code's betas reach Bedrock in the
// body's anthropic_beta, only those Bedrock takes (an unknown one would
// fail the whole request there), renamed where Bedrock knows them under
// another name, and drop_betas adjusts the list both ways.
func TestIntegrationBetasBedrock(t *testing.T) {
	e := startBedrockEnv(t)
	for _, tt := range []struct {
		model string
		want  []string
	}{
		{"claude-key-1", []string{"interleaved-thinking-2025-05-14", "context-management-2025-06-27", "tool-search-tool-2025-10-19", "effort-2025-11-24"}},
		// drop_betas !mid-conversation-* interleaved-thinking-*
		{"claude-betas-1", []string{"context-management-2025-06-27", "mid-conversation-tool-changes-2026-07-01", "tool-search-tool-2025-10-19", "effort-2025-11-24"}},
	} {
		for _, stream := range []bool{false, true} {
			e.clearJournals()
			if err := askWithBetas(e.env, tt.model, stream); err != nil {
				t.Fatal(err)
			}
			got := e.onlyBackendRequest()
			var betas []string
			for _, v := range got.Get("body.anthropic_beta").Array() {
				betas = append(betas, v.Str)
			}
			if !slices.Equal(betas, tt.want) {
				t.Errorf("%s stream=%v: anthropic_beta %q, want %q", tt.model, stream, betas, tt.want)
			}
			if h := got.Get("headers.Anthropic-Beta"); h.Exists() {
				t.Errorf("%s: the header went too: %s", tt.model, h.Raw)
			}
		}
	}
	// No betas: no anthropic_beta member.
	e.clearJournals()
	if _, err := runAnthropic(e.env, "text", false, anthropicParams("claude-key-1", anthropic.NewUserMessage(anthropic.NewTextBlock("hi")))); err != nil {
		t.Fatal(err)
	}
	if b := e.onlyBackendRequest().Get("body.anthropic_beta"); b.Exists() {
		t.Errorf("anthropic_beta without betas: %s", b.Raw)
	}
}

// TestIntegrationBetasVertex: Claude Code's betas reach Claude on Vertex
// in the header, only those it takes.
func TestIntegrationBetasVertex(t *testing.T) {
	e := startCloudEnv(t, cloudCaddyfile)
	c := anthropicClient(e.env, "text", aoption.WithHeader("anthropic-beta", claudeCodeBetas))
	if _, err := c.Messages.New(context.Background(), anthropicParams("claude-vertex", anthropic.NewUserMessage(anthropic.NewTextBlock("hi")))); err != nil {
		t.Fatal(err)
	}
	got := e.onlyBackendRequest()
	want := "interleaved-thinking-2025-05-14,context-management-2025-06-27,tool-search-tool-2025-10-19,effort-2025-11-24"
	if h := got.Get("headers.Anthropic-Beta"); h.Str != want {
		t.Errorf("anthropic-beta %s, want %s", h.Raw, want)
	}
	if got.Get("body.anthropic_beta").Exists() {
		t.Errorf("body %s", got.Get("body").Raw)
	}
}

// askWithBetas asks model a question with Claude Code's betas.
func askWithBetas(e *env, model string, stream bool) error {
	c := anthropicClient(e, "text", aoption.WithHeader("anthropic-beta", claudeCodeBetas))
	params := anthropicParams(model, anthropic.NewUserMessage(anthropic.NewTextBlock("hi")))
	if !stream {
		_, err := c.Messages.New(context.Background(), params)
		return err
	}
	s := c.Messages.NewStreaming(context.Background(), params)
	for s.Next() {
	}
	return s.Err()
}

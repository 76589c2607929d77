package caddymodule_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/tidwall/gjson"
)

var cloudRoutingCaddyfile = cloudSite("cloud-mock-routing",
	vertexBackend("vtx_broken", "vertex_anthropic", "{FOREIGN}")+
		vertexBackend("vtx_claude", "vertex_anthropic", "{CREDS}")+azureKeyBackend+`
		model claude-sonnet-4-5 vtx_broken claude-sonnet-4-5@20250929 {
			fallback az_v1 my-gpt-deployment
		}
		model claude-haiku-4-5 vtx_claude claude-haiku-4-5@20251001
		model gpt-5.5 az_v1 my-gpt-deployment`)

// TestCloudFallbackListsCounts: a Vertex backend that cannot get a token
// falls back to Azure before the client sees anything; the model lists
// show the routed names; count_tokens answers for a cloud route.
func TestCloudFallbackListsCounts(t *testing.T) {
	ce := startCloudEnv(t, cloudRoutingCaddyfile)
	t.Run("fallback", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			ce.front.Requests()
			r, err := callAnthropic(ce.env, "claude-sonnet-4-5", "tool", stream)
			if err != nil || len(r.toolNames) != 1 || r.stop != "tool_use" {
				t.Fatalf("stream=%v: %+v %v", stream, r, err)
			}
			reqs := ce.front.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/openai/v1/chat/completions" || gjson.Get(reqs[0].Body, "model").Str != "my-gpt-deployment" {
				t.Errorf("stream=%v: the front got %v, want only the Azure fallback", stream, summarize(reqs))
			}
		}
	})
	t.Run("model list", func(t *testing.T) {
		resp, err := http.Get(ce.louter + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, id := range []string{"claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5.5"} {
			if !gjson.GetBytes(body, `data.#(id=="`+id+`")`).Exists() {
				t.Errorf("the model list lacks %s: %s", id, body)
			}
		}
	})
	t.Run("count_tokens", func(t *testing.T) {
		client := anthropicClient(ce.env, "text")
		n, err := client.Messages.CountTokens(t.Context(), anthropic.MessageCountTokensParams{
			Model:    "claude-haiku-4-5",
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(strings.Repeat("hello world ", 50)))},
		})
		if err != nil || n.InputTokens < 50 {
			t.Fatalf("count: %+v %v", n, err)
		}
		// Counted locally: Vertex's endpoint was not asked.
		if reqs := ce.front.Requests(); len(reqs) != 0 {
			t.Errorf("the count reached the cloud: %v", summarize(reqs))
		}
	})
}

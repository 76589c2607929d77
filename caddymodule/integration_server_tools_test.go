package caddymodule_test

// Integration tests of server tools (web search, URL fetching) and model
// aliases through a real Caddy with the official SDKs against the mock:
// what each backend received, and what each client was answered.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const serverToolsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		backend chat {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend strict {
			protocol openai_chat
			server_tools reject
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend lenient {
			protocol openai_chat
			server_tools drop
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend selfresp {
			protocol openai_responses
			server_tools none
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model via-chat chat
		model via-strict strict
		model via-lenient lenient
		model via-resp resp
		model via-selfresp selfresp
		model via-anth anth
		model via-gem gem
		model qwen3-coder chat {
			alias claude-qwen3-coder gemini-3.1-pro-high
		}
		model big-* chat big-model {
			alias claude-big
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name tools-mock
	}
}
`

func startServerToolsEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, serverToolsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

// anthropicWebSearch is Claude Code's WebSearch request: the server tool
// alone, with options, forced or not.
func anthropicWebSearch(model string, forced bool) anthropic.MessageNewParams {
	p := anthropicParams(model, anthropic.NewUserMessage(anthropic.NewTextBlock("Perform a web search for the query: louter")))
	p.Tools = []anthropic.ToolUnionParam{{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{
		MaxUses:        anthropic.Int(8),
		AllowedDomains: []string{"example.com"},
		UserLocation:   anthropic.WebSearchTool20250305UserLocationParam{City: anthropic.String("Paris"), Country: anthropic.String("FR")},
	}}}
	if forced {
		p.ToolChoice = anthropic.ToolChoiceParamOfTool("web_search")
	}
	return p
}

func TestIntegrationServerTools(t *testing.T) {
	e := startServerToolsEnv(t)
	ctx := context.Background()

	// Claude Code's WebSearch request, forced, to each backend.
	t.Run("anthropic forced web search to a responses backend", func(t *testing.T) {
		e.clearJournals()
		if _, err := runAnthropic(e, "text", true, anthropicWebSearch("via-resp", true)); err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body")
		tool := body.Get("tools.0")
		if body.Get("tools.#").Int() != 1 || tool.Get("type").Str != "web_search" ||
			tool.Get("filters.allowed_domains.0").Str != "example.com" ||
			tool.Get("user_location.type").Str != "approximate" || tool.Get("user_location.city").Str != "Paris" || tool.Get("user_location.country").Str != "FR" {
			t.Errorf("responses backend tools: %s", body.Get("tools").Raw)
		}
		if body.Get("tool_choice").Str != "required" {
			t.Errorf("tool_choice %s, want required (the only tool, forced)", body.Get("tool_choice").Raw)
		}
	})
	t.Run("anthropic forced web search to a gemini backend", func(t *testing.T) {
		e.clearJournals()
		if _, err := runAnthropic(e, "text", false, anthropicWebSearch("via-gem", true)); err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body")
		if body.Get("tools.#").Int() != 1 || !body.Get("tools.0.googleSearch").IsObject() || body.Get("toolConfig").Exists() {
			t.Errorf("gemini backend: tools %s, toolConfig %s", body.Get("tools").Raw, body.Get("toolConfig").Raw)
		}
	})
	t.Run("anthropic forced web search to a chat backend is a 400 naming it", func(t *testing.T) {
		e.clearJournals()
		for _, stream := range []bool{false, true} {
			_, err := runAnthropic(e, "text", stream, anthropicWebSearch("via-chat", true))
			status, typ := apiErrorOf(t, err)
			var ae *anthropic.Error
			if status != 400 || typ != "invalid_request_error" || !errors.As(err, &ae) ||
				!strings.Contains(ae.RawJSON(), "web_search_20250305") || !strings.Contains(ae.RawJSON(), "tools.0") {
				t.Errorf("stream=%v: %d %s %v", stream, status, typ, err)
			}
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("the backend was asked %d times", n)
		}
	})
	t.Run("anthropic offered web search to a chat backend is dropped", func(t *testing.T) {
		e.clearJournals()
		p := anthropicWebSearch("via-chat", false)
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}})
		if _, err := runAnthropic(e, "text", true, p); err != nil {
			t.Fatal(err)
		}
		tools := e.onlyBackendRequest().Get("body.tools")
		if tools.Get("#").Int() != 1 || tools.Get("0.function.name").Str != "get_weather" {
			t.Errorf("chat backend tools: %s", tools.Raw)
		}
	})

	t.Run("server_tools none: a self-hosted responses server", func(t *testing.T) {
		e.clearJournals()
		if _, err := runAnthropic(e, "text", false, anthropicWebSearch("via-selfresp", false)); err != nil {
			t.Fatal(err)
		}
		if tools := e.onlyBackendRequest().Get("body.tools"); tools.Exists() {
			t.Errorf("tools %s", tools.Raw)
		}
		_, err := runAnthropic(e, "text", false, anthropicWebSearch("via-selfresp", true))
		if status, typ := apiErrorOf(t, err); status != 400 || typ != "invalid_request_error" {
			t.Errorf("forced: %d %s", status, typ)
		}
	})

	// Codex offers web_search in every request.
	codex := `{"model":%q,"stream":true,"store":false,"input":"look it up","tools":[
		{"type":"function","name":"shell","parameters":{"type":"object","properties":{}},"strict":false},
		{"type":"web_search","filters":{"allowed_domains":["go.dev"]},"search_context_size":"high"}]}`
	t.Run("codex web_search to an anthropic backend", func(t *testing.T) {
		e.clearJournals()
		if _, err := callResponses(e, "text", true, rawParams(fmt.Sprintf(codex, "via-anth"))); err != nil {
			t.Fatal(err)
		}
		tools := e.onlyBackendRequest().Get("body.tools")
		if tools.Get("#").Int() != 2 || tools.Get("1.type").Str != "web_search_20250305" || tools.Get("1.name").Str != "web_search" ||
			tools.Get("1.allowed_domains.0").Str != "go.dev" {
			t.Errorf("anthropic backend tools: %s", tools.Raw)
		}
	})
	t.Run("codex web_search to a chat backend keeps working", func(t *testing.T) {
		e.clearJournals()
		o, err := callResponses(e, "text", true, rawParams(fmt.Sprintf(codex, "via-chat")))
		if err != nil || o.final.Get("status").Str != "completed" {
			t.Fatalf("%v %s", err, o.final.Raw)
		}
		tools := e.onlyBackendRequest().Get("body.tools")
		if tools.Get("#").Int() != 1 || tools.Get("0.function.name").Str != "shell" {
			t.Errorf("chat backend tools: %s", tools.Raw)
		}
	})
	t.Run("server_tools reject", func(t *testing.T) {
		e.clearJournals()
		_, err := callResponses(e, "text", true, rawParams(fmt.Sprintf(codex, "via-strict")))
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "tools[1]" || !strings.Contains(oe.Message, "web_search") {
			t.Errorf("%v", err)
		}
		if n := len(e.backendRequests()); n != 0 {
			t.Errorf("the backend was asked %d times", n)
		}
	})
	t.Run("server_tools drop, forced", func(t *testing.T) {
		e.clearJournals()
		if _, err := runAnthropic(e, "text", false, anthropicWebSearch("via-lenient", true)); err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body")
		if body.Get("tools").Exists() || body.Get("tool_choice").Exists() {
			t.Errorf("chat backend: %s", body.Raw)
		}
	})

	// Gemini CLI offers googleSearch beside its functions.
	t.Run("gemini google_search to a responses backend", func(t *testing.T) {
		e.clearJournals()
		c := geminiClient(t, e, "text")
		_, err := c.Models.GenerateContent(ctx, "via-resp", genai.Text("news?"), &genai.GenerateContentConfig{
			Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}, {URLContext: &genai.URLContext{}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body")
		// URL context has no Responses counterpart: left out (not forced).
		if body.Get("tools.#").Int() != 1 || body.Get("tools.0.type").Str != "web_search" {
			t.Errorf("responses backend tools: %s", body.Get("tools").Raw)
		}
	})
	t.Run("gemini url_context to an anthropic backend", func(t *testing.T) {
		e.clearJournals()
		c := geminiClient(t, e, "text")
		_, err := c.Models.GenerateContent(ctx, "via-anth", genai.Text("read https://go.dev"), &genai.GenerateContentConfig{
			Tools: []*genai.Tool{{URLContext: &genai.URLContext{}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := e.onlyBackendRequest()
		tools := got.Get("body.tools")
		if tools.Get("#").Int() != 1 || tools.Get("0.type").Str != "web_fetch_20250910" || tools.Get("0.name").Str != "web_fetch" {
			t.Errorf("anthropic backend tools: %s", tools.Raw)
		}
		if h := got.Get("headers.Anthropic-Beta").Str; h != "web-fetch-2025-09-10" {
			t.Errorf("anthropic-beta %q, want web fetch's beta", h)
		}
	})
}

func TestIntegrationModelAliases(t *testing.T) {
	e := startServerToolsEnv(t)
	ctx := context.Background()
	want := []string{"claude-qwen3-coder", "gemini-3.1-pro-high", "claude-big"}

	t.Run("lists", func(t *testing.T) {
		var anth []string
		ac := anthropicClient(e, "")
		iter := ac.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(1000)})
		for iter.Next() {
			anth = append(anth, iter.Current().ID)
		}
		if iter.Err() != nil {
			t.Fatal(iter.Err())
		}
		var gem []string
		page, err := geminiClient(t, e, "").Models.List(ctx, &genai.ListModelsConfig{PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Items {
			gem = append(gem, strings.TrimPrefix(m.Name, "models/"))
		}
		var oai []string
		oc := openaiClient(e, "")
		oiter := oc.Models.ListAutoPaging(ctx)
		for oiter.Next() {
			oai = append(oai, oiter.Current().ID)
		}
		for _, id := range want {
			if !slices.Contains(anth, id) || !slices.Contains(gem, id) || !slices.Contains(oai, id) {
				t.Errorf("%s missing: anthropic %q, gemini %q, openai %q", id, anth, gem, oai)
			}
		}
		if m, err := geminiClient(t, e, "").Models.Get(ctx, "gemini-3.1-pro-high", nil); err != nil || m.Name != "models/gemini-3.1-pro-high" {
			t.Errorf("gemini get: %+v %v", m, err)
		}
	})

	for _, tt := range []struct{ alias, backendModel string }{
		{"claude-qwen3-coder", "qwen3-coder"}, // the route's literal pattern
		{"claude-big", "big-model"},           // the route's rename
	} {
		t.Run("anthropic "+tt.alias, func(t *testing.T) {
			e.clearJournals()
			ac := anthropicClient(e, "text")
			msg, err := ac.Messages.New(ctx, anthropicParams(tt.alias, anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.onlyBackendRequest().Get("body.model").Str; got != tt.backendModel {
				t.Errorf("backend asked for %q, want %q", got, tt.backendModel)
			}
			if string(msg.Model) != tt.alias {
				t.Errorf("answered as %q, want the alias", msg.Model)
			}
		})
	}
	t.Run("gemini alias", func(t *testing.T) {
		e.clearJournals()
		resp, err := geminiClient(t, e, "text").Models.GenerateContent(ctx, "gemini-3.1-pro-high", genai.Text("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.onlyBackendRequest().Get("body.model").Str; got != "qwen3-coder" {
			t.Errorf("backend asked for %q", got)
		}
		if resp.ModelVersion != "gemini-3.1-pro-high" {
			t.Errorf("modelVersion %q", resp.ModelVersion)
		}
	})
}

package caddymodule_test

// Routing by content and prompt-cache affinity through a real Caddy, with
// the official SDKs as clients: each route condition sends a request built
// the way the agents build it to its backend, and lb_policy header on
// X-Louter-Conversation keeps a conversation on one upstream.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const routingCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	header >X-Seen-Conversation {http.louter.conversation}
	louter {
		backend main {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend vision {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		backend long {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT3}
		}
		backend think {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT4}
		}
		backend web {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT5}
		}
		backend pair {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT6} 127.0.0.1:{PORT7} {
				lb_policy header X-Louter-Conversation
			}
		}
		model claude-* main {
			when header X-Background 1 web claude-haiku
			when images vision gpt-vision
			when tokens > 4000 long gpt-long
			when thinking think gemini-think
			when tool web_search web
			when client openai_chat vision
		}
		model sticky-* pair
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock mock-main
}
:{PORT2} {
	bind 127.0.0.1
	louter_mock mock-vision
}
:{PORT3} {
	bind 127.0.0.1
	louter_mock mock-long
}
:{PORT4} {
	bind 127.0.0.1
	louter_mock mock-think
}
:{PORT5} {
	bind 127.0.0.1
	louter_mock mock-web
}
:{PORT6} {
	bind 127.0.0.1
	louter_mock mock-s1
}
:{PORT7} {
	bind 127.0.0.1
	louter_mock mock-s2
}
`

// mockNames are the mocks of routingCaddyfile, in port order.
var mockNames = []string{"mock-main", "mock-vision", "mock-long", "mock-think", "mock-web", "mock-s1", "mock-s2"}

func startRoutingEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, routingCaddyfile)
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	for _, p := range ports[1:] {
		testcaddy.WaitListening(t, p)
		e.mocks = append(e.mocks, testcaddy.URL(p))
	}
	return e
}

// mockJournal returns the model and X-Louter-Conversation header of each
// request one mock received.
func (e *env) mockJournal(i int) (models, convs []string) {
	resp, err := testcaddy.Client.Get(e.mocks[i] + "/_mock/requests")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, r := range gjson.ParseBytes(raw).Array() {
		m := r.Get("body.model").String()
		if m == "" { // Gemini: the model is in the path
			m = r.Get("path").String()
		}
		models = append(models, m)
		convs = append(convs, r.Get("headers.X-Louter-Conversation").String())
	}
	return models, convs
}

func TestIntegrationRoutingByContent(t *testing.T) {
	e := startRoutingEnv(t)
	text := func(s string) anthropic.MessageParam { return anthropic.NewUserMessage(anthropic.NewTextBlock(s)) }
	tests := []struct {
		name      string
		params    anthropic.MessageNewParams
		opts      []aoption.RequestOption
		wantMock  string
		wantModel string
	}{
		{"plain turn: the route's backend", anthropicParams("claude-sonnet-4-5", text("hi")), nil, "mock-main", "claude-sonnet-4-5"},
		{"background header", anthropicParams("claude-sonnet-4-5", text("title this")), []aoption.RequestOption{aoption.WithHeader("X-Background", "1")}, "mock-web", "claude-haiku"},
		{"screenshot", anthropicParams("claude-sonnet-4-5", anthropic.NewUserMessage(
			anthropic.NewImageBlockBase64("image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
			anthropic.NewTextBlock("what is on the screen?"))), nil, "mock-vision", "gpt-vision"},
		{"long context", anthropicParams("claude-sonnet-4-5", text(strings.Repeat("Refactor the parser so that errors name the field. ", 800))), nil, "mock-long", "gpt-long"},
		{"thinking", func() anthropic.MessageNewParams {
			p := anthropicParams("claude-sonnet-4-5", text("prove it"))
			p.MaxTokens = 8000
			p.Thinking = anthropic.ThinkingConfigParamOfEnabled(4096)
			return p
		}(), nil, "mock-think", "gemini-think"},
		{"web search server tool", func() anthropic.MessageNewParams {
			p := anthropicParams("claude-sonnet-4-5", text("news?"))
			p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{}})
			return p
		}(), nil, "mock-web", "claude-sonnet-4-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.clearJournals()
			var httpResp *http.Response
			client := anthropicClient(e, "text", append(tt.opts, aoption.WithResponseInto(&httpResp))...)
			s := client.Messages.NewStreaming(context.Background(), tt.params)
			var msg anthropic.Message
			for s.Next() {
				if err := msg.Accumulate(s.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if got := httpResp.Header.Get("X-Mock-Backend"); got != tt.wantMock {
				t.Fatalf("answered by %q, want %q", got, tt.wantMock)
			}
			if msg.StopReason == "" {
				t.Error("the stream ended without a stop reason")
			}
			i := indexOf(mockNames, tt.wantMock)
			models, _ := e.mockJournal(i)
			if len(models) != 1 || !strings.Contains(models[0], tt.wantModel) {
				t.Errorf("%s received models %v, want %s", tt.wantMock, models, tt.wantModel)
			}
		})
	}

	// An OpenAI Chat client of the same model goes to the chat backend by
	// the client condition, untranslated.
	t.Run("client openai_chat", func(t *testing.T) {
		e.clearJournals()
		var httpResp *http.Response
		c := openaiClient(e, "text")
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "claude-sonnet-4-5",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		}, ooption.WithResponseInto(&httpResp))
		if err != nil {
			t.Fatal(err)
		}
		if got := httpResp.Header.Get("X-Mock-Backend"); got != "mock-vision" {
			t.Fatalf("answered by %q, want mock-vision", got)
		}
	})
}

// TestIntegrationConversationAffinity proves that lb_policy header
// X-Louter-Conversation keeps every turn of a conversation on one upstream
// and spreads conversations over both, for Claude Code's session id and
// for Gemini CLI's (hashed) first turn; and that the header does not reach
// the backend.
func TestIntegrationConversationAffinity(t *testing.T) {
	e := startRoutingEnv(t)
	// Which upstream a conversation hashes to depends on the mocks' random
	// ports: with 8 conversations all landed on one upstream about once in
	// 128 runs; with 24, once in 8 million.
	const conversations, turns = 24, 3
	s1, s2 := indexOf(mockNames, "mock-s1"), indexOf(mockNames, "mock-s2")

	t.Run("claude code session", func(t *testing.T) {
		e.clearJournals()
		where := map[string]map[string]bool{} // conversation → mocks that served it
		for c := 0; c < conversations; c++ {
			session := fmt.Sprintf("0b6d3c8e-7f2a-4e1b-9c5d-%012d", c)
			userID := `{"device_id":"d","account_uuid":"","session_id":"` + session + `"}`
			msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("task " + session))}
			for turn := 0; turn < turns; turn++ {
				var httpResp *http.Response
				p := anthropicParams("sticky-1", msgs...)
				p.Metadata = anthropic.MetadataParam{UserID: anthropic.String(userID)}
				client := anthropicClient(e, "text", aoption.WithResponseInto(&httpResp))
				m, err := client.Messages.New(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if got := httpResp.Header.Get("X-Seen-Conversation"); got != "session:"+session {
					t.Fatalf("{http.louter.conversation} = %q, want session:%s", got, session)
				}
				if where[session] == nil {
					where[session] = map[string]bool{}
				}
				where[session][httpResp.Header.Get("X-Mock-Backend")] = true
				msgs = append(msgs, m.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock(fmt.Sprintf("go on %d", turn))))
			}
		}
		checkAffinity(t, where)
		for _, i := range []int{s1, s2} {
			if _, convs := e.mockJournal(i); strings.Join(convs, "") != "" {
				t.Errorf("the conversation header reached the backend: %v", convs)
			}
		}
	})

	t.Run("gemini cli first-turn hash", func(t *testing.T) {
		e.clearJournals()
		where := map[string]map[string]bool{}
		for c := 0; c < conversations; c++ {
			task := fmt.Sprintf("fix bug number %d", c)
			contents := []*genai.Content{genai.NewContentFromText(task, genai.RoleUser)}
			for turn := 0; turn < turns; turn++ {
				cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are Gemini CLI.", genai.RoleUser)}
				resp, err := geminiClient(t, e, "text").Models.GenerateContent(context.Background(), "sticky-1", contents, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if where[task] == nil {
					where[task] = map[string]bool{}
				}
				where[task][resp.SDKHTTPResponse.Headers.Get("X-Mock-Backend")] = true
				contents = append(contents, resp.Candidates[0].Content, genai.NewContentFromText("and then?", genai.RoleUser))
			}
		}
		checkAffinity(t, where)
	})
}

// checkAffinity checks that each conversation was served by one upstream
// and that the conversations used both.
func checkAffinity(t *testing.T, where map[string]map[string]bool) {
	t.Helper()
	used := map[string]bool{}
	for conv, mocks := range where {
		if len(mocks) != 1 {
			t.Errorf("conversation %s was served by %v, want one upstream", conv, mocks)
		}
		for m := range mocks {
			used[m] = true
		}
	}
	if !used["mock-s1"] || !used["mock-s2"] {
		t.Errorf("conversations all went to %v, want both upstreams used", used)
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	panic("no mock " + name)
}

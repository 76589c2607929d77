package caddymodule_test

// Integration tests of what a backend answers about the searches it ran
// (translate's server_tool_results.go), through a real Caddy with the
// official SDKs against the mock's web_search scenario: each client sees
// the search and its pages in its SDK's own types, whichever backend ran
// it; the next turn gives each backend the search in its own shape or as
// text; an OpenAI Chat client's answer counts the drop.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const serverToolResultsCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend chatdrops {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model via-anth anth
		model via-chatdrops chatdrops
		model via-resp resp
		model via-gem gem
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name search-mock
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`

// The mock's web_search scenario finds these two pages.
var mockSearchPages = []string{"https://louter.example/docs", "https://caddy.example/modules"}

// search is what a client's SDK showed of one answer's search.
type search struct {
	id, query string
	pages     []string
	text      string
	// cites are the pages the text cites, as "url cited-text".
	cites []string
}

func (s search) check(t *testing.T, wantQuery string) {
	t.Helper()
	if s.id == "" || s.query != wantQuery || strings.Join(s.pages, " ") != strings.Join(mockSearchPages, " ") {
		t.Errorf("search: id %q, query %q, pages %q; want query %q, pages %q", s.id, s.query, s.pages, wantQuery, mockSearchPages)
	}
	if !strings.Contains(s.text, "Caddy module") {
		t.Errorf("text %q", s.text)
	}
}

// checkCites asserts the answer cites the mock's first page for "a Caddy
// module".
func (s search) checkCites(t *testing.T) {
	t.Helper()
	if len(s.cites) != 1 || s.cites[0] != mockSearchPages[0]+" a Caddy module" {
		t.Errorf("citations %q", s.cites)
	}
}

// anthropicSearch reads the search of an Anthropic answer, and the message
// to send back next turn.
func anthropicSearch(t *testing.T, e *env, model string, stream bool) (search, anthropic.MessageParam) {
	t.Helper()
	client := anthropicClient(e, "web_search")
	params := anthropicWebSearch(model, false)
	var msg anthropic.Message
	if stream {
		s := client.Messages.NewStreaming(context.Background(), params)
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		m, err := client.Messages.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		msg = *m
	}
	var s search
	for _, b := range msg.Content {
		switch v := b.AsAny().(type) {
		case anthropic.ServerToolUseBlock:
			s.id = v.ID
			in, _ := json.Marshal(v.Input)
			var q struct{ Query string }
			_ = json.Unmarshal(in, &q)
			s.query = q.Query
			if v.Name != "web_search" {
				t.Errorf("server_tool_use name %q", v.Name)
			}
		case anthropic.WebSearchToolResultBlock:
			if v.ToolUseID != s.id {
				t.Errorf("web_search_tool_result for %q, call %q", v.ToolUseID, s.id)
			}
			for _, r := range v.Content.OfWebSearchResultBlockArray {
				s.pages = append(s.pages, r.URL)
			}
		case anthropic.TextBlock:
			s.text += v.Text
			for _, c := range v.Citations {
				if c.Type == "web_search_result_location" {
					s.cites = append(s.cites, c.URL+" "+c.CitedText)
				}
			}
		}
	}
	return s, msg.ToParam()
}

// responsesSearch reads the web_search_call item of a Responses answer.
func responsesSearch(t *testing.T, e *env, model string, stream bool) (search, []responses.ResponseOutputItemUnion) {
	t.Helper()
	client := responsesClient(e, "web_search")
	params := rawParams(fmt.Sprintf(`{"model":%q,"store":false,"input":"louter","tools":[{"type":"web_search"}],"include":["web_search_call.action.sources"]}`, model))
	var items []responses.ResponseOutputItemUnion
	if stream {
		s := client.Responses.NewStreaming(context.Background(), params)
		for s.Next() {
			if ev := s.Current(); ev.Type == "response.output_item.done" {
				items = append(items, ev.Item)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		r, err := client.Responses.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		items = r.Output
	}
	var s search
	for _, it := range items {
		switch it.Type {
		case "web_search_call":
			ws := it.AsWebSearchCall()
			a := ws.Action.AsSearch()
			s.id, s.query = ws.ID, a.Query
			for _, src := range a.Sources {
				s.pages = append(s.pages, src.URL)
			}
			if ws.Status != "completed" {
				t.Errorf("web_search_call status %q", ws.Status)
			}
		case "message":
			for _, c := range it.AsMessage().Content {
				for _, a := range c.Annotations {
					if a.Type == "url_citation" && a.StartIndex >= 0 && a.EndIndex <= int64(len(c.Text)) && a.StartIndex < a.EndIndex {
						s.cites = append(s.cites, a.URL+" "+c.Text[a.StartIndex:a.EndIndex])
					}
				}
				s.text += c.Text
			}
		}
	}
	return s, items
}

// geminiSearch reads the grounding metadata of a Gemini answer.
func geminiSearch(t *testing.T, e *env, model string, stream bool) search {
	t.Helper()
	c := geminiClient(t, e, "web_search")
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	var chunks []*genai.GenerateContentResponse
	if stream {
		for r, err := range c.Models.GenerateContentStream(context.Background(), model, genai.Text("louter"), cfg) {
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, r)
		}
	} else {
		r, err := c.Models.GenerateContent(context.Background(), model, genai.Text("louter"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, r)
	}
	var s search
	for _, r := range chunks {
		if len(r.Candidates) == 0 {
			continue
		}
		s.text += r.Text()
		gm := r.Candidates[0].GroundingMetadata
		if gm == nil {
			continue
		}
		for _, q := range gm.WebSearchQueries {
			s.id, s.query = "(gemini has none)", q
		}
		// A chunk's supports point into its own groundingChunks, which
		// repeat the pages they cite: the pages are the distinct ones.
		for _, ch := range gm.GroundingChunks {
			if ch.Web != nil && !slices.Contains(s.pages, ch.Web.URI) {
				s.pages = append(s.pages, ch.Web.URI)
			}
		}
		for _, sup := range gm.GroundingSupports {
			if sup.Segment != nil && len(sup.GroundingChunkIndices) == 1 && int(sup.GroundingChunkIndices[0]) < len(gm.GroundingChunks) {
				s.cites = append(s.cites, gm.GroundingChunks[sup.GroundingChunkIndices[0]].Web.URI+" "+sup.Segment.Text)
			}
		}
	}
	return s
}

func TestIntegrationServerToolResults(t *testing.T) {
	ports := testcaddy.Start(t, serverToolResultsCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
	query := "Perform a web search for the query: louter" // anthropicWebSearch's prompt

	for _, stream := range []bool{false, true} {
		for _, model := range []string{"via-resp", "via-gem"} {
			t.Run(fmt.Sprintf("anthropic client, %s, stream=%v", model, stream), func(t *testing.T) {
				s, _ := anthropicSearch(t, e, model, stream)
				s.check(t, query)
				s.checkCites(t)
			})
		}
		for _, model := range []string{"via-anth", "via-gem"} {
			t.Run(fmt.Sprintf("responses client, %s, stream=%v", model, stream), func(t *testing.T) {
				s, _ := responsesSearch(t, e, model, stream)
				s.check(t, "louter")
				s.checkCites(t)
			})
		}
		for _, model := range []string{"via-anth", "via-resp"} {
			t.Run(fmt.Sprintf("gemini client, %s, stream=%v", model, stream), func(t *testing.T) {
				s := geminiSearch(t, e, model, stream)
				s.check(t, "louter")
				s.checkCites(t)
			})
		}
	}

	// Next turn: the client hands the search back.
	t.Run("anthropic client hands openai's search back to the responses backend as its item", func(t *testing.T) {
		s, asst := anthropicSearch(t, e, "via-resp", false)
		if !strings.HasPrefix(s.id, "ws_") {
			t.Fatalf("search id %q", s.id)
		}
		e.clearJournals()
		p := anthropicWebSearch("via-resp", false)
		p.Messages = append(p.Messages, asst, anthropic.NewUserMessage(anthropic.NewTextBlock("more?")))
		if _, err := runAnthropic(e, "text", false, p); err != nil {
			t.Fatal(err)
		}
		item := e.onlyBackendRequest().Get(`body.input.#(type=="web_search_call")`)
		if item.Get("id").Str != s.id || item.Get("action.query").Str != query || item.Get("action.sources.#").Int() != 2 {
			t.Errorf("web_search_call item %s", item.Raw)
		}
	})
	t.Run("anthropic client hands anthropic's search to a responses backend as text", func(t *testing.T) {
		// A search Anthropic ran, with its encrypted content, as Claude
		// Code sends it back after a fallback to another backend.
		e.clearJournals()
		p := anthropicWebSearch("via-resp", false)
		p.Messages = append(p.Messages, anthropic.NewAssistantMessage(
			anthropic.NewServerToolUseBlock("srvtoolu_01", map[string]any{"query": "louter"}, anthropic.ServerToolUseBlockParamNameWebSearch),
			anthropic.NewWebSearchToolResultBlock([]anthropic.WebSearchResultBlockParam{{URL: mockSearchPages[0], Title: "louter docs", EncryptedContent: "secret-enc"}}, "srvtoolu_01"),
			anthropic.NewTextBlock("Louter is a Caddy module."),
		), anthropic.NewUserMessage(anthropic.NewTextBlock("more?")))
		if _, err := runAnthropic(e, "text", false, p); err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body").Raw
		if strings.Contains(body, "secret-enc") || strings.Contains(body, "srvtoolu_01") || strings.Contains(body, "web_search_call") {
			t.Errorf("anthropic's search went to the responses backend as is: %s", body)
		}
		if !strings.Contains(body, "[web_search query: louter]") || !strings.Contains(body, mockSearchPages[0]) {
			t.Errorf("the search is not in the assistant's turn as text: %s", body)
		}
	})
	t.Run("codex hands anthropic's search to the anthropic backend as text", func(t *testing.T) {
		s, items := responsesSearch(t, e, "via-anth", false)
		e.clearJournals()
		var input []any
		input = append(input, map[string]any{"role": "user", "content": "louter"})
		for _, it := range items {
			input = append(input, json.RawMessage(it.RawJSON()))
		}
		input = append(input, map[string]any{"role": "user", "content": "more?"})
		raw, _ := json.Marshal(map[string]any{"model": "via-anth", "store": false, "input": input, "tools": []any{map[string]any{"type": "web_search"}}})
		if _, err := callResponses(e, "text", false, rawParams(string(raw))); err != nil {
			t.Fatal(err)
		}
		body := e.onlyBackendRequest().Get("body")
		// The item kept the id Anthropic gave, but no encrypted content:
		// Anthropic would refuse the result, so it goes as text.
		if strings.Contains(body.Raw, "server_tool_use") || strings.Contains(body.Raw, "web_search_tool_result") {
			t.Errorf("the search went as blocks without their encrypted content: %s", body.Raw)
		}
		if !strings.Contains(body.Raw, "[web_search query: louter]") || !strings.Contains(body.Raw, s.pages[0]) {
			t.Errorf("the search is not in the assistant's turn as text: %s", body.Raw)
		}
	})

	t.Run("openai chat client: the searches are dropped, and counted", func(t *testing.T) {
		// Counted by backend, a label of this test's alone: the field
		// label may be folded into "other" after other tests
		// (metrics.go: maxDroppedLabels). The same request answered
		// without a search is the baseline.
		metrics := testcaddy.URL(ports[2]) + "/metrics"
		label := `backend="chatdrops"`
		drops := func(scenario string, stream bool) float64 {
			m := testcaddy.Scrape(t, metrics)
			reqs, before := testcaddy.Sum(m, "louter_requests_total", label), testcaddy.Sum(m, "louter_dropped_fields_total", label)
			r, err := callOpenAI(e, "via-chatdrops", scenario, stream, openai.UserMessage("louter"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(r.text, "louter.example") {
				t.Errorf("a page in the text: %q", r.text)
			}
			for deadline := time.Now().Add(3 * time.Second); testcaddy.Sum(m, "louter_requests_total", label) == reqs && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				m = testcaddy.Scrape(t, metrics)
			}
			return testcaddy.Sum(m, "louter_dropped_fields_total", label) - before
		}
		for _, stream := range []bool{false, true} {
			if base, got := drops("text", stream), drops("web_search", stream); got != base+1 {
				t.Errorf("stream=%v: louter_dropped_fields_total moved by %v with a search, %v without; want one more", stream, got, base)
			}
		}
	})
}

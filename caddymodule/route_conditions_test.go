package caddymodule

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/translate"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// conditionsRoute is a route with one condition per test, each to its own
// backend, named after the test.
func conditionsRoute() *ModelRoute {
	be := func(name string, p translate.Protocol) *Backend { return &Backend{name: name, Protocol: p} }
	r := &ModelRoute{Match: "*", Backend: "main", backend: be("main", translate.ProtocolAnthropic)}
	for _, c := range []RouteCondition{
		{Header: "X-Background", HeaderValue: "y*", Backend: "header"},
		{Client: translate.ProtocolOpenAIChat, Tools: true, Backend: "chat-tools"},
		{Images: true, Backend: "images", Rename: "vision-model"},
		{TokensAbove: 5000, Backend: "long"},
		{Thinking: true, Backend: "thinking"},
		{Tool: "web_search", Backend: "web"},
		{Tools: true, Backend: "tools"},
	} {
		c.backend = be(c.Backend, translate.ProtocolOpenAIChat)
		r.When = append(r.When, c)
	}
	return r
}

func TestRouteConditions(t *testing.T) {
	longText := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1500)
	tests := []struct {
		name      string
		client    translate.Protocol
		header    http.Header
		body      string
		want      string
		wantModel string
	}{
		// Requests as the agents send them (testdata): the Claude Code and
		// Codex turns carry a screenshot (the first test that holds wins,
		// images); Gemini CLI's offers googleSearch but thinks first.
		{"claude code turn", translate.ProtocolAnthropic, nil, string(readTestdata(t, "anthropic/request_claude_code.json")), "images", "vision-model"},
		{"codex turn", translate.ProtocolOpenAIResponses, nil, string(readTestdata(t, "openai_responses/request_codex.json")), "images", "vision-model"},
		{"gemini cli turn", translate.ProtocolGemini, nil, string(readTestdata(t, "gemini/request_gemini_cli.json")), "thinking", ""},

		{"plain text: the route's backend", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "main", ""},
		{"anthropic image", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"what is it"}]}]}`, "images", "vision-model"},
		{"anthropic pdf document", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"}}]}]}`, "images", "vision-model"},
		{"image in a tool result", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"shot","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}]}`, "images", "vision-model"},
		{"openai chat image_url", translate.ProtocolOpenAIChat, nil, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`, "images", "vision-model"},
		{"gemini inline image", translate.ProtocolGemini, nil, `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]}]}`, "images", "vision-model"},
		{"long context", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"` + longText + `"}]}`, "long", ""},
		{"anthropic thinking enabled", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"hi"}]}`, "thinking", ""},
		{"anthropic thinking disabled", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"hi"}]}`, "main", ""},
		{"chat reasoning_effort", translate.ProtocolOpenAIResponses, nil, `{"model":"m","reasoning":{"effort":"high"},"input":"hi"}`, "thinking", ""},
		{"responses reasoning none", translate.ProtocolOpenAIResponses, nil, `{"model":"m","reasoning":{"effort":"none"},"input":"hi"}`, "main", ""},
		{"gemini thinking budget 0", translate.ProtocolGemini, nil, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`, "main", ""},
		{"anthropic web search server tool", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}],"messages":[{"role":"user","content":"news?"}]}`, "web", ""},
		{"responses web_search", translate.ProtocolOpenAIResponses, nil, `{"model":"m","tools":[{"type":"web_search"}],"input":"news?"}`, "web", ""},
		{"gemini googleSearch", translate.ProtocolGemini, nil, `{"contents":[{"role":"user","parts":[{"text":"news?"}]}],"tools":[{"googleSearch":{}}]}`, "web", ""},
		{"a tool's description is not its name", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"tools":[{"name":"Bash","description":"web_search","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"ls"}]}`, "tools", ""},
		{"chat function named web_search", translate.ProtocolOpenAIChat, nil, `{"model":"m","tools":[{"type":"function","function":{"name":"web_search","parameters":{}}}],"messages":[{"role":"user","content":"x"}]}`, "chat-tools", ""},
		{"gemini function named web_search", translate.ProtocolGemini, nil, `{"contents":[{"role":"user","parts":[{"text":"news?"}]}],"tools":[{"functionDeclarations":[{"name":"read"},{"name":"web_search"}]}]}`, "web", ""},
		{"function tools", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"ls"}]}`, "tools", ""},
		{"empty tools array", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"tools":[],"messages":[{"role":"user","content":"ls"}]}`, "main", ""},
		{"empty tools array with spaces", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"tools":[ ],"messages":[{"role":"user","content":"ls"}]}`, "main", ""},
		{"chat client with tools", translate.ProtocolOpenAIChat, nil, `{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"messages":[{"role":"user","content":"x"}]}`, "chat-tools", ""},
		{"header glob", translate.ProtocolAnthropic, http.Header{"X-Background": {"yes"}}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "header", ""},
		{"header value not matching", translate.ProtocolAnthropic, http.Header{"X-Background": {"no"}}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "main", ""},
		{"undecodable body: the route's backend", translate.ProtocolAnthropic, nil, `{"model":"m","max_tokens":5,"messages":"nope","thinking":{"type":"enabled","budget_tokens":2048}}`, "main", ""},
	}
	route := conditionsRoute()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codec, _ := translate.Lookup(tt.client)
			in := conditionInput{client: tt.client, header: tt.header, body: []byte(tt.body), tokensFor: translate.ProtocolAnthropic,
				decode: func() *translate.Request {
					req, err := codec.DecodeRequest([]byte(tt.body))
					if err != nil {
						return nil
					}
					return req
				}}
			b, rename, _ := route.chooseBackend(&in)
			if b.name != tt.want {
				t.Errorf("backend = %s, want %s", b.name, tt.want)
			}
			if rename != tt.wantModel {
				t.Errorf("rename = %q, want %q", rename, tt.wantModel)
			}
		})
	}
}

// A route whose conditions need only headers or the raw body never
// decodes the request.
func TestConditionsDecodeOnlyWhenNeeded(t *testing.T) {
	route := &ModelRoute{backend: &Backend{name: "main"}, When: []RouteCondition{
		{Header: "X-A", Backend: "a", backend: &Backend{name: "a"}},
		{Tool: "web_search", Backend: "w", backend: &Backend{name: "w"}},
	}}
	decoded := 0
	in := conditionInput{client: translate.ProtocolAnthropic, body: []byte(`{"model":"m","messages":[]}`),
		decode: func() *translate.Request { decoded++; return &translate.Request{} }}
	if b, _, _ := route.chooseBackend(&in); b.name != "main" || decoded != 0 {
		t.Fatalf("backend %s, decoded %d times; want main, 0", b.name, decoded)
	}
}

func TestUnmarshalWhen(t *testing.T) {
	tests := []struct {
		line    string
		want    RouteCondition
		wantErr string
	}{
		{"when images vision", RouteCondition{Images: true, Backend: "vision"}, ""},
		{"when tokens > 60000 long gemini-2.5-pro", RouteCondition{TokensAbove: 60000, Backend: "long", Rename: "gemini-2.5-pro"}, ""},
		{"when tokens 100 long", RouteCondition{TokensAbove: 100, Backend: "long"}, ""},
		{"when thinking reasoning", RouteCondition{Thinking: true, Backend: "reasoning"}, ""},
		{"when tools t", RouteCondition{Tools: true, Backend: "t"}, ""},
		{"when tool web_search anthropic", RouteCondition{Tool: "web_search", Backend: "anthropic"}, ""},
		{"when header X-Foo bar other", RouteCondition{Header: "X-Foo", HeaderValue: "bar", Backend: "other"}, ""},
		{"when client gemini g m", RouteCondition{Client: translate.ProtocolGemini, Backend: "g", Rename: "m"}, ""},
		{"when images and thinking vr", RouteCondition{Images: true, Thinking: true, Backend: "vr"}, ""},
		{"when images", RouteCondition{}, "a backend"},
		{"when", RouteCondition{}, "a test and a backend"},
		{"when pictures x", RouteCondition{}, "unknown test 'pictures'"},
		{"when tokens > lots x", RouteCondition{}, "positive n"},
		{"when client klingon x", RouteCondition{}, "unknown protocol"},
		{"when header X-Foo", RouteCondition{}, "header <name> <glob>"},
		{"when images a b c", RouteCondition{}, "got 3 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			d := caddyfile.NewTestDispenser(tt.line)
			d.Next()
			got, err := unmarshalWhen(d)
			if wantError(t, err, tt.wantErr) {
				return
			}
			if got.String() != tt.want.String() || got.Backend != tt.want.Backend || got.Rename != tt.want.Rename || got.HeaderValue != tt.want.HeaderValue {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The when lines of a model block land in the route's When, in order, and
// a condition naming no backend fails validation.
func TestCaddyfileModelWhen(t *testing.T) {
	d := caddyfile.NewTestDispenser(`louter {
		backend a {
			protocol anthropic
			reverse_proxy 127.0.0.1:1
		}
		backend v {
			protocol openai_chat
			reverse_proxy 127.0.0.1:2
		}
		model claude-* a {
			list claude-x
			when images v gpt-4o
			when header X-Bg * a claude-haiku
		}
	}`)
	var l Louter
	if err := l.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	w := l.Models[0].When
	if len(w) != 2 || !w[0].Images || w[0].Backend != "v" || w[0].Rename != "gpt-4o" || w[1].Header != "X-Bg" || w[1].Rename != "claude-haiku" {
		t.Fatalf("When = %+v", w)
	}
	l.Backends = map[string]*Backend{"a": {}}
	l.Models[0].When[0].Backend = "nope"
	l.provisionConditions()
	errs := l.validateConditions()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `unknown backend "nope"`) {
		t.Fatalf("errs = %v", errs)
	}
}

package translate

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func anthPtr[T any](v T) *T { return &v }

func anthText(s string) Part { return Part{Type: PartText, Text: s} }

func anthCall(id, name, args string) Part {
	return Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name, Arguments: args}}
}

func anthResult(id string, isErr bool, content ...Part) Part {
	return Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, IsError: isErr, Content: content}}
}

// anthOpenAITurn is an IR request as the OpenAI Chat decoder produces it for
// an agent in the middle of a tool loop: system and developer messages,
// unsigned reasoning, parallel tool calls with one malformed argument
// string, one tool message per result, and OpenAI-only sampling fields.
func anthOpenAITurn() *Request {
	return &Request{
		Model:  "claude-sonnet-4-5",
		System: []Part{anthText("You are a coding agent."), anthText("")},
		Messages: []Message{
			{Role: RoleSystem, Parts: []Part{anthText("Prefer small diffs.")}},
			{Role: RoleUser, Parts: []Part{
				anthText("Fix the build. <see log> & report"),
				{Type: PartImage, Media: &Media{URL: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}},
				{Type: PartImage, Media: &Media{URL: "https://example.com/screen.jpg", Detail: "high"}},
				{Type: PartImage, Media: &Media{FileID: "file-abc"}},
				{Type: PartDocument, Media: &Media{MediaType: "application/pdf", Data: "JVBERi0xLjcK", Filename: "log.pdf"}},
				{Type: PartDocument, Media: &Media{MediaType: "text/plain", Data: "bGluZSAx"}},
				{Type: PartDocument, Media: &Media{MediaType: "application/zip", Data: "UEsDBA=="}},
			}},
			{Role: RoleUser, Parts: []Part{anthText("Quickly, please.")}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "unsigned reasoning from an OpenAI-compatible server"},
				anthText("Running both."),
				anthCall("call_1", "bash", `{"cmd":"go build ./..."}`),
				anthCall("call_2", "read", `{"path": "main.go"`),
				anthCall("call_3", "noop", ""),
			}},
			{Role: RoleUser, Parts: []Part{anthResult("call_1", false, anthText("main.go:3: undefined: x"))}},
			{Role: RoleUser, Parts: []Part{anthResult("call_2", true, anthText("no such file"))}},
			{Role: RoleUser, Parts: []Part{anthResult("call_3", false)}},
			{Role: RoleSystem, Parts: []Part{anthText("Reminder: run the tests.")}},
			{Role: RoleUser, Parts: []Part{anthText("Also check vet.")}},
			{Role: RoleAssistant, Parts: []Part{anthCall("call_4", "bash", `{"cmd":"go vet ./..."}`)}},
			{Role: RoleUser, Parts: []Part{anthResult("call_4", false, anthText("ok"))}},
		},
		Tools: []Tool{
			{Name: "bash", Description: "Run a shell command.", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`), Strict: anthPtr(true)},
			{Name: "read", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "noop"},
		},
		ParallelToolCalls: anthPtr(false),
		MaxTokens:         8000,
		Temperature:       anthPtr(0.2),
		TopP:              anthPtr(0.9),
		Seed:              anthPtr(int64(7)),
		PresencePenalty:   anthPtr(0.1),
		FrequencyPenalty:  anthPtr(0.2),
		StopSequences:     []string{"END", "\n"},
		Reasoning:         &Reasoning{Effort: "medium"},
		ResponseFormat:    &ResponseFormat{Type: "json_object"},
		User:              "user-1",
		Stream:            true,
		IncludeUsage:      true,
	}
}

func TestAnthropicEncodeRequest(t *testing.T) {
	tests := []struct {
		name    string
		req     func() *Request
		checks  map[string]string // gjson path -> raw JSON value ("" = absent)
		dropped []string          // entries that must be in req.Dropped
	}{
		{
			name: "openai_agent_turn",
			req:  anthOpenAITurn,
			checks: map[string]string{
				"max_tokens":                    `8000`,
				"system.#":                      `3`,
				"system.1.text":                 `"Prefer small diffs."`,
				"system.2.text":                 `"Reminder: run the tests."`,
				"messages.#":                    `5`,
				"messages.0.role":               `"user"`,
				"messages.0.content.#":          `6`,
				"messages.0.content.0.text":     `"Fix the build. <see log> & report"`,
				"messages.0.content.1.source":   `{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}`,
				"messages.0.content.2.source":   `{"type":"url","url":"https://example.com/screen.jpg"}`,
				"messages.0.content.3.title":    `"log.pdf"`,
				"messages.0.content.4.source":   `{"type":"text","media_type":"text/plain","data":"line 1"}`,
				"messages.0.content.5.text":     `"Quickly, please."`,
				"messages.1.role":               `"assistant"`,
				"messages.1.content.0.type":     `"text"`,
				"messages.1.content.1.input":    `{"cmd":"go build ./..."}`,
				"messages.1.content.2.input":    `{"_raw":"{\"path\": \"main.go\""}`,
				"messages.1.content.3.input":    `{}`,
				"messages.2.content.#":          `4`,
				"messages.2.content.0.content":  `[{"type":"text","text":"main.go:3: undefined: x"}]`,
				"messages.2.content.1.is_error": `true`,
				"messages.2.content.2":          `{"type":"tool_result","tool_use_id":"call_3"}`,
				"messages.2.content.3.text":     `"Also check vet."`,
				"tools.0.strict":                `true`,
				"tools.2.input_schema":          `{"type":"object","properties":{}}`,
				"tool_choice":                   `{"type":"auto","disable_parallel_tool_use":true}`,
				"thinking":                      `{"type":"disabled"}`,
				"temperature":                   `0.2`,
				"top_p":                         `0.9`,
				"stop_sequences":                `["END"]`,
				"metadata":                      `{"user_id":"user-1"}`,
				"stream":                        `true`,
				"output_config":                 ``,
				"seed":                          ``,
			},
			dropped: []string{
				"thinking: thinking without a signature cannot be sent to Anthropic",
				"thinking: history has tool calls without signed thinking blocks",
				`tool_use.input: arguments were not a JSON object; sent as {"_raw": "<text>"}`,
				"image: provider file ids do not carry across providers",
				"document: media type application/zip is not supported by Anthropic documents",
				"response_format: Anthropic has no JSON mode without a schema",
				"seed: Anthropic has no seed",
				"presence_penalty: Anthropic has no presence penalty",
				"frequency_penalty: Anthropic has no frequency penalty",
				"stop_sequences: Anthropic rejects whitespace-only stop sequences",
			},
		},
		{
			name: "budget_clamped_under_max_tokens",
			req: func() *Request {
				return &Request{
					Model: "m", MaxTokens: 16000,
					Messages:    []Message{{Role: RoleUser, Parts: []Part{anthText("hi")}}},
					Reasoning:   &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 50000, Display: "auto"},
					Temperature: anthPtr(0.7), TopP: anthPtr(0.5), TopK: anthPtr(5),
				}
			},
			checks: map[string]string{
				"max_tokens":  `16000`,
				"thinking":    `{"type":"enabled","budget_tokens":15999}`,
				"temperature": ``, "top_p": ``, "top_k": ``,
			},
			dropped: []string{
				"temperature: Anthropic requires the default temperature with thinking",
				"top_p: Anthropic requires top_p >= 0.95 with thinking",
				"top_k: Anthropic does not allow top_k with thinking",
				"thinking.display: Anthropic knows only summarized and omitted",
			},
		},
		{
			name: "small_max_tokens_raised",
			req: func() *Request {
				return &Request{
					Model: "m", MaxTokens: 512,
					Messages:    []Message{{Role: RoleUser, Parts: []Part{anthText("hi")}}},
					Reasoning:   &Reasoning{Effort: "low"},
					Temperature: anthPtr(1.0),
				}
			},
			checks: map[string]string{
				"max_tokens":  `1536`,
				"thinking":    `{"type":"enabled","budget_tokens":1024}`,
				"temperature": `1`,
			},
			dropped: []string{"max_tokens: raised to make room for the minimum thinking budget"},
		},
		{
			name: "effort_without_max_tokens",
			req: func() *Request {
				return &Request{
					Model:     "m",
					Messages:  []Message{{Role: RoleUser, Parts: []Part{anthText("hi")}}},
					Reasoning: &Reasoning{Effort: "high"},
				}
			},
			checks: map[string]string{
				"max_tokens": `28672`,
				"thinking":   `{"type":"enabled","budget_tokens":24576}`,
			},
		},
		{
			name: "adaptive_effort_schema",
			req: func() *Request {
				return &Request{
					Model:          "m",
					Messages:       []Message{{Role: RoleUser, Parts: []Part{anthText("hi")}}},
					Reasoning:      &Reasoning{Mode: ReasoningAdaptive, Effort: "xhigh", Display: "summarized"},
					ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
					Temperature:    anthPtr(1.5),
				}
			},
			checks: map[string]string{
				"max_tokens":    `4096`,
				"thinking":      `{"type":"adaptive","display":"summarized"}`,
				"output_config": `{"effort":"xhigh","format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
				"temperature":   ``,
			},
			dropped: []string{"temperature: Anthropic requires the default temperature with thinking"},
		},
		{
			name: "no_thinking_temperature_clamped",
			req: func() *Request {
				return &Request{
					Model:       "m",
					Messages:    []Message{{Role: RoleUser, Parts: []Part{anthText("hi")}}},
					Temperature: anthPtr(1.7),
					TopK:        anthPtr(3),
					Reasoning:   &Reasoning{Effort: "none"},
				}
			},
			checks: map[string]string{
				"temperature": `1`,
				"top_k":       `3`,
				"thinking":    `{"type":"disabled"}`,
			},
			dropped: []string{"temperature: clamped to Anthropic's maximum of 1"},
		},
		{
			name: "signed_history_keeps_thinking",
			req: func() *Request {
				return &Request{
					Model: "m", MaxTokens: 32000,
					Messages: []Message{
						{Role: RoleUser, Parts: []Part{anthText("list files")}},
						{Role: RoleAssistant, Parts: []Part{
							{Type: PartThinking, Text: "I will run ls.", Signature: "SIG/+=="},
							anthCall("toolu_1", "bash", `{"cmd":"ls"}`),
						}},
						{Role: RoleUser, Parts: []Part{anthResult("toolu_1", false, anthText("a.go"))}},
						{Role: RoleAssistant, Parts: []Part{
							{Type: PartRedactedThinking, Signature: "REDACTED"},
							anthCall("toolu_2", "bash", `{"cmd":"cat a.go"}`),
						}},
						{Role: RoleUser, Parts: []Part{anthResult("toolu_2", false, anthText("package a"))}},
					},
					Tools:     []Tool{{Name: "bash"}},
					Reasoning: &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 10000},
				}
			},
			checks: map[string]string{
				"thinking":             `{"type":"enabled","budget_tokens":10000}`,
				"messages.1.content.0": `{"type":"thinking","thinking":"I will run ls.","signature":"SIG/+=="}`,
				"messages.3.content.0": `{"type":"redacted_thinking","data":"REDACTED"}`,
				"tool_choice":          ``,
			},
		},
		{
			name: "finished_tool_turn_does_not_need_signatures",
			req: func() *Request {
				return &Request{
					Model: "m", MaxTokens: 32000,
					Messages: []Message{
						{Role: RoleUser, Parts: []Part{anthText("list files")}},
						{Role: RoleAssistant, Parts: []Part{anthCall("call_1", "bash", `{"cmd":"ls"}`)}},
						{Role: RoleUser, Parts: []Part{anthResult("call_1", false, anthText("a.go"))}},
						{Role: RoleAssistant, Parts: []Part{anthText("There is a.go.")}},
						{Role: RoleUser, Parts: []Part{anthText("thanks, now explain it")}},
					},
					Reasoning: &Reasoning{Effort: "medium"},
				}
			},
			checks: map[string]string{
				"thinking":   `{"type":"enabled","budget_tokens":8192}`,
				"max_tokens": `32000`,
			},
		},
		{
			name: "forced_tool_choice_disables_thinking",
			req: func() *Request {
				return &Request{
					Model: "m", MaxTokens: 32000,
					Messages:   []Message{{Role: RoleUser, Parts: []Part{anthText("weather?")}}},
					Tools:      []Tool{{Name: "get_weather", Description: "d"}, {Name: "get_time"}, {Name: "other"}},
					ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: "get_weather"},
					Reasoning:  &Reasoning{Mode: ReasoningAdaptive},
				}
			},
			checks: map[string]string{
				"thinking":    `{"type":"disabled"}`,
				"tool_choice": `{"type":"tool","name":"get_weather"}`,
				"tools.#":     `3`,
			},
			dropped: []string{"thinking: Anthropic does not allow thinking with a forced tool choice"},
		},
		{
			name: "allowed_tools_filter",
			req: func() *Request {
				return &Request{
					Model:             "m",
					Messages:          []Message{{Role: RoleUser, Parts: []Part{anthText("go")}}},
					Tools:             []Tool{{Name: "a"}, {Name: "b"}, {Name: "c"}},
					ToolChoice:        &ToolChoice{Mode: ToolChoiceRequired, Allowed: []string{"c", "a"}},
					ParallelToolCalls: anthPtr(false),
				}
			},
			checks: map[string]string{
				"tools.#.name": `["a","c"]`,
				"tool_choice":  `{"type":"any","disable_parallel_tool_use":true}`,
			},
			dropped: []string{"tool_choice.allowed_tools: approximated by sending only the allowed tools"},
		},
		{
			name: "tool_choice_none_and_no_tools",
			req: func() *Request {
				return &Request{
					Model:      "m",
					Messages:   []Message{{Role: RoleUser, Parts: []Part{anthText("go")}}},
					Tools:      []Tool{{Name: "a"}},
					ToolChoice: &ToolChoice{Mode: ToolChoiceNone}, ParallelToolCalls: anthPtr(false),
				}
			},
			checks: map[string]string{"tool_choice": `{"type":"none"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req()
			body, err := anthropicCodec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if !gjson.ValidBytes(body) {
				t.Fatalf("invalid JSON: %s", body)
			}
			for path, want := range tt.checks {
				got := gjson.GetBytes(body, path)
				if want == "" {
					if got.Exists() {
						t.Errorf("%s = %s, want it absent", path, got.Raw)
					}
					continue
				}
				if got.Raw != want {
					t.Errorf("%s = %s, want %s", path, got.Raw, want)
				}
			}
			for _, d := range tt.dropped {
				if !slices.Contains(req.Dropped, d) {
					t.Errorf("Dropped lacks %q; got:\n%s", d, strings.Join(req.Dropped, "\n"))
				}
			}
			anthCheckAlternation(t, body)
			golden(t, "anthropic/encode_"+tt.name+".json", append(anthIndent(t, body), anthDumpDropped(req)...))
		})
	}
}

func anthDumpDropped(req *Request) []byte {
	var b strings.Builder
	b.WriteString("--- dropped\n")
	for _, d := range req.Dropped {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// anthCheckAlternation asserts the rules Anthropic enforces on messages:
// roles alternate, no content is empty, tool results lead their user turn.
func anthCheckAlternation(t *testing.T, body []byte) {
	t.Helper()
	prev := ""
	gjson.GetBytes(body, "messages").ForEach(func(k, m gjson.Result) bool {
		role := m.Get("role").Str
		if role != "user" && role != "assistant" {
			t.Errorf("messages.%s has role %q", k.Raw, role)
		}
		if role == prev {
			t.Errorf("messages.%s repeats role %s", k.Raw, role)
		}
		prev = role
		content := m.Get("content").Array()
		if len(content) == 0 {
			t.Errorf("messages.%s has no content", k.Raw)
		}
		seenOther := false
		for _, c := range content {
			typ := c.Get("type").Str
			if typ == "tool_result" && seenOther {
				t.Errorf("messages.%s has a tool_result after other content", k.Raw)
			}
			if typ != "tool_result" {
				seenOther = true
			}
			if typ == "text" && c.Get("text").Str == "" {
				t.Errorf("messages.%s has an empty text block", k.Raw)
			}
		}
		return true
	})
}

// TestAnthropicRequestRoundTrip decodes an Anthropic request, encodes the
// IR back and decodes again: nothing the IR holds may change.
func TestAnthropicRequestRoundTrip(t *testing.T) {
	c := anthropicCodec{}
	first := anthDecode(t, anthFixture(t, "request_roundtrip.json"))
	if len(first.Dropped) != 0 {
		t.Fatalf("fixture should decode without drops, got %q", first.Dropped)
	}
	body, err := c.EncodeRequest(first)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Dropped) != 0 {
		t.Fatalf("encoding dropped %q", first.Dropped)
	}
	second := anthDecode(t, body)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("round trip changed the IR:\n--- first\n%s\n--- second\n%s\nbody: %s", anthDumpJSON(first), anthDumpJSON(second), body)
	}
	// And once more: encoding is deterministic.
	again, _ := c.EncodeRequest(second)
	if string(again) != string(body) {
		t.Errorf("second encoding differs:\n%s\n%s", body, again)
	}
}

// TestAnthropicEncodeClaudeCode encodes a decoded Claude Code request (as if
// another protocol had produced the same IR): the role:"system" message
// joins the system prompt and thinking survives (the tool turn is signed).
func TestAnthropicEncodeClaudeCode(t *testing.T) {
	req := anthDecode(t, anthFixture(t, "request_claude_code.json"))
	req.Dropped = nil
	body, err := anthropicCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	anthCheckAlternation(t, body)
	if got := gjson.GetBytes(body, "system.3.text").Str; !strings.Contains(got, "TodoWrite") {
		t.Errorf("system.3 = %q, want the role:system message", got)
	}
	if got := gjson.GetBytes(body, "messages.#").Int(); got != 3 {
		t.Errorf("messages = %d, want 3", got)
	}
	if got := gjson.GetBytes(body, "thinking").Raw; got != `{"type":"adaptive","display":"omitted"}` {
		t.Errorf("thinking = %s", got)
	}
	if got := gjson.GetBytes(body, "output_config").Raw; got != `{"effort":"high"}` {
		t.Errorf("output_config = %s", got)
	}
	if got := gjson.GetBytes(body, "tools.2.input_schema").Raw; got != `{}` {
		t.Errorf("empty schema = %s, want {} untouched", got)
	}
	if got := gjson.GetBytes(body, "messages.2.content.0.cache_control").Raw; got != `{"type": "ephemeral"}` {
		t.Errorf("tool_result cache_control = %s", got)
	}
	if len(req.Dropped) != 0 {
		t.Errorf("Dropped = %q", req.Dropped)
	}
}

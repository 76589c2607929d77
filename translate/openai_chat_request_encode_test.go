package translate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func oaiPtr[T any](v T) *T { return &v }

// oaiClaudeCodeTurn is an IR shaped like what the Anthropic decoder makes of
// a Claude Code request in the middle of a session: three system blocks
// with cache_control, signed thinking, parallel tool calls whose results
// include an error and a screenshot, a system message mid-conversation,
// redacted thinking, and a tool with an empty schema.
func oaiClaudeCodeTurn() *Request {
	cc := json.RawMessage(`{"type":"ephemeral"}`)
	return &Request{
		Model: "qwen3-coder-30b",
		System: []Part{
			{Type: PartText, Text: "x-anthropic-billing-header: cc_version=2.1.330"},
			{Type: PartText, Text: "You are Claude Code, Anthropic's official CLI for Claude."},
			{Type: PartText, Text: "You are an interactive CLI tool that helps users with software engineering tasks.\nUse <tags> & \"quotes\" freely.", CacheControl: cc},
		},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{
				{Type: PartText, Text: "<system-reminder>\nAs you answer, use the TodoWrite tool.\n</system-reminder>"},
				{Type: PartText, Text: "The tests fail. Fix them.", CacheControl: cc},
			}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "Run the tests first, and look at the screenshot.", Signature: "EqQBCkYIBxgCKkDsig=="},
				{Type: PartText, Text: "I'll run the tests and open the screenshot."},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01Bash", Name: "Bash", Arguments: `{"command":"go test ./...","description":"Run tests"}`}},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_02Read", Name: "Read", Arguments: `{"file_path":"/repo/failure.png"}`}},
			}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_01Bash", IsError: true, Content: []Part{
					{Type: PartText, Text: "--- FAIL: TestParse (0.00s)"},
					{Type: PartText, Text: "exit status 1"},
				}}},
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_02Read", Content: []Part{
					{Type: PartText, Text: "Read image (12KB)"},
					{Type: PartImage, Media: &Media{MediaType: "image/png", Data: "iVBORw0KGgoAAAANSUhEUg=="}},
				}}},
				{Type: PartText, Text: "<system-reminder>The file was modified.</system-reminder>"},
			}},
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "Auto-compact is on."}}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartRedactedThinking, Signature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_03Todo", Name: "TodoWrite", Arguments: ""}},
			}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_03Todo"}},
			}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartText, Text: "Here is the spec and the design."},
				{Type: PartDocument, Media: &Media{MediaType: "application/pdf", Data: "JVBERi0xLjQK", Title: "spec"}},
				{Type: PartImage, Media: &Media{URL: "https://example.com/design.png"}},
			}},
		},
		Tools: []Tool{
			{Name: "Bash", Description: "Executes a bash command.", Schema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number","exclusiveMinimum":0}},"required":["command"],"additionalProperties":false}`)},
			{Name: "Read", Description: "Reads a file.", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`), CacheControl: cc},
			{Name: "DeferredToolPlaceholder"},
		},
		ToolChoice:        &ToolChoice{Mode: ToolChoiceAuto},
		ParallelToolCalls: oaiPtr(false),
		MaxTokens:         32000,
		Temperature:       oaiPtr(1.0),
		TopK:              oaiPtr(40),
		StopSequences:     []string{"\n\nHuman:"},
		Reasoning:         &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 31999, Display: "omitted"},
		User:              `{"device_id":"abc","session_id":"s1"}`,
		Stream:            true,
	}
}

func oaiEncode(t *testing.T, req *Request) []byte {
	t.Helper()
	body, err := openAIChatCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatalf("EncodeRequest: %v", err)
	}
	if !json.Valid(body) {
		t.Fatalf("EncodeRequest wrote invalid JSON:\n%s", body)
	}
	return body
}

func oaiIndent(t *testing.T, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func TestOpenAIChatEncodeRequestClaudeCodeTurn(t *testing.T) {
	req := oaiClaudeCodeTurn()
	body := oaiEncode(t, req)
	golden(t, "openai_chat/encode_claude_code_turn.json", oaiIndent(t, body))

	root := gjson.ParseBytes(body)
	var roles []string
	for _, m := range root.Get("messages").Array() {
		roles = append(roles, m.Get("role").Str)
	}
	wantRoles := []string{"system", "user", "assistant", "tool", "tool", "user", "user", "system", "assistant", "tool", "user"}
	if !reflect.DeepEqual(roles, wantRoles) {
		t.Fatalf("roles = %v\nwant    %v", roles, wantRoles)
	}
	msgs := root.Get("messages").Array()
	if got := msgs[0].Get("content").Str; !strings.HasPrefix(got, "x-anthropic-billing-header") || strings.Count(got, "\n\n") != 2 {
		t.Errorf("system prompt = %q, want the three blocks joined by blank lines", got)
	}
	if got := msgs[3].Get("content").Str; got != "Error: --- FAIL: TestParse (0.00s)\nexit status 1" {
		t.Errorf("error tool result = %q", got)
	}
	if msgs[3].Get("tool_call_id").Str != "toolu_01Bash" || msgs[4].Get("tool_call_id").Str != "toolu_02Read" {
		t.Errorf("tool messages out of order")
	}
	if got := msgs[5].Get("content.0.image_url.url").Str; got != "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==" {
		t.Errorf("tool result image not forwarded in a user message: %s", msgs[5].Raw)
	}
	if got := msgs[6].Get("content").Str; !strings.Contains(got, "modified") {
		t.Errorf("user text after the results = %s", msgs[6].Raw)
	}
	if got := msgs[2].Get("tool_calls.0.function.arguments").Str; got != `{"command":"go test ./...","description":"Run tests"}` {
		t.Errorf("arguments not verbatim: %q", got)
	}
	if msgs[2].Get("reasoning_content").Exists() || strings.Contains(string(body), "EqQBCkYIBxgCKkDsig") {
		t.Errorf("thinking must not be sent")
	}
	if msgs[8].Get("content").Type != gjson.Null || msgs[8].Get("tool_calls.0.function.arguments").Str != "{}" {
		t.Errorf("tool-only assistant message = %s", msgs[8].Raw)
	}
	if msgs[9].Get("content").Str != "" || !msgs[9].Get("content").Exists() {
		t.Errorf("empty tool result = %s", msgs[9].Raw)
	}
	if got := root.Get(`tools.2.function.parameters`).Raw; got != `{"type":"object","properties":{}}` {
		t.Errorf("empty schema became %s", got)
	}
	if got := root.Get(`tools.0.function.parameters`).Raw; got != string(req.Tools[0].Schema) {
		t.Errorf("schema not copied verbatim: %s", got)
	}
	for key, want := range map[string]string{
		"max_completion_tokens": "32000", "reasoning_effort": `"high"`, "parallel_tool_calls": "false",
		"tool_choice": `"auto"`, "stream": "true", "stream_options": `{"include_usage":true}`, "temperature": "1",
	} {
		if got := root.Get(key).Raw; got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	for _, absent := range []string{"top_k", "max_tokens", "cache_control", "thinking"} {
		if root.Get(absent).Exists() || strings.Contains(string(body), `"`+absent+`"`) {
			t.Errorf("%s must not be sent", absent)
		}
	}
	wantDropped := []string{
		"cache_control: " + oaiDropCacheControl,
		"thinking: " + oaiDropThinking,
		"redacted_thinking: " + oaiDropRedacted,
		"top_k: OpenAI Chat Completions has no top_k",
		"thinking.display: openai_chat has no reasoning display setting",
		"thinking.budget_tokens: sent as reasoning_effort high",
	}
	if !reflect.DeepEqual(req.Dropped, wantDropped) {
		t.Errorf("Dropped =\n%q\nwant\n%q", req.Dropped, wantDropped)
	}
}

func TestOpenAIChatEncodeRequestReasoning(t *testing.T) {
	tests := []struct {
		name string
		r    *Reasoning
		want string // reasoning_effort, "" when absent
	}{
		{"none", nil, ""},
		{"effort wins", &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 1000, Effort: "xhigh"}, "xhigh"},
		{"small budget", &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 1024}, "low"},
		{"budget at 4096", &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 4096}, "low"},
		{"medium budget", &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 16384}, "medium"},
		{"large budget", &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 16385}, "high"},
		{"enabled without budget", &Reasoning{Mode: ReasoningEnabled}, ""},
		{"adaptive", &Reasoning{Mode: ReasoningAdaptive}, ""},
		{"adaptive with effort", &Reasoning{Mode: ReasoningAdaptive, Effort: "medium"}, "medium"},
		{"disabled", &Reasoning{Mode: ReasoningDisabled}, ""},
		{"disabled ignores effort", &Reasoning{Mode: ReasoningDisabled, Effort: "high"}, ""},
		{"disabled by none", &Reasoning{Mode: ReasoningDisabled, Effort: "none"}, "none"},
		{"effort only", &Reasoning{Effort: "low"}, "low"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := oaiEncode(t, &Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "x"}}}}, Reasoning: tt.r})
			if got := gjson.GetBytes(body, "reasoning_effort").Str; got != tt.want {
				t.Errorf("reasoning_effort = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenAIChatEncodeRequestFields(t *testing.T) {
	user := []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "x"}}}}
	tools := []Tool{{Name: "a"}, {Name: "b", Strict: oaiPtr(true)}}
	tests := []struct {
		name string
		req  Request
		want map[string]string // gjson path -> raw JSON; "" means absent
	}{
		{"minimal", Request{Model: "m", Messages: user}, map[string]string{
			"messages": `[{"role":"user","content":"x"}]`, "stream": "", "stream_options": "", "tools": "", "max_completion_tokens": "",
		}},
		{"tool choice tool", Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: "b"}}, map[string]string{
			"tool_choice": `{"type":"function","function":{"name":"b"}}`, "tools.1.function.strict": "true", "tools.0.function.strict": "",
		}},
		{"tool choice required", Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceRequired}}, map[string]string{
			"tool_choice": `"required"`,
		}},
		{"tool choice none", Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceNone}}, map[string]string{
			"tool_choice": `"none"`,
		}},
		{"allowed tools", Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceRequired, Allowed: []string{"a"}}}, map[string]string{
			"tool_choice": `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"a"}}]}}`,
		}},
		{"tool choice without tools is not sent", Request{Model: "m", Messages: user, ToolChoice: &ToolChoice{Mode: ToolChoiceAuto}, ParallelToolCalls: oaiPtr(false)}, map[string]string{
			"tool_choice": "", "parallel_tool_calls": "",
		}},
		{"sampling", Request{Model: "m", Messages: user, TopP: oaiPtr(0.5), Seed: oaiPtr(int64(-7)), PresencePenalty: oaiPtr(0.0), FrequencyPenalty: oaiPtr(1.5), StopSequences: []string{"a", "b"}, User: "u"}, map[string]string{
			"top_p": "0.5", "seed": "-7", "presence_penalty": "0", "frequency_penalty": "1.5", "stop": `["a","b"]`, "user": `"u"`,
		}},
		{"json schema", Request{Model: "m", Messages: user, ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`), Strict: oaiPtr(false)}}, map[string]string{
			"response_format": `{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"},"strict":false}}`,
		}},
		{"json object", Request{Model: "m", Messages: user, ResponseFormat: &ResponseFormat{Type: "json_object"}}, map[string]string{
			"response_format": `{"type":"json_object"}`,
		}},
		{"multi-part user", Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{
			{Type: PartText, Text: "a"},
			{Type: PartImage, Media: &Media{MediaType: "image/jpeg", Data: "/9j/4A\n==", Detail: "low"}},
			{Type: PartDocument, Media: &Media{FileID: "file-1"}},
			{Type: PartDocument, Media: &Media{MediaType: "text/plain", Data: "aGVsbG8gd29ybGQ="}},
		}}}}, map[string]string{
			"messages.0.content": `[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4A\n==","detail":"low"}},{"type":"file","file":{"file_id":"file-1"}},{"type":"text","text":"hello world"}]`,
		}},
		{"unsendable user parts leave an empty turn", Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{
			{Type: PartImage, Media: &Media{FileID: "file-img"}},
		}}}}, map[string]string{
			"messages": `[{"role":"user","content":""}]`,
		}},
		{"assistant texts join", Request{Model: "m", Messages: []Message{{Role: RoleAssistant, Parts: []Part{
			{Type: PartText, Text: "Hello, "}, {Type: PartText, Text: "world."},
		}}}}, map[string]string{
			"messages": `[{"role":"assistant","content":"Hello, world."}]`,
		}},
		{"thinking-only assistant", Request{Model: "m", Messages: []Message{{Role: RoleAssistant, Parts: []Part{
			{Type: PartThinking, Text: "hm"},
		}}}}, map[string]string{
			"messages": `[{"role":"assistant","content":""}]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := oaiEncode(t, &tt.req)
			for path, want := range tt.want {
				got := gjson.GetBytes(body, path).Raw
				if got != want {
					t.Errorf("%s = %s, want %s\nbody: %s", path, got, want, body)
				}
			}
		})
	}
}

// TestOpenAIChatRequestRoundTrip: what EncodeRequest writes, DecodeRequest
// reads back as the same IR, for everything Chat Completions can carry.
func TestOpenAIChatRequestRoundTrip(t *testing.T) {
	in := &Request{
		Model:  "m",
		System: []Part{{Type: PartText, Text: "sys"}},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi"}, {Type: PartImage, Media: &Media{MediaType: "image/png", Data: "AAAA", Detail: "auto"}}}},
			{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "calling"}, {Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: "f", Arguments: `{"a": [1, 2]}`}}, {Type: PartToolCall, ToolCall: &ToolCall{ID: "c2", Name: "g", Arguments: `{}`}}}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c1", Content: []Part{{Type: PartText, Text: "r1"}}}},
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c2", Content: []Part{{Type: PartText, Text: "r2"}}}},
				{Type: PartText, Text: "and?"},
			}},
			{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "late"}}},
			{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "done"}}},
		},
		Tools:             []Tool{{Name: "f", Description: "d", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array"}}}`), Strict: oaiPtr(true)}, {Name: "g", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}},
		ToolChoice:        &ToolChoice{Mode: ToolChoiceRequired, Allowed: []string{"f"}},
		ParallelToolCalls: oaiPtr(true),
		MaxTokens:         100,
		Temperature:       oaiPtr(0.3),
		TopP:              oaiPtr(0.9),
		Seed:              oaiPtr(int64(1)),
		PresencePenalty:   oaiPtr(0.1),
		FrequencyPenalty:  oaiPtr(0.2),
		StopSequences:     []string{"x"},
		Reasoning:         &Reasoning{Mode: ReasoningEnabled, Effort: "low"},
		ResponseFormat:    &ResponseFormat{Type: "json_schema", Name: "n", Description: "d", Schema: json.RawMessage(`{"type":"object"}`), Strict: oaiPtr(true)},
		User:              "u",
		Stream:            true,
		IncludeUsage:      true, // EncodeRequest always asks for usage when streaming
	}
	body := oaiEncode(t, in)
	out, err := openAIChatCodec{}.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	in.Dropped, out.Dropped = nil, nil
	if got, want := oaiDumpJSON(out), oaiDumpJSON(in); !bytes.Equal(got, want) {
		t.Errorf("round trip differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

package translate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// oaiDialectEncode encodes req with a codec holding dialect d.
func oaiDialectEncode(t *testing.T, d *Dialect, req *Request) []byte {
	t.Helper()
	body, err := NewOpenAIChatCodec(d).EncodeRequest(req)
	if err != nil {
		t.Fatalf("EncodeRequest: %v", err)
	}
	if !json.Valid(body) {
		t.Fatalf("EncodeRequest wrote invalid JSON:\n%s", body)
	}
	return body
}

// oaiAgentTurn is testdata/openai_chat/request_agent_turn.json decoded: an
// OpenAI agent turn carrying every sampling parameter, reasoning history on
// a tool-call turn, parallel calls and their results.
func oaiAgentTurn(t *testing.T) *Request {
	t.Helper()
	req, err := openAIChatCodec{}.DecodeRequest(oaiFixture(t, "request_agent_turn.json"))
	if err != nil {
		t.Fatal(err)
	}
	req.Dropped = nil
	return req
}

// oaiClaudeCodeFixture is testdata/anthropic/request_claude_code.json
// decoded by the Anthropic codec.
func oaiClaudeCodeFixture(t *testing.T) *Request {
	t.Helper()
	req, err := anthropicCodec{}.DecodeRequest(anthFixture(t, "request_claude_code.json"))
	if err != nil {
		t.Fatal(err)
	}
	req.Dropped = nil
	return req
}

func TestOpenAIChatDialectNilIsPlain(t *testing.T) {
	fixtures := map[string]func() *Request{
		"claude code turn":    oaiClaudeCodeTurn,
		"agent turn":          func() *Request { return oaiAgentTurn(t) },
		"claude code fixture": func() *Request { return oaiClaudeCodeFixture(t) },
	}
	for name, fixture := range fixtures {
		t.Run(name, func(t *testing.T) {
			plainReq, dialReq := fixture(), fixture()
			plain := oaiEncode(t, plainReq)
			got := oaiDialectEncode(t, nil, dialReq)
			if !bytes.Equal(got, plain) {
				t.Errorf("nil dialect differs from the plain codec:\n--- got\n%s\n--- want\n%s", got, plain)
			}
			if !reflect.DeepEqual(dialReq.Dropped, plainReq.Dropped) {
				t.Errorf("Dropped = %q, want %q", dialReq.Dropped, plainReq.Dropped)
			}
			// The zero dialect rewrites only invalid names and ids, and
			// these fixtures have none.
			if got := oaiDialectEncode(t, &Dialect{}, fixture()); !bytes.Equal(got, plain) {
				t.Errorf("zero dialect differs from the plain codec:\n--- got\n%s\n--- want\n%s", got, plain)
			}
		})
	}
}

func TestOpenAIChatDialectOptions(t *testing.T) {
	thinkingTurn := func() *Request {
		return &Request{Model: "m", Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "q"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "first thought", Signature: "sig"},
				{Type: PartThinking, Text: "second thought"},
				{Type: PartText, Text: "Let me check."},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: "f", Arguments: `{}`}},
			}},
			{Role: RoleUser, Parts: []Part{{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c1", Content: []Part{{Type: PartText, Text: "r"}}}}}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "no call here"},
				{Type: PartText, Text: "done"},
			}},
		}}
	}
	tests := []struct {
		name        string
		d           *Dialect
		req         func() *Request
		want        map[string]string // gjson path -> raw JSON; "" means absent
		wantDropped []string          // entries that must be recorded
		notDropped  []string          // entries that must not be
	}{
		{
			name: "max_tokens field",
			d:    &Dialect{MaxTokensField: "max_tokens"},
			req:  oaiClaudeCodeTurn,
			want: map[string]string{"max_tokens": "32000", "max_completion_tokens": ""},
		},
		{
			name: "max_completion_tokens field",
			d:    &Dialect{MaxTokensField: "max_completion_tokens"},
			req:  oaiClaudeCodeTurn,
			want: map[string]string{"max_tokens": "", "max_completion_tokens": "32000"},
		},
		{
			name: "drop every parameter",
			d:    &Dialect{DropParams: DialectDropParams},
			req:  func() *Request { return oaiAgentTurn(t) },
			want: map[string]string{
				"temperature": "", "top_p": "", "seed": "", "presence_penalty": "", "frequency_penalty": "",
				"stop": "", "reasoning_effort": "", "parallel_tool_calls": "", "response_format": "", "user": "",
				"tool_choice": `{"type":"function","function":{"name":"read_file"}}`, "max_completion_tokens": "4096",
			},
			wantDropped: []string{
				"temperature: dialect drop_params", "top_p: dialect drop_params", "seed: dialect drop_params",
				"presence_penalty: dialect drop_params", "frequency_penalty: dialect drop_params", "stop: dialect drop_params",
				"reasoning_effort: dialect drop_params", "parallel_tool_calls: dialect drop_params",
				"response_format: dialect drop_params", "user: dialect drop_params",
			},
		},
		{
			name:        "drop a parameter the request does not carry",
			d:           &Dialect{DropParams: []string{"seed", "top_p", "response_format"}},
			req:         oaiClaudeCodeTurn,
			want:        map[string]string{"temperature": "1", "seed": "", "reasoning_effort": `"high"`},
			notDropped:  []string{"seed: dialect drop_params", "top_p: dialect drop_params", "response_format: dialect drop_params"},
			wantDropped: []string{"thinking.budget_tokens: sent as reasoning_effort high"},
		},
		{
			name:        "dropped effort is not derived from the budget",
			d:           &Dialect{DropParams: []string{"reasoning_effort", "temperature"}},
			req:         oaiClaudeCodeTurn,
			want:        map[string]string{"reasoning_effort": "", "temperature": ""},
			wantDropped: []string{"reasoning_effort: dialect drop_params", "temperature: dialect drop_params"},
			notDropped:  []string{"thinking.budget_tokens: sent as reasoning_effort high"},
		},
		{
			name: "reasoning_content history",
			d:    &Dialect{ReasoningHistory: "reasoning_content"},
			req:  thinkingTurn,
			want: map[string]string{
				"messages.1.reasoning_content": `"first thought\nsecond thought"`,
				"messages.1.content":           `"Let me check."`,
				"messages.1.tool_calls.0.id":   `"c1"`,
				"messages.1.reasoning":         "",
				"messages.3.reasoning_content": "",
				"messages.3.content":           `"done"`,
			},
			// The turn without calls still drops its thinking.
			wantDropped: []string{"thinking: " + oaiDropThinking},
		},
		{
			name: "reasoning history from an OpenAI client",
			d:    &Dialect{ReasoningHistory: "reasoning"},
			req:  func() *Request { return oaiAgentTurn(t) },
			want: map[string]string{
				"messages.2.reasoning": `"I should read the build log and the go.mod file."`,
				"messages.2.content":   `"Let me look at the build log and go.mod."`,
				// The second call turn has no thinking: nothing to send.
				"messages.6.reasoning": "",
				"messages.6.content":   "null",
			},
			notDropped: []string{"thinking: " + oaiDropThinking},
		},
		{
			name: "harmony moves the text of tool-call turns into reasoning",
			d:    &Dialect{ReasoningHistory: "reasoning_content", Reasoning: ReasoningFormatHarmony},
			req:  thinkingTurn,
			want: map[string]string{
				"messages.1.reasoning_content": `"first thought\nsecond thought\nLet me check."`,
				"messages.1.content":           "null",
				"messages.1.tool_calls.0.id":   `"c1"`,
				"messages.3.reasoning_content": "",
				"messages.3.content":           `"done"`,
			},
		},
		{
			name: "harmony without thinking still keeps content off the call turn",
			d:    &Dialect{ReasoningHistory: "reasoning", Reasoning: ReasoningFormatHarmony},
			req: func() *Request {
				r := thinkingTurn()
				r.Messages[1].Parts = r.Messages[1].Parts[2:]
				return r
			},
			want: map[string]string{
				"messages.1.reasoning": `"Let me check."`,
				"messages.1.content":   "null",
			},
		},
		{
			name:        "harmony alone sends no reasoning history",
			d:           &Dialect{Reasoning: ReasoningFormatHarmony},
			req:         thinkingTurn,
			want:        map[string]string{"messages.1.content": `"Let me check."`, "messages.1.reasoning_content": ""},
			wantDropped: []string{"thinking: " + oaiDropThinking},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req()
			body := oaiDialectEncode(t, tt.d, req)
			for path, want := range tt.want {
				if got := gjson.GetBytes(body, path).Raw; got != want {
					t.Errorf("%s = %s, want %s\nbody: %s", path, got, want, body)
				}
			}
			for _, d := range tt.wantDropped {
				if !slices.Contains(req.Dropped, d) {
					t.Errorf("Dropped lacks %q: %q", d, req.Dropped)
				}
			}
			for _, d := range tt.notDropped {
				if slices.Contains(req.Dropped, d) {
					t.Errorf("Dropped has %q: %q", d, req.Dropped)
				}
			}
		})
	}
}

var oaiValidToolToken = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestOpenAIChatDialectToolIDs(t *testing.T) {
	const id = "toolu_01:abc.def"
	req := &Request{Model: "m", Messages: []Message{
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "q"}}},
		{Role: RoleAssistant, Parts: []Part{
			{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: "f", Arguments: `{}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_ok", Name: "f", Arguments: `{}`}},
		}},
		{Role: RoleUser, Parts: []Part{
			{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, Content: []Part{{Type: PartText, Text: "r1"}}}},
			{Type: PartToolResult, ToolResult: &ToolResult{CallID: "call_ok", Content: []Part{{Type: PartText, Text: "r2"}}}},
		}},
	}, Tools: []Tool{{Name: "f"}}}
	d := &Dialect{}
	body := oaiDialectEncode(t, d, req)
	call := gjson.GetBytes(body, "messages.1.tool_calls.0.id").Str
	result := gjson.GetBytes(body, "messages.2.tool_call_id").Str
	if !oaiValidToolToken.MatchString(call) || call != result {
		t.Errorf("call id %q, result id %q: want one valid id", call, result)
	}
	if got := gjson.GetBytes(body, "messages.1.tool_calls.1.id").Str; got != "call_ok" {
		t.Errorf("a valid id was rewritten to %q", got)
	}
	if got := gjson.GetBytes(body, "messages.3.tool_call_id").Str; got != "call_ok" {
		t.Errorf("a valid result id was rewritten to %q", got)
	}
	if m := d.ClientToolIDs(req); !reflect.DeepEqual(m, map[string]string{call: id}) {
		t.Errorf("ClientToolIDs = %v, want %s -> %s", m, call, id)
	}

	// keep_tool_ids sends them as they are.
	body = oaiDialectEncode(t, &Dialect{KeepToolIDs: true}, req)
	if got := gjson.GetBytes(body, "messages.1.tool_calls.0.id").Str; got != id {
		t.Errorf("keep_tool_ids: id = %q", got)
	}
}

func TestOpenAIChatDialectLongToolNames(t *testing.T) {
	long1 := "mcp__" + strings.Repeat("very_long_server_name_", 4) + "__t_one"
	long2 := long1[:len(long1)-3] + "two"
	if len(long1) != 100 || len(long2) != 100 {
		t.Fatalf("test names are %d and %d bytes", len(long1), len(long2))
	}
	history := func() []Message {
		return []Message{
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "q"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: long1, Arguments: `{"a":1}`}},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c2", Name: long2, Arguments: `{}`}},
			}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c1", Content: []Part{{Type: PartText, Text: "r1"}}}},
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c2", Content: []Part{{Type: PartText, Text: "r2"}}}},
			}},
		}
	}
	tools := []Tool{{Name: long1}, {Name: long2}, {Name: "short"}}
	d := &Dialect{}

	t.Run("tool_choice", func(t *testing.T) {
		req := &Request{Model: "m", Messages: history(), Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: long1}}
		body := oaiDialectEncode(t, d, req)
		n1 := gjson.GetBytes(body, "tools.0.function.name").Str
		n2 := gjson.GetBytes(body, "tools.1.function.name").Str
		for _, n := range []string{n1, n2} {
			if !oaiValidToolToken.MatchString(n) {
				t.Errorf("backend name %q (%d bytes) is not a valid OpenAI tool name", n, len(n))
			}
		}
		if n1 == n2 {
			t.Errorf("distinct names collapsed to %q", n1)
		}
		if got := gjson.GetBytes(body, "tools.2.function.name").Str; got != "short" {
			t.Errorf("a valid name was rewritten to %q", got)
		}
		if got := gjson.GetBytes(body, "tool_choice.function.name").Str; got != n1 {
			t.Errorf("tool_choice name %q, tools name %q", got, n1)
		}
		if got := gjson.GetBytes(body, "messages.1.tool_calls.0.function.name").Str; got != n1 {
			t.Errorf("history name %q, tools name %q", got, n1)
		}
		if got := gjson.GetBytes(body, "messages.1.tool_calls.1.function.name").Str; got != n2 {
			t.Errorf("history name %q, tools name %q", got, n2)
		}
		want := map[string]string{n1: long1, n2: long2}
		if m := d.ClientToolNames(req); !reflect.DeepEqual(m, want) {
			t.Errorf("ClientToolNames = %v, want %v", m, want)
		}
		// Another request of the conversation maps the same way.
		again := oaiDialectEncode(t, d, &Request{Model: "m", Messages: history(), Tools: tools})
		if got := gjson.GetBytes(again, "tools.0.function.name").Str; got != n1 {
			t.Errorf("the mapping changed between requests: %q then %q", n1, got)
		}
	})

	t.Run("allowed tools", func(t *testing.T) {
		req := &Request{Model: "m", Messages: history(), Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceRequired, Allowed: []string{long2, "short"}}}
		body := oaiDialectEncode(t, d, req)
		n2 := gjson.GetBytes(body, "tools.1.function.name").Str
		if got := gjson.GetBytes(body, "tool_choice.allowed_tools.tools.0.function.name").Str; got != n2 || got == long2 {
			t.Errorf("allowed name %q, tools name %q", got, n2)
		}
		if got := gjson.GetBytes(body, "tool_choice.allowed_tools.tools.1.function.name").Str; got != "short" {
			t.Errorf("allowed name %q, want short", got)
		}
	})

	t.Run("no limit", func(t *testing.T) {
		body := oaiDialectEncode(t, &Dialect{MaxToolNameLength: -1}, &Request{Model: "m", Messages: history(), Tools: tools})
		if got := gjson.GetBytes(body, "tools.0.function.name").Str; got != long1 {
			t.Errorf("max_tool_name_length -1 rewrote the name to %q", got)
		}
	})

	t.Run("in the prompt", func(t *testing.T) {
		for _, format := range []ToolCallFormat{ToolCallsHermes, ToolCallsQwen3Coder} {
			req := &Request{Model: "m", Messages: history(), Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: long1}}
			dl := &Dialect{ToolsInPrompt: true, ToolCalls: format}
			body := oaiDialectEncode(t, dl, req)
			n1 := dl.BackendToolName(long1)
			sys := gjson.GetBytes(body, "messages.0.content").Str
			calls := gjson.GetBytes(body, "messages.2.content").Str
			if strings.Contains(string(body), long1) {
				t.Errorf("%s: the client's long name reached the backend", format)
			}
			if !strings.Contains(sys, n1) || !strings.Contains(sys, "You must call the function "+n1+".") || !strings.Contains(calls, n1) {
				t.Errorf("%s: backend name %q missing from the prompt or the history:\n%s\n%s", format, n1, sys, calls)
			}
		}
	})
}

// oaiPromptRequest is a small request that exercises the prompt formats:
// a system prompt, a tool with a rich schema, a tool without one, a turn
// with text and two calls, their results (one an error, one with an image)
// followed by user text.
func oaiPromptRequest() *Request {
	return &Request{
		Model:  "qwen",
		System: []Part{{Type: PartText, Text: "Be brief."}},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "Weather in Paris and Rome?"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Type: PartText, Text: "Checking."},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: "get_weather", Arguments: `{"city": "Paris", "days": 2, "units": ["c"]}`}},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c2", Name: "now", Arguments: ``}},
			}},
			{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c1", Content: []Part{
					{Type: PartText, Text: "sunny"},
					{Type: PartImage, Media: &Media{MediaType: "image/png", Data: "AAAA"}},
				}}},
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c2", IsError: true, Content: []Part{{Type: PartText, Text: "no clock"}}}},
				{Type: PartText, Text: "And Rome?"},
			}},
		},
		Tools: []Tool{
			{Name: "get_weather", Description: "Get the weather.\n", Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "city": {"type": "string", "description": " The city. "},
    "days": {"type": "integer", "minimum": 1},
    "units": {"type": "array", "items": {"type": "string", "enum": ["c", "f"]}}
  },
  "required": ["city"]
}`)},
			{Name: "now"},
		},
		ToolChoice:        &ToolChoice{Mode: ToolChoiceAuto},
		ParallelToolCalls: oaiPtr(true),
	}
}

func TestOpenAIChatDialectPromptFormats(t *testing.T) {
	tests := []struct {
		format                      ToolCallFormat
		system, assistant, toolTurn string
	}{
		{
			format: ToolCallsHermes,
			system: "Be brief.\n\n" + `# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.\n", "parameters": {"type":"object","properties":{"city":{"type":"string","description":" The city. "},"days":{"type":"integer","minimum":1},"units":{"type":"array","items":{"type":"string","enum":["c","f"]}}},"required":["city"]}}}
{"type": "function", "function": {"name": "now", "parameters": {"type":"object","properties":{}}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>`,
			assistant: `Checking.
<tool_call>
{"name": "get_weather", "arguments": {"city":"Paris","days":2,"units":["c"]}}
</tool_call>
<tool_call>
{"name": "now", "arguments": {}}
</tool_call>`,
		},
		{
			format: ToolCallsQwen3Coder,
			system: "Be brief.\n\n" + `# Tools

You have access to the following functions:

<tools>
<function>
<name>get_weather</name>
<description>Get the weather.</description>
<parameters>
<parameter>
<name>city</name>
<type>string</type>
<description>The city.</description>
</parameter>
<parameter>
<name>days</name>
<type>integer</type>
<minimum>1</minimum>
</parameter>
<parameter>
<name>units</name>
<type>array</type>
<items>{"type":"string","enum":["c","f"]}</items>
</parameter>
<required>["city"]</required>
</parameters>
</function>
<function>
<name>now</name>
<parameters>
</parameters>
</function>
</tools>

If you choose to call a function ONLY reply in the following format with NO suffix:

<tool_call>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
<parameter=example_parameter_2>
This is the value for the second parameter
that can span
multiple lines
</parameter>
</function>
</tool_call>

<IMPORTANT>
Reminder:
- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags
- Required parameters MUST be specified
- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after
- If there is no function call available, answer the question like you would usually do
</IMPORTANT>`,
			assistant: `Checking.

<tool_call>
<function=get_weather>
<parameter=city>
Paris
</parameter>
<parameter=days>
2
</parameter>
<parameter=units>
["c"]
</parameter>
</function>
</tool_call>
<tool_call>
<function=now>
</function>
</tool_call>`,
		},
	}
	const results = "<tool_response>\nsunny\n</tool_response>\n<tool_response>\nError: no clock\n</tool_response>\nAnd Rome?"
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			req := oaiPromptRequest()
			body := oaiDialectEncode(t, &Dialect{ToolsInPrompt: true, ToolCalls: tt.format}, req)
			msgs := gjson.GetBytes(body, "messages").Array()
			if len(msgs) != 4 {
				t.Fatalf("%d messages, want system, user, assistant, user: %s", len(msgs), body)
			}
			if got := msgs[0].Get("content").Str; got != tt.system {
				t.Errorf("system prompt:\n%s\nwant:\n%s", got, tt.system)
			}
			if got := msgs[2].Get("content").Str; got != tt.assistant {
				t.Errorf("assistant turn:\n%s\nwant:\n%s", got, tt.assistant)
			}
			if msgs[2].Get("tool_calls").Exists() {
				t.Errorf("tool_calls sent with tools_in_prompt: %s", msgs[2].Raw)
			}
			if msgs[3].Get("role").Str != "user" || msgs[3].Get("content").Str != results {
				t.Errorf("results turn = %s\nwant the content %q", msgs[3].Raw, results)
			}
			for _, absent := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
				if gjson.GetBytes(body, absent).Exists() {
					t.Errorf("%s sent with tools_in_prompt", absent)
				}
			}
			if strings.Contains(string(body), "AAAA") || !slices.Contains(req.Dropped, "tool_result.image: "+oaiDropPromptTools+": tool results are sent as text") {
				t.Errorf("the result's image must be dropped and noted: %q", req.Dropped)
			}
		})
	}
}

func TestOpenAIChatDialectPromptCases(t *testing.T) {
	hermes := &Dialect{ToolsInPrompt: true}
	coder := &Dialect{ToolsInPrompt: true, ToolCalls: ToolCallsQwen3Coder}
	user := []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "q"}}}}
	tools := []Tool{{Name: "a"}, {Name: "b", Strict: oaiPtr(true)}}
	tests := []struct {
		name        string
		d           *Dialect
		req         *Request
		check       func(t *testing.T, msgs []gjson.Result)
		wantDropped []string
	}{
		{
			name: "no system prompt makes one",
			d:    hermes,
			req:  &Request{Model: "m", Messages: user, Tools: tools},
			check: func(t *testing.T, msgs []gjson.Result) {
				if msgs[0].Get("role").Str != "system" || !strings.HasPrefix(msgs[0].Get("content").Str, "# Tools\n\n") || msgs[1].Get("role").Str != "user" {
					t.Errorf("messages = %v", msgs)
				}
			},
			wantDropped: []string{"tools.strict: " + oaiDropPromptTools},
		},
		{
			name: "a leading system message takes the tools",
			d:    hermes,
			req: &Request{Model: "m", Tools: tools, Messages: append([]Message{
				{Role: RoleSystem, Parts: []Part{{Type: PartText, Text: "sys"}}},
			}, user...)},
			check: func(t *testing.T, msgs []gjson.Result) {
				if len(msgs) != 2 || !strings.HasPrefix(msgs[0].Get("content").Str, "sys\n\n# Tools\n\n") {
					t.Errorf("messages = %v", msgs)
				}
			},
		},
		{
			name: "tool_choice none renders no tools",
			d:    hermes,
			req:  &Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceNone}},
			check: func(t *testing.T, msgs []gjson.Result) {
				if len(msgs) != 1 || msgs[0].Get("role").Str != "user" {
					t.Errorf("messages = %v", msgs)
				}
			},
			wantDropped: []string{"tools: tool_choice none: the tools are not rendered into the prompt (dialect tools_in_prompt)"},
		},
		{
			name: "required",
			d:    coder,
			req:  &Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceRequired}, ParallelToolCalls: oaiPtr(false)},
			check: func(t *testing.T, msgs []gjson.Result) {
				if got := msgs[0].Get("content").Str; !strings.HasSuffix(got, "</IMPORTANT>\n\nYou must call a function.") {
					t.Errorf("system = %q", got)
				}
			},
			wantDropped: []string{
				"tool_choice: " + oaiDropPromptTools + ": asked for in the prompt, not enforced",
				"parallel_tool_calls: " + oaiDropPromptTools,
			},
		},
		{
			name: "a specific tool among the allowed ones",
			d:    hermes,
			req:  &Request{Model: "m", Messages: user, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: "b", Allowed: []string{"b"}}},
			check: func(t *testing.T, msgs []gjson.Result) {
				got := msgs[0].Get("content").Str
				if !strings.HasSuffix(got, "</tool_call>\n\nYou must call the function b.") || strings.Contains(got, `"name": "a"`) {
					t.Errorf("system = %q", got)
				}
			},
			wantDropped: []string{"tool_choice: " + oaiDropPromptTools + ": asked for in the prompt, not enforced"},
		},
		{
			name: "qwen3_coder arguments that are not an object",
			d:    coder,
			req: &Request{Model: "m", Tools: tools, Messages: append(user, Message{Role: RoleAssistant, Parts: []Part{
				{Type: PartText, Text: ""}, // no text: no blank line before the call
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "a", Arguments: `{"x": tru`}},
			}})},
			check: func(t *testing.T, msgs []gjson.Result) {
				if got, want := msgs[2].Get("content").Str, "<tool_call>\n<function=a>\n{\"x\": tru\n</function>\n</tool_call>"; got != want {
					t.Errorf("call = %q, want %q", got, want)
				}
			},
			wantDropped: []string{"tool_call.arguments: arguments that are not a JSON object are written into the prompt as they are"},
		},
		{
			name: "hermes invalid arguments travel as a string",
			d:    hermes,
			req: &Request{Model: "m", Tools: tools, Messages: append(user, Message{Role: RoleAssistant, Parts: []Part{
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "a", Arguments: `{"x": tru`}},
			}})},
			check: func(t *testing.T, msgs []gjson.Result) {
				if got, want := msgs[2].Get("content").Str, "<tool_call>\n{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": tru\"}\n</tool_call>"; got != want {
					t.Errorf("call = %q, want %q", got, want)
				}
			},
			wantDropped: []string{"tool_call.arguments: invalid JSON arguments are written into the prompt as a string"},
		},
		{
			name: "reasoning history on a prompt-rendered call turn",
			d:    &Dialect{ToolsInPrompt: true, ReasoningHistory: "reasoning_content", Reasoning: ReasoningFormatHarmony},
			req: &Request{Model: "m", Tools: tools, Messages: append(user, Message{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "think"},
				{Type: PartText, Text: "text"},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "a", Arguments: `{}`}},
			}})},
			check: func(t *testing.T, msgs []gjson.Result) {
				// No tool_calls go out, so the text is not moved: it
				// carries the call.
				m := msgs[2]
				if m.Get("reasoning_content").Str != "think" || m.Get("content").Str != "text\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>" {
					t.Errorf("assistant = %s", m.Raw)
				}
			},
		},
		{
			name: "a user turn with results and media",
			d:    coder,
			req: &Request{Model: "m", Messages: append(user,
				Message{Role: RoleAssistant, Parts: []Part{{Type: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "a", Arguments: `{}`}}}},
				Message{Role: RoleUser, Parts: []Part{
					{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c"}},
					{Type: PartImage, Media: &Media{URL: "https://example.com/i.png"}},
				}},
			)},
			check: func(t *testing.T, msgs []gjson.Result) {
				if got := msgs[2].Get("content").Raw; got != `[{"type":"text","text":"<tool_response>\n\n</tool_response>"},{"type":"image_url","image_url":{"url":"https://example.com/i.png"}}]` {
					t.Errorf("results turn = %s", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := oaiDialectEncode(t, tt.d, tt.req)
			for _, absent := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
				if gjson.GetBytes(body, absent).Exists() {
					t.Errorf("%s sent with tools_in_prompt", absent)
				}
			}
			tt.check(t, gjson.GetBytes(body, "messages").Array())
			for _, d := range tt.wantDropped {
				if !slices.Contains(tt.req.Dropped, d) {
					t.Errorf("Dropped lacks %q: %q", d, tt.req.Dropped)
				}
			}
		})
	}
}

// TestOpenAIChatDialectPromptGoldens renders Claude Code traffic in both
// prompt formats, as a self-hosted server without tool support gets it.
func TestOpenAIChatDialectPromptGoldens(t *testing.T) {
	fixtures := []struct {
		name string
		req  func() *Request
	}{
		{"turn", oaiClaudeCodeTurn},
		{"claude_code", func() *Request { return oaiClaudeCodeFixture(t) }},
	}
	for _, format := range []ToolCallFormat{ToolCallsHermes, ToolCallsQwen3Coder} {
		for _, fx := range fixtures {
			name := "dialect_" + string(format) + "_" + fx.name
			t.Run(name, func(t *testing.T) {
				d := &Dialect{ToolsInPrompt: true, ToolCalls: format, ReasoningHistory: "reasoning_content", MaxTokensField: "max_tokens"}
				body := oaiDialectEncode(t, d, fx.req())
				golden(t, "openai_chat/"+name+".json", oaiIndent(t, body))
				for _, absent := range []string{"tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens"} {
					if gjson.GetBytes(body, absent).Exists() {
						t.Errorf("%s sent", absent)
					}
				}
				for _, m := range gjson.GetBytes(body, "messages").Array() {
					if m.Get("role").Str == "tool" || m.Get("tool_calls").Exists() {
						t.Errorf("native tool message sent: %s", m.Raw)
					}
				}
			})
		}
	}
}

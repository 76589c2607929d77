package translate

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

func TestOpenAIChatDecodeResponseGolden(t *testing.T) {
	tests := []struct {
		name     string
		stop     StopReason
		usage    Usage
		partKind []PartType
	}{
		{"response_tool_calls", StopToolUse, Usage{InputTokens: 1149, OutputTokens: 60, CacheReadTokens: 1024}, []PartType{PartToolCall, PartToolCall}},
		{"response_deepseek_reasoning", StopEndTurn, Usage{InputTokens: 18, OutputTokens: 420, CacheReadTokens: 16, ReasoningTokens: 400}, []PartType{PartThinking, PartText}},
		{"response_refusal", StopRefusal, Usage{InputTokens: 12, OutputTokens: 10}, nil},
		{"response_vllm_stop_with_tools", StopToolUse, Usage{InputTokens: 300, OutputTokens: 40, CacheReadTokens: 256, CacheWriteTokens: 32}, []PartType{PartThinking, PartText, PartToolCall, PartToolCall}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := openAIChatCodec{}.DecodeResponse(oaiFixture(t, tt.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "openai_chat/"+tt.name+".ir.json", oaiDumpJSON(resp))
			if resp.StopReason != tt.stop {
				t.Errorf("StopReason = %q, want %q", resp.StopReason, tt.stop)
			}
			if resp.Usage != tt.usage {
				t.Errorf("Usage = %+v, want %+v", resp.Usage, tt.usage)
			}
			var kinds []PartType
			for _, p := range resp.Parts {
				kinds = append(kinds, p.Type)
			}
			if !reflect.DeepEqual(kinds, tt.partKind) {
				t.Errorf("parts = %v, want %v", kinds, tt.partKind)
			}
		})
	}
}

func TestOpenAIChatDecodeResponseDetails(t *testing.T) {
	resp, err := openAIChatCodec{}.DecodeResponse(oaiFixture(t, "response_vllm_stop_with_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Parts[2].ToolCall
	if !oaiGeneratedID.MatchString(call.ID) || call.Arguments != `{"cmd":"ls -la"}` {
		t.Errorf("object arguments / missing id: %+v", call)
	}
	if resp.Parts[3].ToolCall.Arguments != "{}" {
		t.Errorf("empty arguments = %q", resp.Parts[3].ToolCall.Arguments)
	}
	resp, err = openAIChatCodec{}.DecodeResponse(oaiFixture(t, "response_refusal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Refusal != "I'm sorry, I can't help with that." {
		t.Errorf("Refusal = %q", resp.Refusal)
	}
}

func TestOpenAIChatDecodeResponseErrors(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		kind       ErrorKind
	}{
		{"invalid JSON", `{"id":`, 502, ErrAPI},
		{"no choices", `{"id":"x","choices":[]}`, 502, ErrAPI},
		{"error body with 200", `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, 402, ErrBilling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openAIChatCodec{}.DecodeResponse([]byte(tt.body))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Status != tt.status || e.Kind != tt.kind {
				t.Errorf("got %d %s, want %d %s", e.Status, e.Kind, tt.status, tt.kind)
			}
		})
	}
}

func TestOpenAIChatEncodeResponse(t *testing.T) {
	oaiFixedNow(t)
	resp := &Response{
		ID:    "msg_01XFDUDYJgAACzvnptvVoYEL",
		Model: "claude-sonnet-4-5",
		Parts: []Part{
			{Type: PartThinking, Text: "Check the weather ", Signature: "sig"},
			{Type: PartThinking, Text: "for Paris."},
			{Type: PartRedactedThinking, Signature: "opaque"},
			{Type: PartText, Text: "Let me check "},
			{Type: PartText, Text: "that <now> & \"then\"."},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01", Name: "get_weather", Arguments: `{"city": "Paris"}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_02", Name: "get_time", Arguments: ""}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 2100, OutputTokens: 90, CacheReadTokens: 2000, CacheWriteTokens: 50, ReasoningTokens: 30},
	}
	body, err := openAIChatCodec{}.EncodeResponse(resp, &Request{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	golden(t, "openai_chat/encode_response_tool_calls.json", oaiIndent(t, body))
	for path, want := range map[string]string{
		"id":                                  `"` + ownID("msg_01XFDUDYJgAACzvnptvVoYEL", "chatcmpl-") + `"`, // an Anthropic id gets a stand-in
		"model":                               `"gpt-4o"`,
		"created":                             "1700000000",
		"choices.0.message.content":           `"Let me check that <now> & \"then\"."`,
		"choices.0.message.reasoning_content": `"Check the weather for Paris."`,
		"choices.0.message.tool_calls.1.function.arguments": `"{}"`,
		"choices.0.message.refusal":                         "null",
		"choices.0.finish_reason":                           `"tool_calls"`,
		"usage.total_tokens":                                "2190",
		"usage.prompt_tokens_details.cached_tokens":         "2000",
		"usage.completion_tokens_details.reasoning_tokens":  "30",
	} {
		if got := gjson.GetBytes(body, path).Raw; got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
}

func TestOpenAIChatEncodeResponseVariants(t *testing.T) {
	tests := []struct {
		name string
		resp Response
		want map[string]string
	}{
		{"no id, no text", Response{StopReason: StopMaxTokens}, map[string]string{
			"choices.0.message.content": "null", "choices.0.finish_reason": `"length"`, "choices.0.message.tool_calls": "", "choices.0.message.reasoning_content": "",
		}},
		{"refusal keeps stop", Response{ID: "x", Refusal: "No.", StopReason: StopRefusal}, map[string]string{
			"choices.0.message.refusal": `"No."`, "choices.0.finish_reason": `"stop"`,
		}},
		{"filtered without refusal text", Response{ID: "x", StopReason: StopRefusal}, map[string]string{
			"choices.0.finish_reason": `"content_filter"`,
		}},
		{"pause turn", Response{ID: "x", StopReason: StopPauseTurn, Parts: []Part{{Type: PartText, Text: "partial"}}}, map[string]string{
			"choices.0.finish_reason": `"stop"`, "choices.0.message.content": `"partial"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := openAIChatCodec{}.EncodeResponse(&tt.resp, &Request{Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				if got := gjson.GetBytes(body, path).Raw; got != want {
					t.Errorf("%s = %s, want %s", path, got, want)
				}
			}
			if id := gjson.GetBytes(body, "id").Str; tt.resp.ID == "" && !oaiGeneratedID.MatchString(id) {
				t.Errorf("generated id = %q", id)
			}
		})
	}
}

// TestOpenAIChatResponseRoundTrip: DecodeResponse reads back what
// EncodeResponse wrote.
func TestOpenAIChatResponseRoundTrip(t *testing.T) {
	in := &Response{
		ID: "chatcmpl-1", Model: "m",
		Parts: []Part{
			{Type: PartThinking, Text: "think"},
			{Type: PartText, Text: "answer"},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "f", Arguments: `{"x":1}`}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 3, ReasoningTokens: 2},
	}
	body, err := openAIChatCodec{}.EncodeResponse(in, &Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := openAIChatCodec{}.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(oaiDumpJSON(out), oaiDumpJSON(in)) {
		t.Errorf("round trip:\n%s\nwant\n%s", oaiDumpJSON(out), oaiDumpJSON(in))
	}
}

func TestOpenAIChatDecodeUsage(t *testing.T) {
	tests := []struct {
		name, json string
		want       Usage
	}{
		{"openai", `{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":64,"cache_write_tokens":8},"completion_tokens_details":{"reasoning_tokens":5}}`,
			Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 64, CacheWriteTokens: 8, ReasoningTokens: 5}},
		{"deepseek without details", `{"prompt_tokens":374,"completion_tokens":61,"prompt_cache_hit_tokens":256,"prompt_cache_miss_tokens":118}`,
			Usage{InputTokens: 374, OutputTokens: 61, CacheReadTokens: 256}},
		{"details win over deepseek fields", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":4},"prompt_cache_hit_tokens":9}`,
			Usage{InputTokens: 10, CacheReadTokens: 4}},
		{"llama-server minimal", `{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}`, Usage{InputTokens: 7, OutputTokens: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oaiDecodeUsage(gjson.Parse(tt.json)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

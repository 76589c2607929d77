package translate

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/tidwall/gjson"
)

func TestAnthropicDecodeResponse(t *testing.T) {
	tests := []struct {
		fixture string
		want    *Response
	}{
		{
			fixture: "response_tool_use",
			want: &Response{
				ID:    "msg_01XFDUDYJgAACzvnptvVoYEL",
				Model: "claude-sonnet-4-5-20250929",
				Parts: []Part{
					{Type: PartThinking, Text: "I need the weather.", Signature: "EqQBCkYIBxgCKkB+/=="},
					{Type: PartRedactedThinking, Signature: "EmwKAhgBEgy3va3pzix"},
					{Type: PartText, Text: "Let me check."},
					{Type: PartServerToolCall, Server: &ServerToolUse{ID: "srvtoolu_01", Kind: ServerWebSearch, Query: "paris"}},
					{Type: PartServerToolResult, Server: &ServerToolUse{ID: "srvtoolu_01", Kind: ServerWebSearch}},
					{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: `{"location": "Paris, FR", "unit": "celsius"}`}},
					{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01NoInput", Name: "get_time", Arguments: "{}"}},
				},
				StopReason: StopToolUse,
				Usage:      Usage{InputTokens: 2095 + 500 + 10000, OutputTokens: 503, CacheReadTokens: 10000, CacheWriteTokens: 500, ReasoningTokens: 120},
			},
		},
		{
			fixture: "response_refusal",
			want: &Response{
				ID: "msg_01Refuse", Model: "claude-opus-4-1",
				Parts:      []Part{{Type: PartText, Text: "I can't help with that."}},
				StopReason: StopRefusal,
				Usage:      Usage{InputTokens: 10, OutputTokens: 7},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := anthropicCodec{}.DecodeResponse(anthFixture(t, tt.fixture+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", anthDumpJSON(got), anthDumpJSON(tt.want))
			}
			golden(t, "anthropic/"+tt.fixture+".ir.json", anthDumpJSON(got))
		})
	}
}

func TestAnthropicDecodeResponseEdges(t *testing.T) {
	c := anthropicCodec{}
	for _, body := range []string{`{"id":`, `[]`} {
		_, err := c.DecodeResponse([]byte(body))
		var e *Error
		if !errors.As(err, &e) || e.Status != 502 || e.Kind != ErrAPI {
			t.Errorf("DecodeResponse(%s) error = %v, want a 502 api_error", body, err)
		}
	}
	_, err := c.DecodeResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrOverloaded || e.Status != 529 || e.Message != "Overloaded" {
		t.Errorf("error envelope with status 200: %v", err)
	}
	// A server that reports end_turn (or nothing) after tool calls.
	r, err := c.DecodeResponse([]byte(`{"id":"x","content":[{"type":"tool_use","id":"t","name":"n","input":{}}],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":2}}`))
	if err != nil || r.StopReason != StopToolUse {
		t.Errorf("stop = %v (%v), want tool_use", r, err)
	}
	r, _ = c.DecodeResponse([]byte(`{"id":"x","content":[],"stop_reason":"pause_turn"}`))
	if r.StopReason != StopPauseTurn {
		t.Errorf("stop = %q, want pause_turn", r.StopReason)
	}
}

func TestAnthropicEncodeResponse(t *testing.T) {
	c := anthropicCodec{}
	resp := &Response{
		ID:    "chatcmpl-123",
		Model: "gpt-4o-2024-08-06",
		Parts: []Part{
			{Type: PartThinking, Text: "reasoning from an OpenAI-compatible server"},
			{Type: PartText, Text: "Calling <tools> & more."},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_abc", Name: "bash", Arguments: `{"cmd": "ls"}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "", Name: "broken", Arguments: `{"cmd": "l`}},
			{Type: PartRedactedThinking, Signature: "opaque"},
			{Type: PartToolResult, ToolResult: &ToolResult{CallID: "x"}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 1000, OutputTokens: 50, CacheReadTokens: 800, ReasoningTokens: 10},
	}
	req := &Request{Model: "claude-sonnet-4-5"}
	body, err := c.EncodeResponse(resp, req)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{
		"id":              `"` + ownID("chatcmpl-123", "msg_") + `"`, // an OpenAI id gets a stand-in
		"type":            `"message"`,
		"role":            `"assistant"`,
		"model":           `"claude-sonnet-4-5"`,
		"content.#":       `5`,
		"content.0":       `{"type":"thinking","thinking":"reasoning from an OpenAI-compatible server","signature":""}`,
		"content.2.input": `{"cmd": "ls"}`,
		"content.3.input": `{"_raw":"{\"cmd\": \"l"}`,
		"content.4":       `{"type":"redacted_thinking","data":"opaque"}`,
		"stop_reason":     `"tool_use"`,
		"stop_sequence":   `null`,
		"usage":           `{"input_tokens":200,"cache_creation_input_tokens":0,"cache_read_input_tokens":800,"output_tokens":50}`,
	}
	for path, want := range checks {
		if got := gjson.GetBytes(body, path).Raw; got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if id := gjson.GetBytes(body, "content.3.id").Str; !regexp.MustCompile(`^toolu_[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("generated tool id = %q", id)
	}
	if !slices.Contains(req.Dropped, `tool_use.input: arguments were not a JSON object; sent as {"_raw": "<text>"}`) {
		t.Errorf("Dropped = %q", req.Dropped)
	}
	golden(t, "anthropic/encode_response.json", anthIndent(t, body))

	// Refusal text, error stop, generated message id, stop sequence.
	body, _ = c.EncodeResponse(&Response{Refusal: "I can't do that.", StopReason: StopEndTurn, Model: "m"}, nil)
	if got := gjson.GetBytes(body, "content").Raw; got != `[{"type":"text","text":"I can't do that."}]` {
		t.Errorf("refusal content = %s", got)
	}
	if got := gjson.GetBytes(body, "stop_reason").Str; got != "refusal" {
		t.Errorf("refusal stop = %q", got)
	}
	if got := gjson.GetBytes(body, "model").Str; got != "m" {
		t.Errorf("model without request = %q", got)
	}
	if id := gjson.GetBytes(body, "id").Str; !regexp.MustCompile(`^msg_[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("generated id = %q", id)
	}
	body, _ = c.EncodeResponse(&Response{ID: "x", StopReason: StopError}, &Request{Model: "m"})
	if got := gjson.GetBytes(body, "stop_reason").Str; got != "end_turn" {
		t.Errorf("error stop = %q, want end_turn", got)
	}
	body, _ = c.EncodeResponse(&Response{ID: "x", StopReason: StopSequence, StopSequence: "END"}, &Request{Model: "m"})
	if got := gjson.GetBytes(body, "stop_sequence").Raw; got != `"END"` {
		t.Errorf("stop_sequence = %s", got)
	}
}

// TestAnthropicResponseRoundTrip: EncodeResponse then DecodeResponse keeps
// everything an Anthropic response can hold.
func TestAnthropicResponseRoundTrip(t *testing.T) {
	c := anthropicCodec{}
	want, err := c.DecodeResponse(anthFixture(t, "response_tool_use.json"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.EncodeResponse(want, &Request{Model: want.Model})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	want.Usage.ReasoningTokens = 0 // not part of the usage object louter writes
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n%s\nwant\n%s", anthDumpJSON(got), anthDumpJSON(want))
	}
}

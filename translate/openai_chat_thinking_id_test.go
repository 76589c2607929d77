package translate

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestOpenAIChatThinkingFoldRoundTrip(t *testing.T) {
	// A realistic signature: 600 random-looking bytes in standard base64.
	sigBytes := make([]byte, 600)
	for i := range sigBytes {
		sigBytes[i] = byte(i*131 + i*i*7)
	}
	sig := base64.StdEncoding.EncodeToString(sigBytes)
	thought := strings.Repeat("The user wants the weather in Paris, so I call get_weather. ", 20)
	for _, tt := range []struct {
		name   string
		id     string
		blocks []Part
	}{
		{"thinking", "toolu_01A", []Part{{Type: PartThinking, Text: "Plan: call the tool.", Signature: "EqQBCkYIBxgC"}}},
		{"thinking and redacted, in order", "toolu_01B", []Part{
			{Type: PartThinking, Text: "first", Signature: "sig1"},
			{Type: PartRedactedThinking, Signature: "EmwKAhgBredacted=="},
			{Type: PartThinking, Text: "", Signature: "sig3"},
		}},
		{"long thought", "toolu_01C", []Part{{Type: PartThinking, Text: thought, Signature: sig}}},
		{"id holding a Gemini signature", geminiJoinCallID("call_1", "AAECAw-th-x"), []Part{{Type: PartThinking, Text: "t", Signature: "s"}}},
		{"id holding the separator", "a-th-b", []Part{{Type: PartThinking, Text: "t", Signature: "s"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			folded := oaiFoldThinking(tt.id, tt.blocks)
			if !validToolToken(folded) {
				t.Errorf("folded id has bytes outside [A-Za-z0-9_-]: %q", folded)
			}
			id, blocks := oaiUnfoldThinking(folded)
			if id != tt.id || !reflect.DeepEqual(blocks, tt.blocks) {
				t.Errorf("unfold = %q %+v, want %q %+v", id, blocks, tt.id, tt.blocks)
			}
			if tt.name == "long thought" {
				t.Logf("%d bytes of thinking and signature -> id of %d bytes", len(thought)+len(sig), len(folded))
				if len(folded) > len(thought)+len(sig) {
					t.Errorf("the fold does not compress: %d bytes", len(folded))
				}
			}
		})
	}
	for _, id := range []string{"call_abc", "a-th-", "a-th-!!", "a-th-AAAA", "toolu-th-" + base64.RawURLEncoding.EncodeToString([]byte("not deflate"))} {
		if got, blocks := oaiUnfoldThinking(id); got != id || blocks != nil {
			t.Errorf("oaiUnfoldThinking(%q) = %q %v, want it untouched", id, got, blocks)
		}
	}
}

// TestOpenAIChatThinkingSurvivesToParam: an answer with signed thinking,
// sent back as openai-go's ToParam keeps it (content, tool-call ids, names,
// arguments; no reasoning_content), decodes to the same thinking blocks,
// first in the message, and reaches an Anthropic backend signed.
func TestOpenAIChatThinkingSurvivesToParam(t *testing.T) {
	resp := &Response{ID: "msg_1", Model: "claude", StopReason: StopToolUse, Parts: []Part{
		{Type: PartThinking, Text: "I should look it up.", Signature: "EqQBCkYIBxgCsig"},
		{Type: PartRedactedThinking, Signature: "EmwKAhgBredacted"},
		{Type: PartText, Text: "Checking."},
		{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01A", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01B", Name: "get_time", Arguments: `{}`}},
	}}
	out, err := openAIChatCodec{}.EncodeResponse(resp, &Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	msg := gjson.GetBytes(out, "choices.0.message")
	id0, id1 := msg.Get("tool_calls.0.id").Str, msg.Get("tool_calls.1.id").Str
	if !strings.HasPrefix(id0, "toolu_01A-th-") || id1 != "toolu_01B" {
		t.Fatalf("ids %q %q", id0, id1)
	}
	// What ToParam keeps, and the tool results in the ids the client saw.
	history := `{"model":"m","messages":[{"role":"user","content":"weather?"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"` + id0 + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"` + id1 + `","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"` + id0 + `","content":"sunny"},
		{"role":"tool","tool_call_id":"` + id1 + `","content":"noon"}]}`
	req, err := openAIChatCodec{}.DecodeRequest([]byte(history))
	if err != nil {
		t.Fatal(err)
	}
	parts := req.Messages[1].Parts
	var types []PartType
	for _, p := range parts {
		types = append(types, p.Type)
	}
	if want := []PartType{PartThinking, PartRedactedThinking, PartText, PartToolCall, PartToolCall}; !reflect.DeepEqual(types, want) {
		t.Fatalf("assistant parts %v, want %v", types, want)
	}
	if parts[0].Text != "I should look it up." || parts[0].Signature != "EqQBCkYIBxgCsig" || parts[1].Signature != "EmwKAhgBredacted" {
		t.Errorf("thinking %+v %+v", parts[0], parts[1])
	}
	if parts[3].ToolCall.ID != "toolu_01A" || req.Messages[2].Parts[0].ToolResult.CallID != "toolu_01A" {
		t.Errorf("ids not restored: %q %q", parts[3].ToolCall.ID, req.Messages[2].Parts[0].ToolResult.CallID)
	}

	req.Reasoning = &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 2048}
	req.MaxTokens = 4096
	body, err := anthropicCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	a := gjson.GetBytes(body, "messages.1.content")
	if a.Get("0.type").Str != "thinking" || a.Get("0.signature").Str != "EqQBCkYIBxgCsig" || a.Get("1.type").Str != "redacted_thinking" ||
		a.Get("3.type").Str != "tool_use" || a.Get("3.id").Str != "toolu_01A" || gjson.GetBytes(body, "thinking.type").Str != "enabled" {
		t.Errorf("Anthropic request: %s", body)
	}

	// A client that also keeps reasoning_content does not get it twice.
	withReasoning := strings.Replace(history, `"content":"Checking.",`, `"content":"Checking.","reasoning_content":"I should look it up.",`, 1)
	req, err = openAIChatCodec{}.DecodeRequest([]byte(withReasoning))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(req.Messages[1].Parts); n != 5 {
		t.Errorf("%d parts with reasoning_content kept, want 5", n)
	}
}

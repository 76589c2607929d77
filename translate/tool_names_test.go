package translate

import (
	"reflect"
	"testing"
)

// mcpName is a Claude Code MCP tool name longer than OpenAI's and Gemini's
// 64-character limit.
const mcpName = "mcp__claude_ai_Atlassian_Rovo__getAccessibleAtlassianResourcesForCurrentUser"

func TestToolNamingPerProtocol(t *testing.T) {
	for _, tt := range []struct {
		name     string
		protocol Protocol
		dialect  *Dialect
		in       string
		kept     bool
	}{
		{"openai short", ProtocolOpenAIChat, nil, "get_weather", true},
		{"openai mcp", ProtocolOpenAIChat, nil, mcpName, false},
		{"openai dot", ProtocolOpenAIChat, nil, "fs.read", false},
		{"openai leading digit", ProtocolOpenAIChat, nil, "3d_render", true},
		{"responses mcp", ProtocolOpenAIResponses, nil, mcpName, false},
		{"anthropic mcp", ProtocolAnthropic, nil, mcpName, false},
		{"anthropic colon", ProtocolAnthropic, nil, "ns:tool", false},
		{"gemini mcp", ProtocolGemini, nil, mcpName, false},
		{"gemini dot and colon", ProtocolGemini, nil, "fs.read:v2", true},
		{"gemini leading digit", ProtocolGemini, nil, "3d_render", false},
		{"gemini leading dash", ProtocolGemini, nil, "-x", false},
		{"gemini space", ProtocolGemini, nil, "get weather", false},
		{"dialect without limit", ProtocolOpenAIChat, &Dialect{MaxToolNameLength: -1}, mcpName, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := ToolNaming(tt.protocol, tt.dialect)
			got := d.BackendToolName(tt.in)
			if kept := got == tt.in; kept != tt.kept {
				t.Fatalf("BackendToolName(%q) = %q, kept %v, want %v", tt.in, got, kept, tt.kept)
			}
			if tt.kept {
				return
			}
			if len(got) > 64 || !d.validToolName(got) {
				t.Errorf("%q is not a valid %s name", got, tt.protocol)
			}
			if again := d.BackendToolName(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
			if d.BackendToolName(tt.in) != got {
				t.Error("not deterministic")
			}
			if other := d.BackendToolName(tt.in + "2"); other == got {
				t.Errorf("%q and %q collide", tt.in, tt.in+"2")
			}
			if m := d.ClientToolNames(&Request{Tools: []Tool{{Name: tt.in}}}); m[got] != tt.in {
				t.Errorf("ClientToolNames = %v, want %s -> %s", m, got, tt.in)
			}
		})
	}
}

// TestToolNamingParsesNothing: backends other than OpenAI Chat only get
// names restored; an OpenAI Chat backend without a dialect keeps its ids.
func TestToolNamingParsesNothing(t *testing.T) {
	for _, p := range []Protocol{ProtocolAnthropic, ProtocolOpenAIResponses, ProtocolGemini} {
		d := ToolNaming(p, nil)
		if d.ToolCallFormat() != ToolCallsNative || d.ReasoningFormat() != ReasoningFormatFields || !d.KeepToolIDs {
			t.Errorf("%s: %+v", p, d)
		}
	}
	if d := ToolNaming(ProtocolOpenAIChat, nil); d.ToolCallFormat() != ToolCallsAuto || !d.KeepToolIDs || d.BackendToolID("a.b") != "a.b" {
		t.Errorf("openai_chat: %+v", d)
	}
	own := &Dialect{ToolCalls: ToolCallsHermes}
	if ToolNaming(ProtocolOpenAIChat, own) != own {
		t.Error("a backend's own dialect is not used")
	}
}

func TestWithBackendToolNames(t *testing.T) {
	d := ToolNaming(ProtocolGemini, nil)
	short := d.BackendToolName(mcpName)
	req := &Request{
		Tools:      []Tool{{Name: mcpName, Description: "d"}, {Name: "get_time"}},
		ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: mcpName, Allowed: []string{mcpName, "get_time"}},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi"}}},
			{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "ok"}, {Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: mcpName, Arguments: "{}"}}}},
			{Role: RoleUser, Parts: []Part{{Type: PartToolResult, ToolResult: &ToolResult{CallID: "c1", Name: mcpName}}}},
		},
	}
	before := cloneForTest(req)
	out := WithBackendToolNames(req, d)
	if !reflect.DeepEqual(req, before) {
		t.Fatal("the client's request was modified")
	}
	if out.Tools[0].Name != short || out.Tools[0].Description != "d" || out.Tools[1].Name != "get_time" {
		t.Errorf("tools %+v", out.Tools)
	}
	if tc := out.ToolChoice; tc.Name != short || !reflect.DeepEqual(tc.Allowed, []string{short, "get_time"}) {
		t.Errorf("tool choice %+v", tc)
	}
	if n := out.Messages[1].Parts[1].ToolCall.Name; n != short {
		t.Errorf("history call %q", n)
	}
	if n := out.Messages[2].Parts[0].ToolResult.Name; n != short {
		t.Errorf("history result %q", n)
	}
	if &out.Messages[0].Parts[0] != &req.Messages[0].Parts[0] {
		t.Error("a message without tool names was copied")
	}

	plain := &Request{Tools: []Tool{{Name: "get_time"}}, ToolChoice: &ToolChoice{Mode: ToolChoiceAuto}}
	if WithBackendToolNames(plain, d) != plain {
		t.Error("a request with valid names was copied")
	}
}

// cloneForTest deep-copies what WithBackendToolNames might touch.
func cloneForTest(r *Request) *Request {
	c := *r
	c.Tools = append([]Tool(nil), r.Tools...)
	tc := *r.ToolChoice
	tc.Allowed = append([]string(nil), tc.Allowed...)
	c.ToolChoice = &tc
	c.Messages = nil
	for _, m := range r.Messages {
		m.Parts = append([]Part(nil), m.Parts...)
		for j := range m.Parts {
			if m.Parts[j].ToolCall != nil {
				x := *m.Parts[j].ToolCall
				m.Parts[j].ToolCall = &x
			}
			if m.Parts[j].ToolResult != nil {
				x := *m.Parts[j].ToolResult
				m.Parts[j].ToolResult = &x
			}
		}
		c.Messages = append(c.Messages, m)
	}
	return &c
}

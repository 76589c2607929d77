package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// toolSession is an Anthropic request of n tool rounds: each an assistant
// turn (with thinking) calling tools[i%len(tools)] and the user's result
// of size bytes, then a last user question; cm is its context_management.
func toolSession(n, size int, cm string, tools ...string) string {
	var b strings.Builder
	b.WriteString(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"go"}`)
	for i := range n {
		name := tools[i%len(tools)]
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":"think %d","signature":"s%d"},{"type":"tool_use","id":"toolu_%d","name":%q,"input":{"path":"/f%d"}}]}`, i, i, i, name, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, strings.Repeat("x", size))
	}
	b.WriteString(`,{"role":"assistant","content":"done?"},{"role":"user","content":"yes"}]`)
	if cm != "" {
		b.WriteString(`,"context_management":` + cm)
	}
	b.WriteString(`}`)
	return b.String()
}

// edited decodes body, applies its context edits for an OpenAI Chat
// backend in mode, and returns the request.
func edited(t *testing.T, body string, mode ContextEditing) (*Request, *Error) {
	t.Helper()
	c, _ := Lookup(ProtocolAnthropic)
	req, err := c.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return req, EditContext(req, ProtocolOpenAIChat, mode, nil, nil)
}

// clearedCalls lists which tool results were cleared (c) or kept (k), and
// which inputs were emptied (e), oldest first.
func clearedCalls(req *Request) string {
	var s []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			switch {
			case p.ToolResult != nil && len(p.ToolResult.Content) == 1 && p.ToolResult.Content[0].Text == ClearedToolResult:
				s = append(s, "c")
			case p.ToolResult != nil:
				s = append(s, "k")
			case p.ToolCall != nil && p.ToolCall.Arguments == "{}":
				s = append(s, "e")
			}
		}
	}
	return strings.Join(s, "")
}

func TestClearToolUses(t *testing.T) {
	// Six rounds of 4000-byte results: ~6000 tokens by the rough count.
	for _, tt := range []struct {
		name, cm string
		tools    []string
		want     string // clearedCalls
		cleared  int
	}{
		{"below the input trigger", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":7000}}]}`, []string{"Read"}, "kkkkkk", 0},
		{"past the input trigger, keep 3 by default", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":5000}}]}`, []string{"Read"}, "ccckkk", 3},
		{"default trigger 100000 not reached", `{"edits":[{"type":"clear_tool_uses_20250919"}]}`, []string{"Read"}, "kkkkkk", 0},
		{"tool_uses trigger reached", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":5},"keep":{"type":"tool_uses","value":1}}]}`, []string{"Read"}, "ccccck", 5},
		{"tool_uses trigger not reached", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":6}}]}`, []string{"Read"}, "kkkkkk", 0},
		{"keep 0", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"keep":{"type":"tool_uses","value":0}}]}`, []string{"Read"}, "cccccc", 6},
		{"keep more than there are", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"keep":{"type":"tool_uses","value":9}}]}`, []string{"Read"}, "kkkkkk", 0},
		{"exclude_tools", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"keep":{"type":"tool_uses","value":2},"exclude_tools":["Read"]}]}`, []string{"Read", "Bash"}, "kckckk", 2},
		{"clear_at_least met", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"clear_at_least":{"type":"input_tokens","value":2900}}]}`, []string{"Read"}, "ccckkk", 3},
		{"clear_at_least not met: nothing", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"clear_at_least":{"type":"input_tokens","value":3100}}]}`, []string{"Read"}, "kkkkkk", 0},
		{"clear_tool_inputs true", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"keep":{"type":"tool_uses","value":4},"clear_tool_inputs":true}]}`, []string{"Read", "Bash"}, "ecec" + "kkkk", 2},
		{"clear_tool_inputs by name", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1},"keep":{"type":"tool_uses","value":2},"clear_tool_inputs":["Bash"]}]}`, []string{"Read", "Bash"}, "cecceckk", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, e := edited(t, toolSession(6, 4000, tt.cm, tt.tools...), ContextAuto)
			if e != nil {
				t.Fatal(e)
			}
			if got := clearedCalls(req); got != tt.want {
				t.Errorf("cleared = %s, want %s", got, tt.want)
			}
			cm := req.ContextManagement
			if !cm.Reported || cm.Raw != nil {
				t.Fatalf("reported %v, raw %s: the edits must be applied and not sent", cm.Reported, cm.Raw)
			}
			if tt.cleared == 0 {
				if len(cm.Applied) != 0 {
					t.Errorf("applied = %+v, want none", cm.Applied)
				}
				return
			}
			if len(cm.Applied) != 1 || cm.Applied[0].Type != EditClearToolUses || cm.Applied[0].ClearedToolUses != tt.cleared {
				t.Fatalf("applied = %+v, want %d tool uses cleared", cm.Applied, tt.cleared)
			}
			if min := tt.cleared * 900; cm.Applied[0].ClearedInputTokens < min {
				t.Errorf("cleared_input_tokens = %d, want at least %d", cm.Applied[0].ClearedInputTokens, min)
			}
			if !strings.Contains(strings.Join(req.Dropped, "\n"), "context_management.clear_tool_uses_20250919: louter cleared") {
				t.Errorf("dropped = %q, want the clearing recorded", req.Dropped)
			}
		})
	}
}

// thinkingSession is a request of n user turns, each answered by a tool
// call with thinking and, after its result, a text with thinking.
func thinkingSession(n int, cm string) string {
	var b strings.Builder
	b.WriteString(`{"model":"m","max_tokens":100,"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"user","content":"question %d"}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":"plan %d","signature":"s"},{"type":"tool_use","id":"toolu_%d","name":"Read","input":{}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"r"}]}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":"conclude %d","signature":"s"},{"type":"text","text":"answer %d"}]}`, i, i)
	}
	fmt.Fprintf(&b, `,{"role":"user","content":"question %d"}],"context_management":%s}`, n, cm)
	return b.String()
}

// thinkingLeft lists, per assistant message, whether its thinking is
// still there (t) or not (-), a space between turns.
func thinkingLeft(req *Request) string {
	var s strings.Builder
	for _, m := range req.Messages {
		switch {
		case m.Role == RoleUser && !onlyToolResults(m.Parts):
			s.WriteString(" ")
		case m.Role == RoleAssistant && hasThinking(m.Parts):
			s.WriteString("t")
		case m.Role == RoleAssistant:
			s.WriteString("-")
		}
	}
	return strings.TrimSpace(s.String())
}

func TestClearThinking(t *testing.T) {
	for _, tt := range []struct {
		name, cm, want string
		turns          int
	}{
		{"keep all (Claude Code's default)", `{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}`, "tt tt tt tt", 0},
		{"keep 1 by default", `{"edits":[{"type":"clear_thinking_20251015"}]}`, "-- -- -- tt", 3},
		{"keep 2", `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}}]}`, "-- -- tt tt", 2},
		{"keep 0", `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":0}}]}`, "-- -- -- --", 4},
		{"keep more than there are", `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":5}}]}`, "tt tt tt tt", 0},
		{"with clear_tool_uses after it", `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":3}},{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1}}]}`, "-- tt tt tt", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, e := edited(t, thinkingSession(4, tt.cm), ContextAuto)
			if e != nil {
				t.Fatal(e)
			}
			if got := thinkingLeft(req); got != tt.want {
				t.Errorf("thinking left = %s, want %s", got, tt.want)
			}
			applied := req.ContextManagement.Applied
			if tt.turns == 0 {
				if len(applied) != 0 {
					t.Errorf("applied = %+v, want none", applied)
				}
				return
			}
			if len(applied) == 0 || applied[0].Type != EditClearThinking || applied[0].ClearedThinkingTurns != tt.turns || applied[0].ClearedInputTokens <= 0 {
				t.Errorf("applied = %+v, want %d thinking turns cleared first", applied, tt.turns)
			}
		})
	}
	// One turn of tool calls is one thinking turn, however many calls it
	// made: keep 1 keeps all of its thinking.
	req, e := edited(t, toolSession(4, 100, `{"edits":[{"type":"clear_thinking_20251015"}]}`, "Read"), ContextAuto)
	if e != nil || len(req.ContextManagement.Applied) != 0 {
		t.Errorf("a single tool-calling turn: %v, applied %+v, want nothing cleared", e, req.ContextManagement.Applied)
	}
}

func TestContextEditErrors(t *testing.T) {
	for _, tt := range []struct {
		name, cm, param, msg string
	}{
		{"unknown edit type", `{"edits":[{"type":"clear_everything_20990101"}]}`, "context_management.edits.0.type", `unknown context management edit type "clear_everything_20990101"`},
		{"clear_thinking not first", `{"edits":[{"type":"clear_tool_uses_20250919"},{"type":"clear_thinking_20251015"}]}`, "context_management.edits.1.type", "must be the first edit"},
		{"wrong trigger type", `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"turns","value":3}}]}`, "context_management.edits.0.trigger.type", `"turns" is not one of input_tokens, tool_uses`},
		{"negative keep", `{"edits":[{"type":"clear_tool_uses_20250919","keep":{"type":"tool_uses","value":-1}}]}`, "context_management.edits.0.keep.value", "non-negative integer"},
		{"extra member", `{"edits":[{"type":"clear_thinking_20251015","trigger":{"type":"input_tokens","value":1}}]}`, "context_management.edits.0.trigger", "Extra inputs are not permitted"},
		{"exclude_tools not names", `{"edits":[{"type":"clear_tool_uses_20250919","exclude_tools":[1]}]}`, "context_management.edits.0.exclude_tools", "array of tool names"},
		{"edits not an array", `{"edits":{}}`, "context_management.edits", "must be an array"},
		{"compaction past its trigger", `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}]}`, "context_management.edits.0", "compact_20260112 is not available here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, e := edited(t, toolSession(3, 4000, tt.cm, "Read"), ContextAuto)
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != 400 || e.Kind != ErrInvalidRequest || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error = %d %s %q %q, want 400 invalid_request for %s: %s", e.Status, e.Kind, e.Param, e.Message, tt.param, tt.msg)
			}
		})
	}
	// Below its trigger a compaction edit has nothing to do.
	req, e := edited(t, toolSession(3, 10, `{"edits":[{"type":"compact_20260112"}]}`, "Read"), ContextAuto)
	if e != nil || !req.ContextManagement.Reported || len(req.ContextManagement.Applied) != 0 {
		t.Errorf("compaction below its trigger: %v, %+v", e, req.ContextManagement)
	}
}

func TestContextEditingModes(t *testing.T) {
	cm := `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":1}}]}`
	body := toolSession(5, 100, cm, "Read")
	for _, tt := range []struct {
		name    string
		backend Protocol
		mode    ContextEditing
		member  bool   // the backend body carries context_management
		betas   string // its anthropic_beta
		cleared string
	}{
		{"anthropic backend: native", ProtocolAnthropic, ContextAuto, true, "", "kkkkk"},
		{"bedrock: native with its beta", ProtocolBedrock, ContextAuto, true, `["context-management-2025-06-27"]`, "kkkkk"},
		{"vertex: polyfill", ProtocolVertexAnthropic, ContextAuto, false, "", "cckkk"},
		{"bedrock told to polyfill", ProtocolBedrock, ContextPolyfill, false, "", "cckkk"},
		{"openai chat: polyfill", ProtocolOpenAIChat, ContextAuto, false, "", "cckkk"},
		{"gemini off", ProtocolGemini, ContextOff, false, "", "kkkkk"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := Lookup(ProtocolAnthropic)
			backend, _ := Lookup(tt.backend)
			out, creq, err := TranslateRequest([]byte(body), nil, &RequestRoute{Client: client, Backend: backend, Model: "m", BackendModel: "m", ContextEditing: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			g := gjson.ParseBytes(out)
			if got := g.Get("context_management").Exists(); got != tt.member {
				t.Errorf("context_management in the backend body: %v, want %v", got, tt.member)
			}
			if tt.member && g.Get("context_management").Raw != cm {
				t.Errorf("context_management = %s, want the client's %s", g.Get("context_management").Raw, cm)
			}
			if got := g.Get("anthropic_beta").Raw; got != tt.betas {
				t.Errorf("anthropic_beta = %s, want %s", got, tt.betas)
			}
			if got := clearedCalls(creq); got != tt.cleared {
				t.Errorf("cleared = %s, want %s", got, tt.cleared)
			}
			dropped := strings.Join(creq.Dropped, "\n")
			if off := strings.Contains(dropped, "context_management: context editing is off"); off != (tt.mode == ContextOff) {
				t.Errorf("dropped = %q", dropped)
			}
		})
	}
}

func TestCompactionBlockInHistory(t *testing.T) {
	body := `{"model":"m","max_tokens":100,"messages":[
	 {"role":"user","content":"old question"},
	 {"role":"assistant","content":"old answer"},
	 {"role":"user","content":"more"},
	 {"role":"assistant","content":[{"type":"compaction","content":"Summary: the user asked things."},{"type":"text","text":"Carrying on."}]},
	 {"role":"user","content":"next"}]}`
	req, e := edited(t, body, ContextAuto)
	if e != nil {
		t.Fatal(e)
	}
	var got []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			got = append(got, string(m.Role)+":"+p.Text)
		}
	}
	if want := "user:Summary: the user asked things.|assistant:Carrying on.|user:next"; strings.Join(got, "|") != want {
		t.Errorf("messages = %s, want %s", strings.Join(got, "|"), want)
	}
	// A block that is all its message holds: the summary joins the next
	// user turn. A null content (a failed compaction) changes nothing.
	body = `{"model":"m","max_tokens":100,"messages":[
	 {"role":"user","content":"old"},
	 {"role":"assistant","content":[{"type":"compaction","content":null}]},
	 {"role":"user","content":"a"},
	 {"role":"assistant","content":[{"type":"compaction","content":"S"}]},
	 {"role":"user","content":"next"}]}`
	req, e = edited(t, body, ContextAuto)
	if e != nil {
		t.Fatal(e)
	}
	if len(req.Messages) != 1 || len(req.Messages[0].Parts) != 2 || req.Messages[0].Parts[0].Text != "S" || req.Messages[0].Parts[1].Text != "next" {
		t.Errorf("messages = %+v, want one user turn: S, next", req.Messages)
	}
}

// TestAppliedEditsAnswer: the Anthropic answer reports the applied edits
// in the message and in message_delta, and only when louter applied them.
func TestAppliedEditsAnswer(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	cm := &ContextManagement{Reported: true, Applied: []AppliedEdit{
		{Type: EditClearThinking, ClearedThinkingTurns: 2, ClearedInputTokens: 30},
		{Type: EditClearToolUses, ClearedToolUses: 4, ClearedInputTokens: 900}}}
	want := `{"applied_edits":[{"type":"clear_thinking_20251015","cleared_input_tokens":30,"cleared_thinking_turns":2},{"type":"clear_tool_uses_20250919","cleared_input_tokens":900,"cleared_tool_uses":4}]}`
	resp := &Response{ID: "msg_1", Parts: []Part{{Type: PartText, Text: "hi"}}, StopReason: StopEndTurn}
	for _, tt := range []struct {
		cm   *ContextManagement
		want string
	}{
		{cm, want},
		{&ContextManagement{Reported: true}, `{"applied_edits":[]}`},
		{&ContextManagement{Raw: []byte(`{"edits":[]}`)}, ""}, // native: the backend reports
		{nil, ""},
	} {
		req := &Request{Model: "m", ContextManagement: tt.cm}
		body, err := c.EncodeResponse(resp, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, "context_management").Raw; got != tt.want {
			t.Errorf("response context_management = %s, want %s", got, tt.want)
		}
		enc := c.NewStreamEncoder(req)
		var w frameRecorder
		for _, ev := range []Event{{Type: EventMessageStart}, {Type: EventMessageStop, Stop: StopEndTurn}} {
			enc.Encode(&w, &ev)
		}
		if got := gjson.GetBytes(w.data["message_delta"], "context_management").Raw; got != tt.want {
			t.Errorf("message_delta context_management = %s, want %s", got, tt.want)
		}
	}
}

type frameRecorder struct{ data map[string][]byte }

func (w *frameRecorder) WriteFrame(name string, data []byte) {
	if w.data == nil {
		w.data = map[string][]byte{}
	}
	w.data[name] = append([]byte(nil), data...)
}

// ExampleEditContext applies a client's clear_tool_uses edit for an OpenAI
// Chat backend, as louter does before translating the request.
func ExampleEditContext() {
	anthropic, _ := Lookup(ProtocolAnthropic)
	body := toolSession(3, 400, `{"edits":[{"type":"clear_tool_uses_20250919",
		"trigger":{"type":"tool_uses","value":2},"keep":{"type":"tool_uses","value":1}}]}`, "Read")
	req, _ := anthropic.DecodeRequest([]byte(body))
	if err := EditContext(req, ProtocolOpenAIChat, ContextAuto, nil, nil); err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range req.ContextManagement.Applied {
		fmt.Printf("%s: %d tool uses, ~%d tokens\n", a.Type, a.ClearedToolUses, a.ClearedInputTokens)
	}
	fmt.Println(req.Messages[2].Parts[0].ToolResult.Content[0].Text)
	// Output:
	// clear_tool_uses_20250919: 2 tool uses, ~178 tokens
	// [tool result cleared by context management]
}

package translate

import (
	"strings"
	"testing"
)

// toolChangesBody is a Claude Code session: ToolSearch loads a deferred
// MCP tool, then an MCP server swaps its tools mid-session.
const toolChangesBody = `{"model":"m","max_tokens":100,
 "tools":[
  {"name":"Read","description":"read","input_schema":{"type":"object"}},
  {"name":"ToolSearch","description":"search tools","input_schema":{"type":"object"}},
  {"name":"mcp__linear__create_issue","description":"create","input_schema":{"type":"object"},"defer_loading":true},
  {"name":"mcp__linear__list","description":"list","input_schema":{"type":"object"},"defer_loading":true},
  {"name":"mcp__old__search","description":"old","input_schema":{"type":"object"}}],
 "messages":[
  {"role":"user","content":"file an issue"},
  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ToolSearch","input":{"query":"linear"}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[
     {"type":"tool_reference","tool_name":"mcp__linear__create_issue"}]}]},
  {"role":"system","content":[
     {"type":"text","text":"MCP server linear connected."},
     {"type":"tool_removal","tool":{"type":"tool_reference","name":"mcp__old__search"}},
     {"type":"tool_addition","tool":{"type":"tool_definition","definition":{
        "name":"mcp__linear__comment","description":"Comment","input_schema":{"type":"object","properties":{}}}},
      "cache_control":{"type":"ephemeral"}}]}]}`

func TestApplyToolChanges(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	req, err := c.DecodeRequest([]byte(toolChangesBody))
	if err != nil {
		t.Fatal(err)
	}
	if e := c.(ToolChangeCodec).ApplyToolChanges([]byte(toolChangesBody), req); e != nil {
		t.Fatal(e)
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
	}
	// Deferred mcp__linear__list was never loaded; mcp__old__search was
	// removed; the inline tool comes last.
	if got, want := strings.Join(names, ","), "Read,ToolSearch,mcp__linear__create_issue,mcp__linear__comment"; got != want {
		t.Errorf("tools in force = %s, want %s", got, want)
	}
	if last := req.Tools[len(req.Tools)-1]; last.Description != "Comment" || string(last.Schema) != `{"type":"object","properties":{}}` {
		t.Errorf("inline tool = %+v", last)
	}
	res := req.Messages[2].Parts[0].ToolResult
	if res == nil || len(res.Content) != 1 || res.Content[0].Text != "Loaded tools: mcp__linear__create_issue" {
		t.Errorf("tool result = %+v, want the loaded tools as text", res)
	}
	var sys []string
	for _, p := range req.Messages[3].Parts {
		sys = append(sys, p.Text)
	}
	if got, want := strings.Join(sys, "|"), "MCP server linear connected.|Tool mcp__old__search was removed and can no longer be called.|Tool mcp__linear__comment is now available."; got != want {
		t.Errorf("system message = %q, want %q", got, want)
	}
	for _, d := range req.Dropped {
		if strings.Contains(d, "tool_addition") || strings.Contains(d, "tool_removal") || strings.Contains(d, "tool_reference") || strings.HasPrefix(d, "tools.defer_loading") {
			t.Errorf("translated block still reported dropped: %s", d)
		}
	}
	// Encoded for OpenAI Chat, the backend sees the same four tools.
	oc, _ := Lookup(ProtocolOpenAIChat)
	out, err := oc.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Contains(s, "mcp__old__search\",\"description") || strings.Contains(s, "mcp__linear__list") || !strings.Contains(s, "mcp__linear__comment") {
		t.Errorf("openai_chat request: %s", s)
	}
}

// A tool defined inline and later removed by reference is gone.
func TestApplyToolChangesInlineRemoved(t *testing.T) {
	body := []byte(`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{}}],"messages":[
		{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"x","input_schema":{}}}}]},
		{"role":"user","content":"hi"},
		{"role":"system","content":[{"type":"tool_removal","tool":{"type":"tool_reference","name":"x"}}]}]}`)
	c, _ := Lookup(ProtocolAnthropic)
	req, err := c.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if e := c.(ToolChangeCodec).ApplyToolChanges(body, req); e != nil {
		t.Fatal(e)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "a" {
		t.Errorf("tools = %+v, want a alone", req.Tools)
	}
}

func TestApplyToolChangesErrors(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	tests := []struct{ body, param string }{
		{`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{}}],"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"b"}}]}]}`, "messages.0.content.0.tool.name"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":[{"type":"tool_removal","tool":{"type":"tool_definition","definition":{"name":"x"}}}]}]}`, "messages.0.content.0.tool.type"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"x"}},{"type":"image"}]}]}`, "messages.0.content.0.tool.name"},
		{`{"model":"m","max_tokens":1,"tools":[{"name":"a","input_schema":{}}],"messages":[{"role":"system","content":[{"type":"tool_thing"},{"type":"tool_addition","tool":{"type":"tool_reference","name":"a"}}]}]}`, "messages.0.content.0.type"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference"}]}]}]}`, "messages.0.content.0.content.0.tool_name"},
	}
	for _, tt := range tests {
		oc, _ := Lookup(ProtocolOpenAIChat)
		_, _, err := TranslateRequest([]byte(tt.body), nil, &RequestRoute{Client: c, Backend: oc, Model: "m", BackendModel: "m"})
		e, ok := err.(*Error)
		if !ok || e.Status != 400 || e.Param != tt.param || !strings.HasPrefix(e.Message, tt.param) {
			t.Errorf("%s: %v, want a 400 naming %s", tt.body, err, tt.param)
		}
	}
}

func TestForcedServerTool(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	oc, _ := Lookup(ProtocolOpenAIChat)
	rt := &RequestRoute{Client: c, Backend: oc, Model: "m", BackendModel: "m"}
	// Claude Code's WebSearch request.
	forced := `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"search louter"}],
		"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":8}],"tool_choice":{"type":"tool","name":"web_search"}}`
	_, _, err := TranslateRequest([]byte(forced), nil, rt)
	if e, ok := err.(*Error); !ok || e.Status != 400 || e.Param != "tools.0" || !strings.Contains(e.Message, "web_search_20250305") {
		t.Errorf("forced web_search: %v, want a 400 naming web_search_20250305", err)
	}
	// Offered, not forced: left out, as before.
	offered := strings.Replace(forced, `"tool_choice":{"type":"tool","name":"web_search"}`, `"tool_choice":{"type":"auto"}`, 1)
	if _, req, err := TranslateRequest([]byte(offered), nil, rt); err != nil || len(req.Tools) != 0 {
		t.Errorf("offered web_search: %v, tools %d", err, len(req.Tools))
	}
}

package mock

import (
	"net/http"
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

// The agent scenario asked to call a named tool: found by the tool search
// first when not declared, called once declared, then its result
// reported; each step is what the request's history and tools say.
func TestAgentScenarioNamedTool(t *testing.T) {
	const (
		prompt     = `{"role":"user","content":"Call the tool \"mcp__tickets__lookup\" and tell me what it returns."}`
		search     = `{"name":"ToolSearch","input_schema":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"number"}},"required":["query","max_results"]}}`
		lookup     = `{"name":"mcp__tickets__lookup","input_schema":{"type":"object","properties":{"number":{"type":"integer"}},"required":["number"]}}`
		bash       = `{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}`
		searched   = `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ToolSearch","input":{"query":"select:mcp__tickets__lookup"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Loaded tools: mcp__tickets__lookup"}]}`
		calledTool = `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"mcp__tickets__lookup","input":{"number":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"ticket 1: louter-mcp-ok"}]}`
	)
	tests := []struct {
		name, tools, history string
		wantTool, wantArgs   string // a call expected
		wantText             string // else this text
	}{
		{"not declared: search it", bash + "," + search, "", "ToolSearch", `{"query":"select:mcp__tickets__lookup","max_results":5}`, ""},
		{"declared after the search: call it", bash + "," + search + "," + lookup, searched, "mcp__tickets__lookup", `{"number":1}`, ""},
		{"declared from the start", lookup, "", "mcp__tickets__lookup", `{"number":1}`, ""},
		{"its result: reported", bash + "," + search + "," + lookup, searched + calledTool, "", "", "The tool mcp__tickets__lookup returned: ticket 1: louter-mcp-ok"},
		{"still not declared after the search", bash + "," + search, searched, "", "", "The tool mcp__tickets__lookup is not available."},
		{"no tool search", bash, "", "", "", "The tool mcp__tickets__lookup is not available."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"claude-test","max_tokens":100,"tools":[` + tt.tools + `],"messages":[` + prompt + tt.history + `]}`
			d := decodeBody(t, translate.ProtocolAnthropic, serve(t, newMock(t, nil), newRequest(http.MethodPost, "/v1/messages", body)), false)
			if d.err != nil {
				t.Fatal(d.err)
			}
			calls := toolCalls(d.resp)
			if tt.wantTool == "" {
				if text := partsText(d.resp, translate.PartText); !strings.HasPrefix(text, tt.wantText) || len(calls) != 0 {
					t.Errorf("text %q, calls %+v; want text %q", text, calls, tt.wantText)
				}
				return
			}
			if len(calls) != 1 {
				t.Fatalf("%d calls, want one to %s", len(calls), tt.wantTool)
			}
			if c := calls[0]; c.Name != tt.wantTool || c.Arguments != tt.wantArgs {
				t.Errorf("call %s %s; want %s %s", c.Name, c.Arguments, tt.wantTool, tt.wantArgs)
			}
		})
	}
}

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestClaudeCodeToolSearchMCP runs Claude Code with tool search on and a
// stdio MCP server (this test binary, mcp_server_test.go) against an
// OpenAI Chat backend, and asks it to call one of the server's tools.
// Claude Code defers MCP tools: it names them in a system message and
// declares one only after its ToolSearch tool loaded it (a tool_result of
// tool_reference blocks, and the tool in tools[] with defer_loading). The
// backend must see the tools the model would see on Anthropic at each
// turn: not the deferred tools before the search, the loaded tool with its
// schema after it, never the tools nobody loaded.
func TestClaudeCodeToolSearchMCP(t *testing.T) {
	claude := agentBinary(t, "claude")
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"tickets": map[string]any{
		"type": "stdio", "command": os.Args[0], "env": map[string]string{mcpServerEnv: "1"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, mcpConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	const tool = "mcp__tickets__lookup_ticket"
	for _, backend := range []string{"openai_chat", "gemini", "openai_responses"} {
		t.Run(backend, func(t *testing.T) {
			url, mockPort := startAgentSite(t, backend, "claude-tool-search-"+backend)
			stdout, stderr := runClaude(t, claude, url, `Call the tool "`+tool+`" and tell me what it returns.`,
				// Tool search is 2.1.330's default behind any base URL;
				// set explicitly, so the test does not hang on that.
				[]string{"ENABLE_TOOL_SEARCH=true"}, "--mcp-config", cfg, "--strict-mcp-config")
			t.Logf("Claude Code transcript:\n%s", stdout)

			// Claude Code's transcript: ToolSearch, then the MCP tool,
			// whose output came back.
			var searched, calledTool, gotOutput bool
			for _, line := range strings.Split(stdout, "\n") {
				if !gjson.Valid(line) {
					continue
				}
				gjson.Get(line, "message.content").ForEach(func(_, b gjson.Result) bool {
					switch b.Get("type").Str {
					case "tool_use":
						searched = searched || b.Get("name").Str == "ToolSearch" && strings.Contains(b.Get("input.query").Str, tool)
						calledTool = calledTool || b.Get("name").Str == tool
					case "tool_result":
						gotOutput = gotOutput || strings.Contains(b.Get("content").Raw, mcpToolOutput)
					}
					return true
				})
			}
			if !searched || !calledTool || !gotOutput {
				t.Fatalf("Claude Code did not load and call the MCP tool (searched: %v, called: %v, output: %v):\n%s\nstderr:\n%s", searched, calledTool, gotOutput, stdout, stderr)
			}

			// The backend, turn by turn: the tools each request declared.
			w := backendWires[backend]
			journal := mockJournal(t, mockPort).Array()
			var before, after int
			for i, req := range journal {
				body := req.Get("body")
				for _, never := range []string{"mcp__tickets__list_tickets", "DeferredToolPlaceholder"} {
					if w.tool(body, never).Exists() {
						t.Errorf("request %d declares %s, which nobody loaded", i, never)
					}
				}
				loaded := w.tool(body, tool)
				switch {
				case !strings.Contains(body.Raw, w.call): // before any call: no search yet
					before++
					if loaded.Exists() {
						t.Errorf("request %d declares %s before ToolSearch loaded it", i, tool)
					}
					if !w.tool(body, "ToolSearch").Exists() {
						t.Errorf("request %d lacks ToolSearch", i)
					}
				case loaded.Exists():
					after++
					if typ := loaded.Get(w.schema + ".properties.number.type").Str; !strings.EqualFold(typ, "integer") {
						t.Errorf("request %d declares %s without its schema: %s", i, tool, loaded.Raw)
					}
					// ToolSearch's tool_reference result, as text the
					// model reads.
					if !w.toolResult(body, tool) {
						t.Errorf("request %d does not tell the model that ToolSearch loaded %s", i, tool)
					}
				}
			}
			if before == 0 || after < 2 {
				t.Fatalf("want requests before the search (%d) and at least two with the loaded tool (%d): the call, and the answer", before, after)
			}
			if last := journal[len(journal)-1]; !w.toolResult(last.Get("body"), mcpToolOutput) {
				t.Errorf("the last request does not carry the MCP tool's output as a tool result:\n%s", last.Raw)
			}
		})
	}
}

package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
)

// mcpServerEnv makes the test binary a stdio MCP server (TestMain), which
// an agent under test starts as its MCP server: no other program needed.
const mcpServerEnv = "LOUTER_E2E_MCP_SERVER"

// mcpTools are the tools the MCP server offers (tools/list).
var mcpTools = json.RawMessage(`[
 {"name":"lookup_ticket","description":"Look up a ticket of the louter project by its number.",
  "inputSchema":{"type":"object","properties":{"number":{"type":"integer","description":"The ticket number."}},"required":["number"]}},
 {"name":"list_tickets","description":"List the open tickets of the louter project.",
  "inputSchema":{"type":"object","properties":{}}}]`)

// mcpToolOutput is what every tools/call answers.
const mcpToolOutput = "ticket found: louter-mcp-ok"

// serveMCP answers MCP's JSON-RPC, one message per line (the stdio
// transport), until in ends: initialize, tools/list, tools/call and ping;
// notifications get no answer, other requests "method not found".
func serveMCP(in io.Reader, out io.Writer) {
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue // a notification (notifications/initialized), or noise
		}
		answer := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			answer["result"] = map[string]any{
				"protocolVersion": msg.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "louter-e2e", "version": "1.0.0"},
			}
		case "tools/list":
			answer["result"] = map[string]any{"tools": mcpTools}
		case "tools/call":
			answer["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": mcpToolOutput}}}
		case "ping":
			answer["result"] = map[string]any{}
		default:
			answer["error"] = map[string]any{"code": -32601, "message": "method not found: " + msg.Method}
		}
		if enc.Encode(answer) != nil {
			return
		}
	}
}

// runMCPServer is TestMain's branch for mcpServerEnv.
func runMCPServer() {
	serveMCP(os.Stdin, os.Stdout)
	os.Exit(0)
}

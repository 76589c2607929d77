package translate

// Tool names every backend accepts. OpenAI (Chat and Responses) and
// Anthropic take ^[a-zA-Z0-9_-]{1,64}$; Gemini takes [a-zA-Z0-9_.:-], at most
// 64, starting with a letter or an underscore. Clients are laxer: Claude
// Code's MCP tools (mcp__server__tool) run past 64 characters, and Gemini
// clients may use dots and colons. Such names are shortened for the backend
// by Dialect.BackendToolName (a hash suffix keeps them distinct and the
// same every turn) and restored in the answer by the dialect decoder.

// ToolNaming returns the Dialect whose BackendToolName, BackendToolID and
// ClientToolNames apply to a backend of protocol p configured with dialect d
// (nil when it has none). A backend's own dialect governs its names; any
// other backend gets its protocol's (ToolNamingCodec; by default the OpenAI
// and Anthropic limits), which keep the client's tool call ids. Protocols
// that parse tool calls out of the text (OpenAI Chat) leave that to the
// dialect decoder; for the others the result asks the decoder to parse
// nothing, so it only restores names.
func ToolNaming(p Protocol, d *Dialect) *Dialect {
	if d != nil {
		return d
	}
	if c, ok := codecAs[ToolNamingCodec](p); ok {
		return c.BackendToolNaming()
	}
	return &Dialect{KeepToolIDs: true, ToolCalls: ToolCallsNative, Reasoning: ReasoningFormatFields}
}

// validToolName reports whether the backend accepts name as it is.
func (d *Dialect) validToolName(name string) bool {
	if d == nil || !d.geminiNames {
		return validToolToken(name)
	}
	if name == "" || !geminiNameStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !toolTokenByte(c) && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

func geminiNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// WithBackendToolNames returns req with every tool name the backend would
// refuse replaced by d.BackendToolName's: the declared tools, the tool
// choice, the calls and results of the history. req is not modified: when
// a name changes, the result is a copy sharing everything else; when none
// does, it is req itself.
func WithBackendToolNames(req *Request, d *Dialect) *Request {
	if d.ClientToolNames(req) == nil && !toolChoiceRenamed(req.ToolChoice, d) && !resultRenamed(req, d) {
		return req
	}
	out := *req
	out.Tools = make([]Tool, len(req.Tools))
	for i, t := range req.Tools {
		t.Name = d.BackendToolName(t.Name)
		out.Tools[i] = t
	}
	if tc := req.ToolChoice; tc != nil {
		c := *tc
		if c.Name != "" {
			c.Name = d.BackendToolName(c.Name)
		}
		if len(c.Allowed) > 0 {
			c.Allowed = make([]string, len(tc.Allowed))
			for i, n := range tc.Allowed {
				c.Allowed[i] = d.BackendToolName(n)
			}
		}
		out.ToolChoice = &c
	}
	out.Messages = make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		if messageRenamed(&m, d) {
			parts := make([]Part, len(m.Parts))
			for j, p := range m.Parts {
				if p.ToolCall != nil {
					tc := *p.ToolCall
					tc.Name = d.BackendToolName(tc.Name)
					p.ToolCall = &tc
				}
				if p.ToolResult != nil && p.ToolResult.Name != "" {
					tr := *p.ToolResult
					tr.Name = d.BackendToolName(tr.Name)
					p.ToolResult = &tr
				}
				parts[j] = p
			}
			m.Parts = parts
		}
		out.Messages[i] = m
	}
	return &out
}

func toolChoiceRenamed(tc *ToolChoice, d *Dialect) bool {
	if tc == nil {
		return false
	}
	if tc.Name != "" && d.BackendToolName(tc.Name) != tc.Name {
		return true
	}
	for _, n := range tc.Allowed {
		if d.BackendToolName(n) != n {
			return true
		}
	}
	return false
}

func messageRenamed(m *Message, d *Dialect) bool {
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.ToolCall != nil && d.BackendToolName(p.ToolCall.Name) != p.ToolCall.Name {
			return true
		}
		if p.ToolResult != nil && p.ToolResult.Name != "" && d.BackendToolName(p.ToolResult.Name) != p.ToolResult.Name {
			return true
		}
	}
	return false
}

func resultRenamed(req *Request, d *Dialect) bool {
	for i := range req.Messages {
		if messageRenamed(&req.Messages[i], d) {
			return true
		}
	}
	return false
}

package translate

import (
	"maps"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Claude Code changes the tools of a conversation as it goes: tool search
// and MCP servers that connect or disconnect mid-session. On the Messages
// API the tools in force at a point of the conversation are
//
//   - every tools[] entry without "defer_loading": true, from the start;
//   - plus a deferred entry once a tool_result names it in a
//     {"type":"tool_reference","tool_name":...} block (Claude Code's
//     ToolSearch answers so);
//   - plus or minus what a role:"system" message's tool_addition and
//     tool_removal blocks say, each holding a
//     {"type":"tool_reference","name":...} to a tools[] entry or, for an
//     addition, a {"type":"tool_definition","definition":{...}} defining
//     the tool inline (betas mid-conversation-tool-changes-2026-07-01,
//     inline-tools-2026-09-15).
//
// The other protocols have one tool list per request and no change of it
// inside the conversation. So a translated request gets the tools in force
// after its last message, which are the ones the model may call on this
// turn, exactly as on Anthropic; and each change is rendered as text where
// it happened ("Tool X is now available.", "Loaded tools: a, b"), so the
// model still sees why its tools changed. A tool removed after it was used
// keeps its history: only new calls are refused, by leaving it out.
//
// The Anthropic codec does that as a ToolChangeCodec: TranslateRequest
// calls it once the request is decoded, so DecodeRequest itself stays a
// plain reading of the body (an Anthropic backend, which takes the client's
// body as it is, needs none of this). The decoder notes, as it reads, what
// this needs (toolChangeNotes): the deferred tools, the names of the
// server tools it leaves out, and where the messages that may change tools
// lie; only those messages are read again, and only when the request
// changes tools at all. (Claude Code declares a deferred tool in every
// request: reading its whole ~100 KB body again cost more than decoding
// it.) What it translates is taken off Request.Dropped, where the decoder
// put the blocks it did not know; what does not follow the grammar above
// is the client protocol's 400 naming it.

// ToolChangeCodec is implemented by a codec whose requests may change the
// tools in force mid-conversation. ApplyToolChanges rewrites req, decoded
// from body by the same codec, into the equivalent request with one tool
// list, for a backend of another protocol; the error is a 400 for a change
// the protocol does not allow. req must be the Request the codec's
// DecodeRequest returned for body (or a copy of it): the decoder notes on
// it where the changes are, and a Request built otherwise is left as it
// is. The changes are applied once; a second call changes nothing.
type ToolChangeCodec interface {
	ApplyToolChanges(body []byte, req *Request) *Error
}

// ApplyToolChanges implements ToolChangeCodec.
// It also refuses a request that forces a server tool no other backend
// can run (anthropic_server_tools.go).
func (anthropicCodec) ApplyToolChanges(body []byte, req *Request) *Error {
	if e := checkForcedServerTool(body, req); e != nil {
		return e
	}
	return applyToolChanges(body, req)
}

// toolChangeNotes is what a decoder noted for ApplyToolChanges while it
// read the request (Request.toolChanges). It holds offsets into the body,
// not views of it, so a request that keeps its notes keeps no body alive.
type toolChangeNotes struct {
	// changes is set when the request changes tools: a tools[] entry has
	// a defer_loading member, or a block of type tool_addition,
	// tool_removal or tool_reference was read.
	changes bool
	// serverTools are the names of the tools[] entries the decoder left
	// out (Anthropic server tools): names a change may refer to.
	serverTools []string
	// messages are the messages whose blocks may change tools, in order:
	// every role:"system" message with an array of blocks, and every
	// role:"user" message with a tool_reference block inside a tool_result.
	messages []toolChangeMessage
}

// toolChangeMessage is one message toolChangeNotes lists: its index in
// messages[], its role, and where its content array lies in the body.
type toolChangeMessage struct {
	index      int
	role       Role
	start, end int
}

// The decoder's drop entries that applyToolChanges makes untrue.
var toolChangeDrops = map[string]bool{
	"messages.content: block type tool_addition is not translated":                      true,
	"messages.content: block type tool_removal is not translated":                       true,
	"messages.content.tool_result.content: block type tool_reference is not translated": true,
	"tools.defer_loading: tool search is Anthropic-only; the tool is sent up front":     true,
}

// applyToolChanges sets req.Tools to the tools in force after the last
// message of the Anthropic request body and renders each change as text
// at its place; see above.
func applyToolChanges(body []byte, req *Request) *Error {
	tc := req.toolChanges
	req.toolChanges = nil // applied once
	if tc == nil || !tc.changes {
		return nil
	}
	declared := map[string]bool{}
	inForce := map[string]bool{}
	for _, t := range req.Tools {
		declared[t.Name] = true
		if !t.deferred {
			inForce[t.Name] = true
		}
	}
	for _, name := range tc.serverTools {
		declared[name] = true
	}
	known := maps.Clone(declared) // declared, and defined inline so far
	var inline []Tool             // tools defined in tool_addition blocks, in order
	for _, nm := range tc.messages {
		i := nm.index
		if i >= len(req.Messages) || nm.end > len(body) || nm.start >= nm.end {
			return nil // not the body req was decoded from: leave req alone
		}
		content := gjson.ParseBytes(body[nm.start:nm.end])
		if !content.IsArray() {
			return nil
		}
		switch nm.role {
		case RoleSystem:
			var notes []Part
			for j, b := range content.Array() {
				at := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j)
				note, tool, err := systemToolChange(b, at, known, inForce)
				if err != nil {
					return err
				}
				if tool != nil {
					inline = append(inline, *tool)
					known[tool.Name] = true // a later tool_removal may name it
				}
				if note != "" {
					notes = append(notes, Part{Type: PartText, Text: note})
				}
			}
			if len(notes) > 0 {
				req.Messages[i].Parts = append(append([]Part(nil), req.Messages[i].Parts...), notes...)
			}
		case RoleUser:
			for j, b := range content.Array() {
				if b.Get("type").String() != "tool_result" || !b.Get("content").IsArray() {
					continue
				}
				var loaded []string
				for k, c := range b.Get("content").Array() {
					if c.Get("type").String() != "tool_reference" {
						continue
					}
					at := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j) + ".content." + strconv.Itoa(k) + ".tool_name"
					name := c.Get("tool_name").String()
					if name == "" {
						return &Error{Status: 400, Kind: ErrInvalidRequest, Param: at, Message: at + ": a tool_reference needs a tool_name"}
					}
					// A name tools[] does not declare loads nothing, but
					// the model is still told what the result said.
					if declared[name] {
						inForce[name] = true
					}
					loaded = append(loaded, name)
				}
				if len(loaded) > 0 {
					noteLoaded(req.Messages[i].Parts, b.Get("tool_use_id").String(), loaded)
				}
			}
		}
	}
	settleToolList(req, declared, inForce, inline)
	return nil
}

// systemToolChange applies one block of a role:"system" message to
// inForce and returns the note to put in its place, and the tool an
// inline definition adds; known holds the names a reference may name. A
// block of another type than text,
// tool_addition and tool_removal is a 400, as Anthropic answers it.
func systemToolChange(b gjson.Result, at string, known, inForce map[string]bool) (note string, added *Tool, _ *Error) {
	bad := func(param, msg string) *Error {
		return &Error{Status: 400, Kind: ErrInvalidRequest, Param: param, Message: param + ": " + msg}
	}
	typ := b.Get("type").String()
	switch typ {
	case "text":
		return "", nil, nil
	case "tool_addition", "tool_removal":
	default:
		return "", nil, bad(at+".type", "a system message holds text, tool_addition and tool_removal blocks, not "+strconv.Quote(typ))
	}
	tool := b.Get("tool")
	switch tt := tool.Get("type").String(); {
	case tt == "tool_reference":
		name := tool.Get("name").String()
		if !known[name] {
			return "", nil, bad(at+".tool.name", strconv.Quote(name)+" is not in tools")
		}
		if typ == "tool_removal" {
			delete(inForce, name)
			return "Tool " + name + " was removed and can no longer be called.", nil, nil
		}
		inForce[name] = true
		return "Tool " + name + " is now available.", nil, nil
	case tt == "tool_definition" && typ == "tool_addition":
		def := tool.Get("definition")
		name := def.Get("name").String()
		if name == "" {
			return "", nil, bad(at+".tool.definition.name", "a tool definition needs a name")
		}
		t := Tool{Name: name, Description: def.Get("description").String()}
		if s := def.Get("input_schema"); s.Exists() {
			t.Schema = []byte(s.Raw)
		}
		inForce[name] = true
		note = "Tool " + name + " is now available."
		return note, &t, nil
	default:
		return "", nil, bad(at+".tool.type", typ+" takes a tool_reference"+map[bool]string{true: " or a tool_definition", false: ""}[typ == "tool_addition"]+", not "+strconv.Quote(tt))
	}
}

// noteLoaded adds "Loaded tools: a, b" to the result of call id among
// parts, where the tool_reference blocks were.
func noteLoaded(parts []Part, id string, names []string) {
	for i := range parts {
		if tr := parts[i].ToolResult; parts[i].Type == PartToolResult && tr != nil && tr.CallID == id {
			tr.Content = append(append([]Part(nil), tr.Content...), Part{Type: PartText, Text: "Loaded tools: " + strings.Join(names, ", ")})
			return
		}
	}
}

// settleToolList leaves in req.Tools the tools in force at the last turn:
// those of tools[] in force, in their order, then the tools defined inline
// (tool_addition) in force and not declared in tools[], each once. It
// takes the tool-change blocks out of the dropped fields, since they were
// translated, not dropped.
func settleToolList(req *Request, declared, inForce map[string]bool, inline []Tool) {
	tools := req.Tools[:0:0]
	for _, t := range req.Tools {
		if inForce[t.Name] {
			tools = append(tools, t)
		}
	}
	for _, t := range inline {
		if inForce[t.Name] && !declared[t.Name] {
			tools = append(tools, t)
			declared[t.Name] = true // a tool defined twice is sent once
		}
	}
	req.Tools = tools
	kept := req.Dropped[:0:0]
	for _, d := range req.Dropped {
		if !toolChangeDrops[d] {
			kept = append(kept, d)
		}
	}
	req.Dropped = kept
}

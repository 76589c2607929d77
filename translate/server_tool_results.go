package translate

import (
	"strconv"
	"strings"
)

// What a backend reports about the server tools it ran (server_tools.go)
// travels to the client as two kinds of parts, PartServerToolCall and
// PartServerToolResult, and in a stream as the blocks of the same names
// (event.go). The protocols report it each in their own shape:
//
//	                Anthropic                 Responses                  Gemini
//	the call        server_tool_use block     web_search_call item       groundingMetadata
//	                {id,name,input}           {id,action{query|url}}     .webSearchQueries
//	the result      web_search_tool_result,   the same item's            groundingMetadata
//	                web_fetch_tool_result     action.sources             .groundingChunks
//	where           before the text           before the text            after the text
//	encrypted       encrypted_content         (none)                     (none)
//
// A decoder turns its shape into a call and a result; an encoder turns
// them into its own. The results' encrypted content is Anthropic's: only
// an Anthropic client gets it (to hand back), and only an Anthropic
// backend is sent it again. Every block travels the moment it arrives,
// so a Gemini backend's search reaches an Anthropic client after the
// text, where Anthropic's own would come before it.
//
// Next turn, the client sends the calls and results back in its history.
// A backend gets them in its own shape only when they are its own (the
// call id says whose: serverToolOrigin): an id or encrypted content
// another provider made means nothing to it, and Anthropic refuses a
// web_search_tool_result whose encrypted content it did not write. Any
// other backend gets them as text in the assistant's turn (serverToolText):
// the model keeps what it searched for and found, which is what it needs
// to go on, and nothing opaque crosses providers.

// ServerToolUse is a server tool call the model made (PartServerToolCall)
// or its result (PartServerToolResult).
type ServerToolUse struct {
	// ID is the call's id; a result's is the id of the call it answers.
	ID   string
	Kind ServerToolKind
	// Query is a web search's query, URL a fetch's (or a Responses
	// open_page action's) address.
	Query, URL string

	// Results are what a result found: the pages of a search, the page
	// of a fetch.
	Results []WebResult
	// ErrorCode is set when the tool failed (Anthropic's error_code:
	// max_uses_exceeded, too_many_requests, unavailable, …).
	ErrorCode string
}

// WebResult is one page a server tool found or fetched.
type WebResult struct {
	URL, Title string
	// PageAge is how old the page is, as the backend said it ("2 days
	// ago", a date); RetrievedAt when a fetch got it.
	PageAge, RetrievedAt string
	// Text is a fetched page's text (Anthropic web_fetch).
	Text string
	// Encrypted is Anthropic's encrypted_content, which only Anthropic
	// reads; empty from any other backend.
	Encrypted string
}

// ServerTool emits a whole server tool call or result block (event.go):
// its start, carrying u, and its stop.
func (e *Emitter) ServerTool(dst []Event, t BlockType, u *ServerToolUse) []Event {
	if e.done || u == nil {
		return dst
	}
	dst = e.openBlock(dst, t, u.ID, string(u.Kind), "")
	dst[len(dst)-1].Server = u
	return e.CloseBlock(dst)
}

// serverToolBlock is the block type of a server tool part, 0 for any other.
func serverToolBlock(t PartType) BlockType {
	switch t {
	case PartServerToolCall:
		return BlockServerToolCall
	case PartServerToolResult:
		return BlockServerToolResult
	}
	return 0
}

// serverToolPart is the part type of a server tool block, "" for any other.
func serverToolPart(t BlockType) PartType {
	switch t {
	case BlockServerToolCall:
		return PartServerToolCall
	case BlockServerToolResult:
		return PartServerToolResult
	}
	return ""
}

// serverToolOrigin reports whether a server tool call id was made by the
// provider whose ids start with prefix: what the Anthropic and Responses
// request encoders ask before they hand a call back in its own shape.
func serverToolOrigin(id, prefix string) bool { return strings.HasPrefix(id, prefix) }

// serverToolText is the text a backend without the client's server tool
// blocks gets in their place, in the assistant's turn: what was searched
// or fetched, and what came back, without anything opaque.
func serverToolText(b *strings.Builder, p *Part) {
	u := p.Server
	if u == nil {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	switch p.Type {
	case PartServerToolCall:
		switch {
		case u.Query != "":
			b.WriteString("[" + string(u.Kind) + " query: " + u.Query + "]")
		case u.URL != "":
			b.WriteString("[" + string(u.Kind) + ": " + u.URL + "]")
		default:
			b.WriteString("[" + string(u.Kind) + "]")
		}
	case PartServerToolResult:
		if u.ErrorCode != "" {
			b.WriteString("[" + string(u.Kind) + " failed: " + u.ErrorCode + "]")
			return
		}
		b.WriteString("[" + string(u.Kind) + " results]")
		for i, r := range u.Results {
			b.WriteString("\n" + strconv.Itoa(i+1) + ". ")
			if r.Title != "" {
				b.WriteString(r.Title + " ")
			}
			b.WriteString("<" + r.URL + ">")
			if r.PageAge != "" {
				b.WriteString(" (" + r.PageAge + ")")
			}
			if r.Text != "" {
				b.WriteString("\n" + r.Text)
			}
		}
	}
}

// ServerToolHistoryCodec is a codec whose backends take server tool calls
// and results back in the history, in their own shape.
//
// Default: none; every such part goes to the backend as text.
type ServerToolHistoryCodec interface {
	// KeepsServerTool reports whether the server tool part parts[i] of
	// an assistant turn goes to the backend as it is: only what the
	// backend's provider made itself, its call and result together.
	KeepsServerTool(parts []Part, i int) bool
}

// serverToolHistory returns req with the server tool parts of its
// assistant turns that a backend of protocol backend does not keep
// (ServerToolHistoryCodec) turned to text; req itself when there are none.
// req is not modified: a copy with new messages is returned.
func serverToolHistory(req *Request, backend Protocol) *Request {
	keep := func([]Part, int) bool { return false }
	if c, ok := codecAs[ServerToolHistoryCodec](backend); ok {
		keep = c.KeepsServerTool
	}
	msgs := withServerToolsAsText(req.Messages, keep)
	if len(msgs) == 0 || &msgs[0] == &req.Messages[0] {
		return req
	}
	out := *req
	out.Messages = msgs
	return &out
}

// serverToolsAsText replaces, in parts, each run of server tool parts
// keep rejects with one text part (serverToolText). It returns parts
// itself when keep rejects none.
func serverToolsAsText(parts []Part, keep func([]Part, int) bool) []Part {
	n := 0
	for i := range parts {
		if serverToolBlock(parts[i].Type) != 0 && !keep(parts, i) {
			n++
		}
	}
	if n == 0 {
		return parts
	}
	out := make([]Part, 0, len(parts))
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, Part{Type: PartText, Text: text.String()})
			text.Reset()
		}
	}
	for i := range parts {
		p := &parts[i]
		if serverToolBlock(p.Type) != 0 && !keep(parts, i) {
			serverToolText(&text, p)
			continue
		}
		flush()
		out = append(out, *p)
	}
	flush()
	return out
}

// withServerToolsAsText returns msgs with the server tool parts of the
// assistant turns that keep rejects turned to text, sharing what need not
// change; msgs itself when nothing changes.
func withServerToolsAsText(msgs []Message, keep func([]Part, int) bool) []Message {
	var out []Message
	for i := range msgs {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		parts := serverToolsAsText(msgs[i].Parts, keep)
		if len(parts) == 0 || &parts[0] == &msgs[i].Parts[0] {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		out[i].Parts = parts
	}
	if out == nil {
		return msgs
	}
	return out
}

// ServerToolResultCodec is a codec whose clients are shown the server
// tool calls and results of an answer.
//
// Default: none; the encoders leave them out, and the caller records the
// drop (ServerToolResultsDrop).
type ServerToolResultCodec interface {
	// ShowsServerToolResults reports whether the encoders write them.
	ShowsServerToolResults() bool
}

// ShowsServerToolResults reports whether a client of protocol p is shown
// the server tool calls and results of an answer.
func ShowsServerToolResults(p Protocol) bool {
	c, ok := codecAs[ServerToolResultCodec](p)
	return ok && c.ShowsServerToolResults()
}

// ServerToolResultsDrop is the Request.Dropped entry of an answer whose
// server tool calls and results the client's protocol could not show.
const ServerToolResultsDrop = "server_tool_results: the client's protocol cannot show the searches and fetches the backend ran"

// ShowsServerToolResults implements ServerToolResultCodec.
func (anthropicCodec) ShowsServerToolResults() bool { return true }

// ShowsServerToolResults implements ServerToolResultCodec.
func (openAIResponsesCodec) ShowsServerToolResults() bool { return true }

// ShowsServerToolResults implements ServerToolResultCodec.
func (geminiCodec) ShowsServerToolResults() bool { return true }

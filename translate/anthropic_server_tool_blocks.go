package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Anthropic reports a web search or fetch it ran as two content blocks
// before the text that uses them (server_tool_results.go):
//
//	{"type":"server_tool_use","id":"srvtoolu_…","name":"web_search","input":{"query":"…"}}
//	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_…","content":[
//	  {"type":"web_search_result","url":"…","title":"…","encrypted_content":"…","page_age":"…"}]}
//	{"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_…","content":{"type":"web_fetch_result",
//	  "url":"…","retrieved_at":"…","content":{"type":"document","source":{"type":"text",
//	  "media_type":"text/plain","data":"…"},"title":"…"}}}
//
// A failed tool's content is {"type":"web_search_tool_result_error",
// "error_code":"…"} (web_fetch_tool_error likewise). In a stream the
// server_tool_use block's input comes as input_json_delta fragments and a
// result block whole in its content_block_start. Server tools louter does
// not translate (code execution, tool search, …) are skipped.

// anthServerToolIDPrefix starts the ids of Anthropic's server tool calls:
// a call with another id was made by another provider, and is not handed
// back to Anthropic as a block (serverToolOrigin).
const anthServerToolIDPrefix = "srvtoolu_"

// anthServerToolKind is the kind of an Anthropic server tool name, "" for
// one louter does not translate.
func anthServerToolKind(name string) ServerToolKind {
	switch name {
	case string(ServerWebSearch):
		return ServerWebSearch
	case string(ServerWebFetch):
		return ServerWebFetch
	}
	return ""
}

// anthIsServerToolBlock reports whether typ is a server tool block type
// louter translates.
func anthIsServerToolBlock(typ string) bool {
	switch typ {
	case "server_tool_use", "web_search_tool_result", "web_fetch_tool_result":
		return true
	}
	return false
}

// anthServerToolPart decodes a server tool block; ok is false for any
// other block and for a server tool louter does not translate.
func anthServerToolPart(b gjson.Result) (Part, bool) {
	switch b.Get("type").Str {
	case "server_tool_use":
		kind := anthServerToolKind(b.Get("name").Str)
		if kind == "" {
			return Part{}, false
		}
		u := &ServerToolUse{ID: b.Get("id").Str, Kind: kind}
		anthServerToolInput(u, b.Get("input"))
		return Part{Type: PartServerToolCall, Server: u}, true
	case "web_search_tool_result":
		u := &ServerToolUse{ID: b.Get("tool_use_id").Str, Kind: ServerWebSearch}
		c := b.Get("content")
		if !c.IsArray() {
			u.ErrorCode = anthServerToolError(c)
		}
		c.ForEach(func(_, r gjson.Result) bool {
			if r.Get("type").Str == "web_search_result" {
				u.Results = append(u.Results, WebResult{URL: r.Get("url").Str, Title: r.Get("title").Str,
					PageAge: r.Get("page_age").Str, Encrypted: r.Get("encrypted_content").Str})
			}
			return true
		})
		return Part{Type: PartServerToolResult, Server: u}, true
	case "web_fetch_tool_result":
		u := &ServerToolUse{ID: b.Get("tool_use_id").Str, Kind: ServerWebFetch}
		c := b.Get("content")
		if c.Get("type").Str != "web_fetch_result" {
			u.ErrorCode = anthServerToolError(c)
			return Part{Type: PartServerToolResult, Server: u}, true
		}
		doc := c.Get("content")
		r := WebResult{URL: c.Get("url").Str, RetrievedAt: c.Get("retrieved_at").Str, Title: doc.Get("title").Str}
		if doc.Get("source.type").Str == "text" {
			r.Text = doc.Get("source.data").Str
		}
		u.Results = []WebResult{r}
		return Part{Type: PartServerToolResult, Server: u}, true
	}
	return Part{}, false
}

// anthServerToolError is the error code of a failed tool's content.
func anthServerToolError(c gjson.Result) string {
	if code := c.Get("error_code").Str; code != "" {
		return code
	}
	return "unavailable"
}

// anthServerToolInput reads a server_tool_use input object.
func anthServerToolInput(u *ServerToolUse, in gjson.Result) {
	u.Query, u.URL = in.Get("query").Str, in.Get("url").Str
}

// appendAnthServerToolBlock appends a server tool part as its Anthropic
// block.
func appendAnthServerToolBlock(b []byte, p *Part) []byte {
	u := p.Server
	if u == nil {
		return b
	}
	if p.Type == PartServerToolCall {
		b = append(b, `{"type":"server_tool_use","id":`...)
		b = appendJSONString(b, u.ID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, string(u.Kind))
		b = append(b, `,"input":`...)
		b = appendAnthServerToolInput(b, u)
		return append(b, '}')
	}
	b = append(b, `{"type":"web_`...)
	b = append(b, strings.TrimPrefix(string(u.Kind), "web_")...)
	b = append(b, `_tool_result","tool_use_id":`...)
	b = appendJSONString(b, u.ID)
	b = append(b, `,"content":`...)
	switch {
	case u.ErrorCode != "":
		b = append(b, `{"type":"`...)
		if u.Kind == ServerWebFetch {
			b = append(b, `web_fetch_tool_error`...)
		} else {
			b = append(b, `web_search_tool_result_error`...)
		}
		b = append(b, `","error_code":`...)
		b = appendJSONString(b, u.ErrorCode)
		b = append(b, '}')
	case u.Kind == ServerWebFetch:
		var r WebResult
		if len(u.Results) > 0 {
			r = u.Results[0]
		}
		b = append(b, `{"type":"web_fetch_result","url":`...)
		b = appendJSONString(b, r.URL)
		if r.RetrievedAt != "" {
			b = append(b, `,"retrieved_at":`...)
			b = appendJSONString(b, r.RetrievedAt)
		}
		b = append(b, `,"content":{"type":"document","source":{"type":"text","media_type":"text/plain","data":`...)
		b = appendJSONString(b, r.Text)
		b = append(b, `},"title":`...)
		b = appendJSONString(b, r.Title)
		b = append(b, "}}"...)
	default:
		b = append(b, '[')
		for i := range u.Results {
			r := &u.Results[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"web_search_result","url":`...)
			b = appendJSONString(b, r.URL)
			b = append(b, `,"title":`...)
			b = appendJSONString(b, r.Title)
			// Anthropic's own encrypted content only: other backends
			// have none, and the client hands back what it got.
			b = append(b, `,"encrypted_content":`...)
			b = appendJSONString(b, r.Encrypted)
			if r.PageAge != "" {
				b = append(b, `,"page_age":`...)
				b = appendJSONString(b, r.PageAge)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendAnthServerToolInput appends a server_tool_use input object.
func appendAnthServerToolInput(b []byte, u *ServerToolUse) []byte {
	if u.Kind == ServerWebFetch || u.Query == "" && u.URL != "" {
		b = append(b, `{"url":`...)
		b = appendJSONString(b, u.URL)
		return append(b, '}')
	}
	b = append(b, `{"query":`...)
	b = appendJSONString(b, u.Query)
	return append(b, '}')
}

// KeepsServerTool implements ServerToolHistoryCodec: only Anthropic's own
// calls go back as blocks, and only with a result that still carries the
// encrypted content Anthropic wrote (a client of another protocol could
// not keep it): Anthropic refuses a call without its result and a result
// without its encrypted content. The others become text.
func (anthropicCodec) KeepsServerTool(parts []Part, i int) bool {
	u := parts[i].Server
	if u == nil || !serverToolOrigin(u.ID, anthServerToolIDPrefix) {
		return false
	}
	for j := range parts {
		r := parts[j].Server
		if parts[j].Type != PartServerToolResult || r == nil || r.ID != u.ID {
			continue
		}
		if r.Kind == ServerWebSearch && r.ErrorCode == "" {
			for k := range r.Results {
				if r.Results[k].Encrypted == "" {
					return false
				}
			}
		}
		return parts[i].Type == PartServerToolResult || j > i
	}
	return false
}

// anthServerToolStream is the state of the Anthropic stream decoder for
// a server_tool_use block, whose input arrives in fragments: the block is
// emitted whole at its content_block_stop.
type anthServerToolStream struct {
	index int
	use   *ServerToolUse
	input []byte
}

// serverToolStart handles the content_block_start of a server tool block;
// ok is false for any other block.
func (d *anthropicStreamDecoder) serverToolStart(dst []Event, index int, cb gjson.Result) (_ []Event, ok bool) {
	p, ok := anthServerToolPart(cb)
	if !ok {
		return dst, false
	}
	if p.Type == PartServerToolResult {
		d.skipped = append(d.skipped, index) // its stop: the block went out whole
		return d.em.ServerTool(dst, BlockServerToolResult, p.Server), true
	}
	d.srv = &anthServerToolStream{index: index, use: p.Server}
	if in := cb.Get("input"); in.IsObject() && !anthEmptyObject(in) {
		d.srv.input = append(d.srv.input, in.Raw...)
	}
	return dst, true
}

// serverToolEvent handles a delta or stop of the open server_tool_use
// block; ok is false for any other event.
func (d *anthropicStreamDecoder) serverToolEvent(dst []Event, typ string, ev gjson.Result) (_ []Event, ok bool) {
	s := d.srv
	if s == nil || int(ev.Get("index").Int()) != s.index {
		return dst, false
	}
	switch typ {
	case "content_block_delta":
		if ev.Get("delta.type").Str == "input_json_delta" {
			s.input = append(s.input, ev.Get("delta.partial_json").Str...)
		}
		return dst, true
	case "content_block_stop":
		d.srv = nil
		if len(s.input) > 0 {
			anthServerToolInput(s.use, gjson.ParseBytes(s.input))
		}
		return d.em.ServerTool(dst, BlockServerToolCall, s.use), true
	}
	return dst, false
}

// serverToolBlockStart writes a server tool block whole: a call's start
// with an empty input, the input in one input_json_delta (as Anthropic
// streams it), or a result's start with its content. The stop follows
// with the IR block's stop.
func (s *anthropicStreamEncoder) serverToolBlockStart(w FrameWriter, ev *Event) {
	if ev.Server == nil {
		return
	}
	p := Part{Type: serverToolPart(ev.Block), Server: ev.Server}
	b := append(s.buf[:0], `{"type":"content_block_start","index":`...)
	b = appendJSONInt(b, int64(s.next))
	b = append(b, `,"content_block":`...)
	if p.Type == PartServerToolCall {
		b = append(b, `{"type":"server_tool_use","id":`...)
		b = appendJSONString(b, ev.Server.ID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, string(ev.Server.Kind))
		b = append(b, `,"input":{}}`...)
	} else {
		b = appendAnthServerToolBlock(b, &p)
	}
	b = append(b, '}')
	s.openBlock(ev.Index)
	w.WriteFrame("content_block_start", b)
	if p.Type == PartServerToolCall {
		b = append(b[:0], `{"type":"content_block_delta","index":`...)
		b = appendJSONInt(b, int64(s.openOut))
		b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
		b = appendJSONString(b, string(appendAnthServerToolInput(nil, ev.Server)))
		b = append(b, "}}"...)
		w.WriteFrame("content_block_delta", b)
	}
	s.buf = b
}

// serverToolBlock decodes the server tool block of a client's history
// that spans d.body[start:end]. A server tool louter does not translate
// is left out, recorded as before.
func (d *anthRequestDecoder) serverToolBlock(parts []Part, start, end int) []Part {
	b := d.body[start:end]
	p, ok := anthServerToolPart(gjson.ParseBytes(b))
	if !ok {
		d.req.Drop("messages.content", "block type server_tool_use is not translated")
		return parts
	}
	return append(parts, p)
}

// anthCitations reads a text block's citations of web search results;
// those of documents (char_location, …) cite what the client sent and are
// not translated.
func anthCitations(v gjson.Result) []Citation {
	var out []Citation
	v.ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").Str == "web_search_result_location" {
			out = append(out, anthCitation(c))
		}
		return true
	})
	return out
}

func anthCitation(c gjson.Result) Citation {
	return Citation{URL: c.Get("url").Str, Title: c.Get("title").Str, CitedText: c.Get("cited_text").Str, EncryptedIndex: c.Get("encrypted_index").Str}
}

// appendAnthCitation appends c, a citation of text, as a
// web_search_result_location.
func appendAnthCitation(b []byte, c *Citation, text string) []byte {
	b = append(b, `{"type":"web_search_result_location","url":`...)
	b = appendJSONString(b, c.URL)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, c.Title)
	b = append(b, `,"cited_text":`...)
	b = appendJSONString(b, c.citedText(text))
	b = append(b, `,"encrypted_index":`...)
	b = appendJSONString(b, c.EncryptedIndex)
	return append(b, '}')
}

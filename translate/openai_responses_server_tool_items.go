package translate

import "github.com/tidwall/gjson"

// The Responses API reports a web search it ran as one output item, the
// call and its result together (server_tool_results.go):
//
//	{"type":"web_search_call","id":"ws_…","status":"completed",
//	 "action":{"type":"search","query":"…","sources":[{"type":"url","url":"…"}]}}
//
// action is also {"type":"open_page","url":"…"} or {"type":"find",
// "url":"…","pattern":"…"}: reading a page, which the IR holds as a fetch.
// sources come only when the request includes
// web_search_call.action.sources; there are no titles and no encrypted
// content. In a stream the item comes as output_item.added,
// web_search_call.in_progress, .searching, .completed and
// output_item.done. The IR's call and result become one item again: the
// encoder opens the item at the call and completes it at its result.

// respServerToolIDPrefix starts the ids of OpenAI's web_search_call items:
// a call with another id was made by another provider, and is not handed
// back to OpenAI as an item (serverToolOrigin).
const respServerToolIDPrefix = "ws_"

// respServerToolParts decodes a web_search_call item into a call and, once
// the search ran, its result.
func respServerToolParts(it gjson.Result) (call Part, result *Part) {
	a := it.Get("action")
	u := &ServerToolUse{ID: it.Get("id").Str, Kind: ServerWebSearch}
	if u.ID == "" {
		u.ID = newID(respServerToolIDPrefix)
	}
	switch a.Get("type").Str {
	case "open_page", "find":
		u.Kind, u.URL = ServerWebFetch, a.Get("url").Str
	default:
		u.Query = a.Get("query").Str
		if u.Query == "" {
			u.Query = a.Get("queries.0").Str
		}
	}
	call = Part{Type: PartServerToolCall, Server: u}
	r := &ServerToolUse{ID: u.ID, Kind: u.Kind}
	switch it.Get("status").Str {
	case "completed":
	case "failed":
		r.ErrorCode = "unavailable"
	default:
		return call, nil // in progress: no result yet
	}
	a.Get("sources").ForEach(func(_, s gjson.Result) bool {
		if url := s.Get("url").Str; url != "" {
			r.Results = append(r.Results, WebResult{URL: url, Title: s.Get("title").Str})
		}
		return true
	})
	if u.Kind == ServerWebFetch && len(r.Results) == 0 && u.URL != "" {
		r.Results = []WebResult{{URL: u.URL}}
	}
	return call, &Part{Type: PartServerToolResult, Server: r}
}

// respAppendWebSearchItem appends a web_search_call item for call and its
// result (nil: none came). status is the item's, "" for the one the result
// says.
func respAppendWebSearchItem(b []byte, status string, call, result *ServerToolUse) []byte {
	if status == "" {
		status = "completed"
		if result != nil && result.ErrorCode != "" {
			status = "failed"
		}
	}
	b = append(b, `{"type":"web_search_call","id":`...)
	b = appendJSONString(b, call.ID)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, status)
	if call.Kind == ServerWebFetch {
		b = append(b, `,"action":{"type":"open_page","url":`...)
		b = appendJSONString(b, call.URL)
		return append(b, "}}"...)
	}
	b = append(b, `,"action":{"type":"search","query":`...)
	b = appendJSONString(b, call.Query)
	if result != nil && len(result.Results) > 0 {
		b = append(b, `,"sources":[`...)
		for i := range result.Results {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"url","url":`...)
			b = appendJSONString(b, result.Results[i].URL)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// respServerToolResultOf returns the result of call among parts, nil when
// none.
func respServerToolResultOf(parts []Part, call *ServerToolUse) *ServerToolUse {
	for i := range parts {
		if p := &parts[i]; p.Type == PartServerToolResult && p.Server != nil && p.Server.ID == call.ID {
			return p.Server
		}
	}
	return nil
}

// respAppendServerToolItems appends, for the server tool part parts[i],
// its web_search_call item: a call with its result, found later in parts;
// a result whose call came earlier was written with it.
func respAppendServerToolItems(out []byte, parts []Part, i int) []byte {
	p := &parts[i]
	if p.Server == nil {
		return out
	}
	if p.Type == PartServerToolResult {
		for j := 0; j < i; j++ {
			if c := &parts[j]; c.Type == PartServerToolCall && c.Server != nil && c.Server.ID == p.Server.ID {
				return out
			}
		}
		out = appendJSONComma(out)
		return respAppendWebSearchItem(out, "", &ServerToolUse{ID: p.Server.ID, Kind: p.Server.Kind}, p.Server)
	}
	out = appendJSONComma(out)
	return respAppendWebSearchItem(out, "", p.Server, respServerToolResultOf(parts[i+1:], p.Server))
}

// KeepsServerTool implements ServerToolHistoryCodec: only OpenAI's own
// web_search_call items go back as items; the others become text.
func (openAIResponsesCodec) KeepsServerTool(parts []Part, i int) bool {
	u := parts[i].Server
	return u != nil && serverToolOrigin(u.ID, respServerToolIDPrefix)
}

// webSearchItem reads a web_search_call input item, the record of a search
// the model ran in an earlier turn, into the assistant's turn.
func (d *respRequestDecoder) webSearchItem(item []byte) {
	call, result := respServerToolParts(gjson.ParseBytes(item))
	d.assistantPart(call)
	if result != nil {
		d.assistantPart(*result)
	}
}

// serverToolStart handles the start of a server tool block: a call opens
// its web_search_call item, which stays open for its result; a result
// completes it, or, when it answers no open call, makes an item of its
// own. ok is false for any other block.
func (s *respStreamEncoder) serverToolStart(w FrameWriter, ev *Event) (ok bool) {
	if ev.Block != BlockServerToolCall && ev.Block != BlockServerToolResult {
		return false
	}
	if ev.Server == nil {
		return true
	}
	if ev.Block == BlockServerToolResult && s.kind == BlockServerToolCall && s.srvCall.ID == ev.Server.ID {
		s.srvResult = ev.Server
		s.closeItem(w)
		return true
	}
	s.closeItem(w)
	call := ev.Server
	if ev.Block == BlockServerToolResult {
		call = &ServerToolUse{ID: ev.Server.ID, Kind: ev.Server.Kind}
	}
	s.kind, s.srvCall, s.srvResult, s.itemID = BlockServerToolCall, call, nil, call.ID
	b := s.event("response.output_item.added")
	b = append(b, `,"output_index":`...)
	b = appendJSONInt(b, int64(s.items))
	b = append(b, `,"item":`...)
	b = respAppendWebSearchItem(b, "in_progress", call, nil)
	s.write(w, "response.output_item.added", append(b, '}'))
	for _, name := range [...]string{"response.web_search_call.in_progress", "response.web_search_call.searching"} {
		s.write(w, name, append(s.itemEvent(name), '}'))
	}
	if ev.Block == BlockServerToolResult {
		s.srvResult = ev.Server
		s.closeItem(w)
	}
	return true
}

// serverToolItem is the finished web_search_call item of the open server
// tool block, after its completed event.
func (s *respStreamEncoder) serverToolItem(w FrameWriter) []byte {
	s.write(w, "response.web_search_call.completed", append(s.itemEvent("response.web_search_call.completed"), '}'))
	item := respAppendWebSearchItem(nil, "", s.srvCall, s.srvResult)
	s.srvCall, s.srvResult = nil, nil
	return item
}

package translate

import "github.com/tidwall/gjson"

// The Responses API's server tool is web_search (server_tools.go): its
// options are filters.allowed_domains, user_location and
// search_context_size. It has no blocked-domain list, no use limit per
// tool (max_tool_calls bounds all tools together) and no URL fetch tool.

// RunsServerTool implements ServerToolCodec.
func (openAIResponsesCodec) RunsServerTool(k ServerToolKind) bool { return k == ServerWebSearch }

// respServerTool is the web search tool of type kind declared at path,
// with its filters, user_location and search_context_size members.
func respServerTool(kind, path string, filters, loc, size gjson.Result) ServerTool {
	return ServerTool{
		Kind: ServerWebSearch, Type: kind, Param: path,
		AllowedDomains: serverToolStrings(filters.Get("allowed_domains")),
		Location:       serverToolLocation(loc),
		ContextSize:    size.Str,
	}
}

// respServerToolChoice is a tool choice forcing the web search tool.
func respServerToolChoice() *ToolChoice {
	return &ToolChoice{Mode: ToolChoiceTool, Name: string(ServerWebSearch)}
}

// appendServerTool writes st, a web search, as a Responses tool.
func (e *respRequestEncoder) appendServerTool(b []byte, st *ServerTool) []byte {
	b = append(b, `{"type":"web_search"`...)
	if len(st.AllowedDomains) > 0 {
		b = append(b, `,"filters":{"allowed_domains":`...)
		b = appendStringList(b, st.AllowedDomains)
		b = append(b, '}')
	}
	if st.Location != nil {
		b = append(b, `,"user_location":`...)
		b = appendUserLocation(b, st.Location)
	}
	switch st.ContextSize {
	case "low", "medium", "high":
		b = append(b, `,"search_context_size":"`...)
		b = append(b, st.ContextSize...)
		b = append(b, '"')
	case "":
	default:
		e.req.Drop("tools.search_context_size", "unknown value "+st.ContextSize)
	}
	if len(st.BlockedDomains) > 0 {
		e.req.Drop("tools.blocked_domains", "the Responses API's web search has no blocked domains")
	}
	if st.MaxUses > 0 {
		e.req.Drop("tools.max_uses", "the Responses API limits tool calls only all tools together")
	}
	return append(b, '}')
}

// respAppendServerToolChoice writes a tool choice forcing st: "required"
// when it is the only tool, else an allowed_tools choice of it alone.
func respAppendServerToolChoice(b []byte, req *Request, st *ServerTool) []byte {
	if len(req.Tools) == 0 && len(req.ServerTools) == 1 {
		return append(b, `,"tool_choice":"required"`...)
	}
	b = append(b, `,"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"`...)
	b = append(b, st.Kind...)
	return append(b, `"}]}`...)
}

package translate

import "github.com/tidwall/gjson"

// Gemini's server tools are the built-in tools googleSearch (web search)
// and urlContext (URL fetching), each a Tool of its own beside the one of
// function declarations (server_tools.go). They take no options louter
// translates: a use limit, domain lists (Vertex AI's excludeDomains is read
// from clients, never sent, as the Gemini API refuses it) and a user
// location are dropped, and a tool choice cannot force them: Gemini
// decides when to search.

// RunsServerTool implements ServerToolCodec.
func (geminiCodec) RunsServerTool(k ServerToolKind) bool {
	return k == ServerWebSearch || k == ServerWebFetch
}

// geminiServerTool reads the Tool member key (camelCase; raw as the
// client spelled it) when it is a server tool.
func geminiServerTool(key, raw string, v gjson.Result) (ServerTool, bool) {
	snake := map[string]string{"googleSearch": "google_search", "urlContext": "url_context"}[key]
	st := ServerTool{Type: snake, Param: "tools." + raw}
	switch key {
	case "googleSearch":
		st.Kind = ServerWebSearch
		st.BlockedDomains = serverToolStrings(geminiGet(v, "excludeDomains", "exclude_domains"))
	case "urlContext":
		st.Kind = ServerWebFetch
	default:
		return st, false
	}
	return st, true
}

// appendServerTools writes each server tool as a Tool of its own, after
// another (comma) or not.
func (e *geminiRequestEncoder) appendServerTools(b []byte, comma bool) []byte {
	req := e.req
	for i := range req.ServerTools {
		st := &req.ServerTools[i]
		if comma {
			b = append(b, ',')
		}
		comma = true
		switch st.Kind {
		case ServerWebSearch:
			b = append(b, `{"googleSearch":{}}`...)
			if len(st.BlockedDomains) > 0 {
				// Vertex AI's excludeDomains; the Gemini API refuses it.
				req.Drop("tools.blocked_domains", "the Gemini API's Google Search takes no domain list")
			}
		case ServerWebFetch:
			b = append(b, `{"urlContext":{}}`...)
		}
		if st.MaxUses > 0 {
			req.Drop("tools.max_uses", "Gemini's built-in tools take no use limit")
		}
		if len(st.AllowedDomains) > 0 {
			req.Drop("tools.allowed_domains", "Gemini's built-in tools take no domain list")
		}
		if st.Location != nil {
			req.Drop("tools.user_location", "Gemini's built-in tools take no user location")
		}
		if st.ContextSize != "" {
			req.Drop("tools.search_context_size", "Gemini has no search context size")
		}
	}
	return b
}

package translate

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Anthropic server tools run on Anthropic's side. Web search and web
// fetch have counterparts in the Responses API and Gemini, and the decoder
// reads them into Request.ServerTools (server_tools.go); the others (code
// execution, bash_…, text_editor_…, tool search, …) have none, so the
// decoder leaves them out of the tool list and records the drop. That is
// what the model would see had the tool not been offered. A request that
// forces one, though, cannot be answered faithfully at all: refusing it
// with a 400 naming the tool lets the agent report that the tool failed,
// where a model without it would make results up.

// checkForcedServerTool refuses a request whose tool_choice names a
// server tool of its tools list, which a translated request cannot run.
func checkForcedServerTool(body []byte, req *Request) *Error {
	tc := req.ToolChoice
	if tc == nil || tc.Mode != ToolChoiceTool {
		return nil
	}
	for _, t := range req.Tools {
		if t.Name == tc.Name {
			return nil
		}
	}
	if req.forcedServerTool() != nil {
		return nil // translated: the route's ServerToolPolicy decides
	}
	var e *Error
	gjson.GetBytes(body, "tools").ForEach(func(i, t gjson.Result) bool {
		typ := t.Get("type").String()
		if t.Get("name").String() != tc.Name || typ == "" || typ == "custom" {
			return true
		}
		at := "tools." + strconv.Itoa(int(i.Int()))
		e = &Error{Status: 400, Kind: ErrInvalidRequest, Param: at,
			Message: at + ": tool_choice forces the Anthropic server tool " + typ + " (" + tc.Name + "), which is not available on this backend: louter runs server tools only on Anthropic backends"}
		return false
	})
	return e
}

// RunsServerTool implements ServerToolCodec: Anthropic runs web search
// and web fetch (the latter behind the web-fetch-2025-09-10 beta).
func (anthropicCodec) RunsServerTool(k ServerToolKind) bool {
	return k == ServerWebSearch || k == ServerWebFetch
}

// anthServerTool reads the server tool of type typ, t, when louter
// translates its kind (web_search_*, web_fetch_*); others are not.
func anthServerTool(typ string, t gjson.Result) (ServerTool, bool) {
	st := ServerTool{Type: typ}
	switch {
	case strings.HasPrefix(typ, "web_search_"):
		st.Kind = ServerWebSearch
		st.Location = serverToolLocation(t.Get("user_location"))
	case strings.HasPrefix(typ, "web_fetch_"):
		st.Kind = ServerWebFetch
		st.MaxContentTokens = int(t.Get("max_content_tokens").Int())
		if c := t.Get("citations.enabled"); c.IsBool() {
			b := c.Bool()
			st.Citations = &b
		}
	default:
		return st, false
	}
	st.MaxUses = int(t.Get("max_uses").Int())
	st.AllowedDomains = serverToolStrings(t.Get("allowed_domains"))
	st.BlockedDomains = serverToolStrings(t.Get("blocked_domains"))
	return st, true
}

// anthServerToolRead are the members of a server tool anthServerTool
// reads; the others (cache_control, a newer version's options) are
// recorded as dropped by anthDropServerToolExtras.
var anthServerToolRead = map[string]bool{"type": true, "name": true, "max_uses": true, "allowed_domains": true,
	"blocked_domains": true, "user_location": true, "citations": true, "max_content_tokens": true}

// anthDropServerToolExtras records the members of t that a translated
// server tool leaves out.
func anthDropServerToolExtras(req *Request, t gjson.Result) {
	t.ForEach(func(k, v gjson.Result) bool {
		if !anthServerToolRead[k.Str] && v.Type != gjson.Null {
			req.Drop("tools."+k.Str, "not translated for a server tool")
		}
		return true
	})
}

// Anthropic's current server tool versions, which translated requests
// get.
const (
	anthWebSearchType = "web_search_20250305"
	anthWebFetchType  = "web_fetch_20250910"
)

// appendServerTool writes st as an Anthropic server tool.
func (e *anthRequestEncoder) appendServerTool(b []byte, st *ServerTool) []byte {
	typ := anthWebSearchType
	if st.Kind == ServerWebFetch {
		typ = anthWebFetchType
	}
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","name":"`...)
	b = append(b, st.Kind...)
	b = append(b, '"')
	if st.MaxUses > 0 {
		b = append(b, `,"max_uses":`...)
		b = appendJSONInt(b, int64(st.MaxUses))
	}
	if len(st.AllowedDomains) > 0 {
		b = append(b, `,"allowed_domains":`...)
		b = appendStringList(b, st.AllowedDomains)
		if len(st.BlockedDomains) > 0 {
			e.req.Drop("tools.blocked_domains", "Anthropic takes allowed_domains or blocked_domains, not both")
		}
	} else if len(st.BlockedDomains) > 0 {
		b = append(b, `,"blocked_domains":`...)
		b = appendStringList(b, st.BlockedDomains)
	}
	if st.Kind == ServerWebSearch && st.Location != nil {
		b = append(b, `,"user_location":`...)
		b = appendUserLocation(b, st.Location)
	}
	if st.Kind == ServerWebFetch {
		if st.MaxContentTokens > 0 {
			b = append(b, `,"max_content_tokens":`...)
			b = appendJSONInt(b, int64(st.MaxContentTokens))
		}
		if st.Citations != nil {
			b = append(b, `,"citations":{"enabled":`...)
			b = appendJSONBool(b, *st.Citations)
			b = append(b, '}')
		}
	}
	if st.ContextSize != "" {
		e.req.Drop("tools.search_context_size", "Anthropic has no search context size")
	}
	return append(b, '}')
}

// anthWebFetchBeta is the beta Anthropic's API wants with web_fetch.
const anthWebFetchBeta = "web-fetch-2025-09-10"

// AnthropicRequestBetas returns the anthropic-beta values the API needs
// for body, a Messages body EncodeRequest made (a translated request,
// whose client sent no betas of its own): web-fetch-2025-09-10 for a
// web_fetch tool.
func AnthropicRequestBetas(body []byte) []string {
	if bytes.Contains(body, []byte(`{"type":"`+anthWebFetchType+`"`)) {
		return []string{anthWebFetchBeta}
	}
	return nil
}

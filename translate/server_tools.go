package translate

import "github.com/tidwall/gjson"

// Server tools are tools the backend runs itself, between two tokens of
// the model's answer, and reports on rather than hands to the client: web
// search and URL fetching. Three protocols have them, each in its own
// words, bridged so:
//
//	                Anthropic                 Responses                  Gemini
//	web search      web_search_20250305       web_search(_preview)       google_search
//	fetch a URL     web_fetch_20250910        (none)                     url_context
//	the call        server_tool_use block     web_search_call item       (none; groundingMetadata
//	the results     web_search_tool_result    action.sources             .webSearchQueries)
//	                                                                    groundingChunks
//
// The calls and results travel back to the client as parts and blocks of
// their own (server_tool_results.go). The options travel where the other
// protocol has them (ServerTool says which); what it has not is recorded with Request.Drop. A backend of a
// protocol without the tool (OpenAI Chat, the self-hosted servers, Bedrock)
// cannot run it: what happens then is the route's ServerToolPolicy.

// ServerToolKind is what a server tool does, whatever the protocol calls
// it. Its value is also the tool's name in a tool choice that forces it
// (Anthropic names its server tools so).
type ServerToolKind string

// Server tool kinds.
const (
	ServerWebSearch ServerToolKind = "web_search"
	ServerWebFetch  ServerToolKind = "web_fetch"
)

// ServerTool is a server tool a client offered the model.
type ServerTool struct {
	Kind ServerToolKind
	// Type is the client's spelling of the tool (web_search_20250305,
	// web_search_preview, google_search) and Param where its request
	// declared it (tools.2, tools[2]): the errors about it name both.
	Type, Param string

	MaxUses        int      // Anthropic max_uses; 0: no limit given
	AllowedDomains []string // Anthropic allowed_domains, Responses filters.allowed_domains
	BlockedDomains []string // Anthropic blocked_domains, Vertex Gemini excludeDomains
	Location       *UserLocation
	// ContextSize is the Responses search_context_size (low, medium, high).
	ContextSize string
	// MaxContentTokens and Citations are Anthropic web_fetch options.
	MaxContentTokens int
	Citations        *bool
}

// UserLocation is the approximate place a web search is made from.
type UserLocation struct {
	City, Region, Country, Timezone string
}

// ServerToolCodec is a codec whose backends run server tools.
//
// Default: none; a request offering one is handled by the route's
// ServerToolPolicy.
type ServerToolCodec interface {
	// RunsServerTool reports whether a backend of the protocol runs k.
	RunsServerTool(k ServerToolKind) bool
}

// ServerToolPolicy is what TranslateRequest does with a server tool the
// backend cannot run.
type ServerToolPolicy string

// Server tool policies.
const (
	// ServerToolsAuto refuses a request that forces the tool (its tool
	// choice names it: the answer could only be made up) and leaves the
	// tool out of any other request, recording the drop: the model
	// answers as it would had the tool not been offered. Codex offers
	// web_search in every request; this keeps it working on backends
	// without search.
	ServerToolsAuto ServerToolPolicy = ""
	// ServerToolsReject refuses every request offering the tool.
	ServerToolsReject ServerToolPolicy = "reject"
	// ServerToolsDrop leaves the tool out of every request, a forced
	// one too (the tool choice then falls back to auto).
	ServerToolsDrop ServerToolPolicy = "drop"
	// ServerToolsNone is ServerToolsAuto for a backend that runs no
	// server tool though its protocol has them: a self-hosted server
	// speaking the Responses API (vLLM, Ollama) has no web search.
	ServerToolsNone ServerToolPolicy = "none"
)

// KnownServerToolPolicy reports whether p is a policy.
func KnownServerToolPolicy(p ServerToolPolicy) bool {
	return p == ServerToolsAuto || p == ServerToolsReject || p == ServerToolsDrop || p == ServerToolsNone
}

// runsServerTool reports whether a backend of protocol p runs k.
func runsServerTool(p Protocol, k ServerToolKind) bool {
	c, ok := codecAs[ServerToolCodec](p)
	return ok && c.RunsServerTool(k)
}

// forcedServerTool returns the server tool req's tool choice forces, if
// any.
func (req *Request) forcedServerTool() *ServerTool {
	tc := req.ToolChoice
	if tc == nil || tc.Mode != ToolChoiceTool {
		return nil
	}
	for i := range req.ServerTools {
		if string(req.ServerTools[i].Kind) == tc.Name {
			return &req.ServerTools[i]
		}
	}
	return nil
}

// applyServerToolPolicy leaves out of req the server tools a backend of
// protocol backend cannot run, or refuses the request, as policy says.
func applyServerToolPolicy(req *Request, backend Protocol, policy ServerToolPolicy) *Error {
	if len(req.ServerTools) == 0 {
		return nil
	}
	forced := req.forcedServerTool()
	kept := req.ServerTools[:0]
	for i := range req.ServerTools {
		st := req.ServerTools[i]
		if policy != ServerToolsNone && runsServerTool(backend, st.Kind) {
			kept = append(kept, st)
			continue
		}
		isForced := forced != nil && forced.Kind == st.Kind
		if policy == ServerToolsReject || policy != ServerToolsDrop && isForced {
			how := "offers"
			if isForced {
				how = "forces"
			}
			return &Error{Status: 400, Kind: ErrInvalidRequest, Param: st.Param,
				Message: st.Param + ": the request " + how + " the server tool " + st.Type + ", which is not available on this backend (" + string(backend) + "): route it to a backend that runs " + string(st.Kind)}
		}
		req.Drop("tools."+st.Type, "server tool not available on this backend")
		if isForced {
			req.ToolChoice = &ToolChoice{Mode: ToolChoiceAuto}
			req.Drop("tool_choice", "forced a server tool that was left out")
		}
	}
	req.ServerTools = kept
	return nil
}

// serverToolLocation reads a user_location object (Anthropic's and the
// Responses API's share their members).
func serverToolLocation(v gjson.Result) *UserLocation {
	if !v.IsObject() {
		return nil
	}
	l := &UserLocation{City: v.Get("city").String(), Region: v.Get("region").String(),
		Country: v.Get("country").String(), Timezone: v.Get("timezone").String()}
	if *l == (UserLocation{}) {
		return nil
	}
	return l
}

// serverToolStrings reads a list of strings.
func serverToolStrings(v gjson.Result) []string {
	var out []string
	v.ForEach(func(_, s gjson.Result) bool {
		if s.Type == gjson.String {
			out = append(out, s.Str)
		}
		return true
	})
	return out
}

// appendUserLocation writes l as the approximate user_location object
// Anthropic and the Responses API share.
func appendUserLocation(b []byte, l *UserLocation) []byte {
	b = append(b, `{"type":"approximate"`...)
	for _, f := range [...]struct{ k, v string }{{"city", l.City}, {"region", l.Region}, {"country", l.Country}, {"timezone", l.Timezone}} {
		if f.v != "" {
			b = append(b, `,"`...)
			b = append(b, f.k...)
			b = append(b, `":`...)
			b = appendJSONString(b, f.v)
		}
	}
	return append(b, '}')
}

// appendStringList writes a JSON array of strings.
func appendStringList(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

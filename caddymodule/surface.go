package caddymodule

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/translate"
)

// This file decides which requests louter recognises as calls to one of
// its protocols' APIs, and answers those that are not chat calls: model
// lists (models.go), OpenAI's embeddings and completions passed through
// (openai_passthrough.go), and, for an API path or method louter does not
// serve, a 404 or 405 in that API's error shape instead of falling through
// to an empty 200.
//
// A request is recognised when its path (after any prefix, so louter can
// live under /anthropic or /llm) is, in this order:
//
//   - a protocol's own namespace, recognised by its row's classify
//     (protocols.go): Gemini's .../v1beta/{resource}[/...] with a resource
//     of Gemini's API (geminiResources), or .../v1/{resource}[/...] when
//     the request carries a Gemini credential (x-goog-api-key, ?key=) or
//     names a Gemini method (.../v1/models/{m}:generateContent); the
//     Responses API's paths without /v1 (.../responses[/...], as Codex
//     calls them: classifyResponsesNoV1), as the same paths under /v1;
//   - Anthropic and OpenAI: .../v1/{resource}[/...] with a resource of
//     either API (the rows' v1Resources); the error shape is Anthropic's
//     when the request carries anthropic-version (every Anthropic SDK
//     sends it: the row's markHeader) or the resource is Anthropic's own,
//     else OpenAI's (the Responses API's for /v1/responses);
//   - a POST to the chat endpoint of a protocol neither rule knows (a
//     row's match: protocols tests register);
//   - a call to a protocol's API at a path louter does not serve, as a
//     row's unserved tells: an Anthropic client anywhere else under .../v1/
//     (anthropic-version is sent), a 404 in Anthropic's shape, e.g. POST
//     /v1/message; an OpenAI Chat client that left /v1 out of its base URL
//     (.../chat/completions without /v1), a 404 saying so.
//
// Every other path, and every OPTIONS request (CORS preflights belong to
// the site), goes to the next handler untouched, so louter can share a
// site with other handlers as long as they do not serve the paths above;
// with unknown_paths not_found (a site louter serves alone) the other
// paths get a 404 instead (unknownPath), OPTIONS requests still the next
// handler.

// apiAction is what louter does with a recognised request.
type apiAction int

const (
	actNext              apiAction = iota // not an LLM API request: the next handler
	actChat                               // a chat call: ServeHTTP's main path
	actElsewhere                          // served by another part of louter (token counting)
	actListModels                         // models.go
	actGetModel                           // models.go
	actOpenAIPassthrough                  // openai_passthrough.go
	actBadModel                           // a path model that is not a name: 400
	actNotServed                          // an API path louter does not serve: 404
	actProbe                              // an agent's start-up probe (a row's probes): an empty 200
)

// apiEndpoint is one API path louter serves.
type apiEndpoint struct {
	protocol translate.Protocol // whose error shape; "" when chosen by the request's headers
	action   apiAction
	method   string // the one method it takes (GET endpoints take HEAD too)
}

// v1SharedEndpoints are the paths louter serves below .../v1/ for every
// protocol of that namespace, answered in the shape the request's headers
// choose; each protocol's own endpoints and resources are in its row
// (protocols.go: v1Endpoints, v1Resources). Token counting is served by its
// own code (actElsewhere): a handler slotted in before or after
// serveSurface finds these requests untouched.
var v1SharedEndpoints = map[string]apiEndpoint{
	"models": {"", actListModels, http.MethodGet},
	// "models/{id}" is matched by prefix in classifyV1.
}

// apiRequest is a classified request. ServeHTTP classifies a request once,
// and authentication, the surface, token counting and the chat path all
// act on that one classification: a request is served only as what it was
// authenticated as.
type apiRequest struct {
	apiEndpoint
	// client is the protocol of the request's body for actChat and
	// actElsewhere; protocol, which may follow the request's headers, only
	// chooses the error shape.
	client translate.Protocol
	model  string // actChat, actElsewhere, actGetModel: the model the path names ("" when the body names it); actBadModel: the refused name
	why    string // actBadModel: why the name was refused
	api    string // the API path after the prefix, for messages: "/v1/messages/batches"
}

// serveSurface answers the recognised requests that are not chat calls and
// reports whether it did; chat calls, token counting and unrecognised
// requests are left to the caller.
func (l *Louter) serveSurface(w http.ResponseWriter, r *http.Request, req apiRequest) (bool, error) {
	if req.action == actNext {
		return false, nil
	}
	codec, ok := translate.Lookup(req.protocol)
	if !ok {
		return false, nil
	}
	if req.action != actNotServed && req.action != actBadModel && !httpx.MethodAllowed(r.Method, req.method) {
		allow := req.method
		if allow == http.MethodGet {
			allow = "GET, HEAD"
		}
		w.Header().Set("Allow", allow)
		return true, l.reject(w, codec, &translate.Error{Status: http.StatusMethodNotAllowed, Kind: translate.ErrInvalidRequest,
			Message: fmt.Sprintf("louter: %s takes %s, not %s", req.api, req.method, r.Method)})
	}
	switch req.action {
	case actChat, actElsewhere:
		return false, nil
	case actListModels:
		return true, l.serveModelList(w, r, codec)
	case actGetModel:
		return true, l.serveModel(w, r, codec, req.model)
	case actOpenAIPassthrough:
		return true, l.serveOpenAIPassthrough(w, r, codec, req.client, strings.TrimPrefix(req.api, "/v1"))
	case actBadModel:
		return true, l.reject(w, codec, badModelName(req.model, req.why))
	}
	if unknown := rowOf(req.protocol).unknownURL; unknown != nil {
		return true, l.reject(w, codec, unknown(r.Method, req.api))
	}
	return true, l.reject(w, codec, translate.NewError(http.StatusNotFound,
		fmt.Sprintf("louter: %s %s is not an endpoint louter serves", r.Method, req.api)))
}

// The values of Louter.UnknownPaths.
const (
	unknownPathsNext     = "next"
	unknownPathsNotFound = "not_found"
)

// unknownPath is a request no rule recognised, to be answered with a 404
// (unknown_paths not_found) in the shape its headers choose: Anthropic's
// for an Anthropic SDK, else the /v1 namespace's default, OpenAI's.
func unknownPath(r *http.Request) apiRequest {
	return apiRequest{apiEndpoint: apiEndpoint{protocol: v1Shape(r.Header), action: actNotServed}, api: r.URL.EscapedPath()}
}

// classifyRequest tells what r is; see the file comment. OPTIONS requests
// are never recognised.
func classifyRequest(r *http.Request) apiRequest {
	if r.Method == http.MethodOptions {
		return apiRequest{}
	}
	path := r.URL.EscapedPath()
	if r.Method == http.MethodHead {
		for _, row := range protocolRows {
			for _, probe := range row.probes {
				if strings.HasSuffix(path, probe) {
					return apiRequest{apiEndpoint: apiEndpoint{row.protocol, actProbe, http.MethodHead}, api: path}
				}
			}
		}
	}
	// A protocol with a namespace of its own (Gemini's .../v1beta/)
	// recognises its requests first.
	for _, row := range protocolRows {
		if row.classify == nil {
			continue
		}
		if req, ok := row.classify(r, path); ok {
			return req
		}
	}
	if req, ok := classifyV1(r, path); ok {
		return req
	}
	// A client protocol whose paths neither recognises (tests register
	// some) is recognised by its row's POST endpoint.
	for _, row := range protocolRows {
		if r.Method != http.MethodPost {
			break
		}
		if row.match == nil {
			continue
		}
		if model, ok := row.match(path); ok {
			return apiRequest{apiEndpoint: apiEndpoint{row.protocol, actChat, http.MethodPost}, client: row.protocol, model: model, api: path}
		}
	}
	// A request meant for a protocol's API at a path louter does not
	// serve: a 404 the client understands.
	for _, row := range protocolRows {
		if row.unserved == nil {
			continue
		}
		if api, ok := row.unserved(r, path); ok {
			return apiRequest{apiEndpoint: apiEndpoint{protocol: row.protocol, action: actNotServed}, api: api}
		}
	}
	return apiRequest{}
}

// classifyV1 recognises .../v1/{resource}[/...] of the Anthropic and
// OpenAI APIs; the last "v1" segment followed by a known resource counts.
func classifyV1(r *http.Request, path string) (apiRequest, bool) {
	segs := strings.Split(path, "/")
	at := -1
	for i := len(segs) - 2; i >= 0; i-- {
		if _, known := rows.v1Resources[segs[i+1]]; segs[i] == "v1" && known {
			at = i
			break
		}
	}
	if at < 0 {
		return apiRequest{}, false
	}
	rest := strings.Join(segs[at+1:], "/")
	req := apiRequest{api: "/v1/" + rest}
	req.protocol = rows.v1Resources[segs[at+1]]
	if ep, ok := rows.v1Endpoints[rest]; ok {
		req.apiEndpoint, req.client = ep, ep.protocol
	} else if id, ok := strings.CutPrefix(rest, "models/"); ok && id != "" {
		req.apiEndpoint = apiEndpoint{action: actGetModel, method: http.MethodGet}
		if req.model, ok = unescapeModel(id); !ok {
			req.action = actNotServed
		}
	} else {
		req.action = actNotServed
	}
	if p, ok := markedProtocol(r.Header); ok {
		req.protocol = p // the client's headers say whose shape it reads
	} else if req.protocol == "" {
		req.protocol = v1Shape(r.Header)
	}
	return req, true
}

// unescapeModel decodes a model name taken from an escaped path.
func unescapeModel(s string) (string, bool) {
	m, err := url.PathUnescape(s)
	return m, err == nil && m != ""
}

// classifyResponsesNoV1 is the classify function of the Responses row: it
// recognises the Responses API's paths without /v1, which Codex calls when
// its base URL ends at the gateway's prefix (.../responses,
// .../responses/compact, .../responses/{id}[/input_items|/cancel]), as the
// same paths under /v1. Paths under /v1 are left to classifyV1, and
// Gemini's namespace (/v1beta/) to classifyGemini; anything deeper below
// .../responses is not claimed, so a site sharing such paths with other
// handlers keeps them.
func classifyResponsesNoV1(r *http.Request, path string) (apiRequest, bool) {
	i := strings.LastIndex(path, "/responses")
	if i < 0 || strings.HasSuffix(path[:i], "/v1") || strings.Contains(path, "/v1beta/") {
		return apiRequest{}, false
	}
	if rest := path[i+len("/responses"):]; rest != "" {
		if rest[0] != '/' {
			return apiRequest{}, false // .../responsesX
		}
		id, sub, _ := strings.Cut(rest[1:], "/")
		if id == "" || sub != "" && sub != "input_items" && sub != "cancel" {
			return apiRequest{}, false
		}
	}
	return classifyV1(r, path[:i]+"/v1"+path[i:])
}

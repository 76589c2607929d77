package caddymodule

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

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
//   - Gemini: .../v1beta/{resource}[/...] with a resource of Gemini's API
//     (geminiResources), or .../v1/{resource}[/...] when the request carries
//     a Gemini credential (x-goog-api-key, ?key=) or names a Gemini method
//     (.../v1/models/{m}:generateContent);
//   - Anthropic and OpenAI: .../v1/{resource}[/...] with a resource of
//     either API (v1Resources); the error shape is Anthropic's when the
//     request carries anthropic-version (every Anthropic SDK sends it) or
//     the resource is Anthropic's own, else OpenAI's (the Responses API's
//     for /v1/responses);
//   - an Anthropic client anywhere else under .../v1/ (anthropic-version
//     is sent): a 404 in Anthropic's shape, e.g. POST /v1/message;
//   - an OpenAI Chat client that left /v1 out of its base URL
//     (.../chat/completions without /v1): a 404 saying so.
//
// Every other path, and every OPTIONS request (CORS preflights belong to
// the site), goes to the next handler untouched, so louter can share a
// site with other handlers as long as they do not serve the paths above.

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
)

// apiEndpoint is one API path louter serves.
type apiEndpoint struct {
	protocol translate.Protocol // whose error shape; "" when chosen by the request's headers
	action   apiAction
	method   string // the one method it takes (GET endpoints take HEAD too)
}

// v1Endpoints are the paths louter serves below .../v1/ for the Anthropic
// and OpenAI APIs. Token counting is served by its own code (actElsewhere):
// a handler slotted in before or after serveSurface finds these requests
// untouched.
var v1Endpoints = map[string]apiEndpoint{
	"messages":              {translate.ProtocolAnthropic, actChat, http.MethodPost},
	"messages/count_tokens": {translate.ProtocolAnthropic, actElsewhere, http.MethodPost},
	"chat/completions":      {translate.ProtocolOpenAIChat, actChat, http.MethodPost},
	"responses":             {translate.ProtocolOpenAIResponses, actChat, http.MethodPost},
	"embeddings":            {translate.ProtocolOpenAIChat, actOpenAIPassthrough, http.MethodPost},
	"completions":           {translate.ProtocolOpenAIChat, actOpenAIPassthrough, http.MethodPost},
	"models":                {"", actListModels, http.MethodGet},
	// "models/{id}" is matched by prefix in classifyV1.
}

// v1Resources are the first path segments after /v1/ of the Anthropic and
// OpenAI APIs, with the protocol whose error shape an unserved path under
// them gets. A path under any other segment is not recognised.
var v1Resources = map[string]translate.Protocol{
	"messages": translate.ProtocolAnthropic, "complete": translate.ProtocolAnthropic,
	"chat": translate.ProtocolOpenAIChat, "completions": translate.ProtocolOpenAIChat,
	"responses": translate.ProtocolOpenAIResponses, "models": translate.ProtocolOpenAIChat,
	"embeddings": translate.ProtocolOpenAIChat, "files": translate.ProtocolOpenAIChat,
	"batches": translate.ProtocolOpenAIChat, "audio": translate.ProtocolOpenAIChat,
	"images": translate.ProtocolOpenAIChat, "moderations": translate.ProtocolOpenAIChat,
	"fine_tuning": translate.ProtocolOpenAIChat, "assistants": translate.ProtocolOpenAIChat,
	"threads": translate.ProtocolOpenAIChat, "vector_stores": translate.ProtocolOpenAIChat,
	"uploads": translate.ProtocolOpenAIChat, "realtime": translate.ProtocolOpenAIChat,
	"conversations": translate.ProtocolOpenAIResponses,
}

// geminiVerbs are the Gemini model methods louter serves
// (.../models/{model}:{verb}).
var geminiVerbs = map[string]apiAction{
	"generateContent":       actChat,
	"streamGenerateContent": actChat,
	"countTokens":           actElsewhere,
}

// geminiResources are the first path segments after /v1beta/ of Gemini's
// API.
var geminiResources = []string{"models", "tunedModels", "cachedContents", "files", "batches", "operations", "corpora", "fileSearchStores"}

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
	if req.action != actNotServed && req.action != actBadModel && !methodAllowed(r.Method, req.method) {
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
		return true, l.serveOpenAIPassthrough(w, r, codec, strings.TrimPrefix(req.api, "/v1"))
	case actBadModel:
		return true, l.reject(w, codec, badModelName(req.model, req.why))
	}
	return true, l.reject(w, codec, translate.NewError(http.StatusNotFound,
		fmt.Sprintf("louter: %s %s is not an endpoint louter serves", r.Method, req.api)))
}

// methodAllowed reports whether method may call an endpoint taking want.
func methodAllowed(method, want string) bool {
	return method == want || want == http.MethodGet && method == http.MethodHead
}

// classifyRequest tells what r is; see the file comment. OPTIONS requests
// are never recognised.
func classifyRequest(r *http.Request) apiRequest {
	if r.Method == http.MethodOptions {
		return apiRequest{}
	}
	path := r.URL.EscapedPath()
	if req, ok := classifyGemini(r, path); ok {
		return req
	}
	if req, ok := classifyV1(r, path); ok {
		return req
	}
	// A client protocol registered beyond the four above (tests register
	// some) is recognised by its own row, which names a POST endpoint.
	for _, ep := range clientEndpoints {
		if r.Method != http.MethodPost {
			break
		}
		if model, ok := ep.match(path); ok {
			return apiRequest{apiEndpoint: apiEndpoint{ep.protocol, actChat, http.MethodPost}, client: ep.protocol, model: model, api: path}
		}
	}
	segs := strings.Split(path, "/")
	switch {
	case r.Header.Get("Anthropic-Version") != "" && (slices.Contains(segs, "v1") || strings.HasSuffix(path, "/messages")):
		return apiRequest{apiEndpoint: apiEndpoint{protocol: translate.ProtocolAnthropic, action: actNotServed}, api: path}
	case strings.HasSuffix(path, "/chat/completions"):
		return apiRequest{apiEndpoint: apiEndpoint{protocol: translate.ProtocolOpenAIChat, action: actNotServed},
			api: path + " (OpenAI Chat is served at .../v1/chat/completions: end the client's base URL with /v1)"}
	}
	return apiRequest{}
}

// classifyV1 recognises .../v1/{resource}[/...] of the Anthropic and
// OpenAI APIs; the last "v1" segment followed by a known resource counts.
func classifyV1(r *http.Request, path string) (apiRequest, bool) {
	segs := strings.Split(path, "/")
	at := -1
	for i := len(segs) - 2; i >= 0; i-- {
		if _, known := v1Resources[segs[i+1]]; segs[i] == "v1" && known {
			at = i
			break
		}
	}
	if at < 0 {
		return apiRequest{}, false
	}
	rest := strings.Join(segs[at+1:], "/")
	req := apiRequest{api: "/v1/" + rest}
	req.protocol = v1Resources[segs[at+1]]
	if ep, ok := v1Endpoints[rest]; ok {
		req.apiEndpoint, req.client = ep, ep.protocol
	} else if id, ok := strings.CutPrefix(rest, "models/"); ok && id != "" {
		req.apiEndpoint = apiEndpoint{action: actGetModel, method: http.MethodGet}
		if req.model, ok = unescapeModel(id); !ok {
			req.action = actNotServed
		}
	} else {
		req.action = actNotServed
	}
	if r.Header.Get("Anthropic-Version") != "" {
		req.protocol = translate.ProtocolAnthropic
	} else if req.protocol == "" {
		req.protocol = translate.ProtocolOpenAIChat
	}
	return req, true
}

// classifyGemini recognises Gemini API paths.
func classifyGemini(r *http.Request, path string) (apiRequest, bool) {
	rest, version, found := "", "", false
	if i := strings.Index(path, "/v1beta/"); i >= 0 {
		rest, version, found = path[i+len("/v1beta/"):], "/v1beta/", true
	} else if i := strings.Index(path, "/v1/"); i >= 0 {
		rest, version = path[i+len("/v1/"):], "/v1/"
		found = r.Header.Get("X-Goog-Api-Key") != "" || strings.Contains(r.URL.RawQuery, "key=") && r.URL.Query().Has("key")
		if !found && strings.HasPrefix(rest, "models/") {
			if j := strings.LastIndexByte(rest, ':'); j >= 0 {
				_, found = geminiVerbs[rest[j+1:]]
			}
		}
	}
	if !found {
		return apiRequest{}, false
	}
	resource, sub, _ := strings.Cut(rest, "/")
	if !slices.Contains(geminiResources, resource) {
		return apiRequest{}, false
	}
	req := apiRequest{api: version + rest, apiEndpoint: apiEndpoint{protocol: translate.ProtocolGemini, action: actNotServed}}
	switch {
	case resource != "models":
	case sub == "" && !strings.Contains(rest, "/"):
		req.action, req.method = actListModels, http.MethodGet
	case !strings.Contains(sub, ":"):
		if model, ok := unescapeModel(sub); ok && !strings.ContainsAny(model, "/:") {
			req.action, req.method, req.model = actGetModel, http.MethodGet, model
		}
	default:
		j := strings.LastIndexByte(sub, ':')
		verb := sub[j+1:]
		action, served := geminiVerbs[verb]
		model, ok := unescapeModel(sub[:j])
		if !served || !ok || strings.Contains(verb, "/") {
			break
		}
		req.action, req.method, req.model, req.client = action, http.MethodPost, model, translate.ProtocolGemini
		if why := checkModelName(model); why != "" {
			req.action, req.why = actBadModel, why
		}
	}
	return req, true
}

// unescapeModel decodes a model name taken from an escaped path.
func unescapeModel(s string) (string, bool) {
	m, err := url.PathUnescape(s)
	return m, err == nil && m != ""
}

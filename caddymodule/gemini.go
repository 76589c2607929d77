package caddymodule

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/translate"
)

// Gemini puts the model and the method into the URL,
// .../v1beta/models/{model}:{method} (or /v1/), and chooses the stream
// framing with a query parameter: alt=sse streams server-sent events,
// anything else a streamed JSON array. This file holds what the handler
// needs to know about that; the Gemini row of protocols.go points here.
// (Model lists are in models.go, countTokens in count_tokens.go, the
// refusals in Google's shape in client_errors.go.)

// geminiModelPath splits a Gemini API path into the model and the method.
// path is the escaped path (r.URL.EscapedPath()): the model is the text
// between .../v1beta/models/ (or /v1/models/, after any prefix) and the last
// ':', unescaped only once it is cut out, so an escaped "%2F" or "%3A" in it
// is part of the name and not a separator. The model may still contain '/'
// (from "a/../b" in the path); callers refuse such names with
// checkModelName.
func geminiModelPath(path string) (model, method string, ok bool) {
	rest, found := geminiModelsRest(path)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 || strings.Contains(rest[i+1:], "/") {
		return "", "", false
	}
	model, err := url.PathUnescape(rest[:i])
	if err != nil || model == "" {
		return "", "", false
	}
	return model, rest[i+1:], true
}

// geminiModelsRest returns what follows ".../v1beta/models/" or
// ".../v1/models/" of an escaped path, where the version segment is the
// path's first "/v1beta/" (or, with none, its first "/v1/"): the same one
// classifyGemini reads, so a path that hides a second ".../v1beta/models/"
// behind another resource is not a model path.
func geminiModelsRest(path string) (string, bool) {
	for _, version := range [...]string{"/v1beta/", "/v1/"} {
		if i := strings.Index(path, version); i >= 0 {
			return strings.CutPrefix(path[i+len(version):], "models/")
		}
	}
	return "", false
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

// classifyGemini is the classify function of the Gemini row: it
// recognises Gemini API paths (surface.go).
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

// geminiMatch is the match function of the Gemini row:
// generateContent and streamGenerateContent, with the model from the path.
func geminiMatch(path string) (string, bool) {
	model, method, ok := geminiModelPath(path)
	if !ok || (method != "generateContent" && method != "streamGenerateContent") {
		return "", false
	}
	return model, true
}

// geminiStreamFromURL reports whether a Gemini request streams (the
// streamGenerateContent method) and, if so, whether the client wants a
// streamed JSON array (no alt=sse) rather than SSE.
func geminiStreamFromURL(r *http.Request) (stream, jsonArray bool) {
	_, method, _ := geminiModelPath(r.URL.EscapedPath())
	if method != "streamGenerateContent" {
		return false, false
	}
	return true, r.URL.Query().Get("alt") != "sse"
}

// geminiBackendEndpoint is the Gemini backend's endpoint: a translated
// stream always asks for SSE, which the transcoder reads.
// The path is escaped (escapeModelPath): rewriteRequest sets it with
// setBackendPath.
func geminiBackendEndpoint(model string, stream bool) (string, string) {
	if stream {
		return "/models/" + escapeModelPath(model) + ":streamGenerateContent", "alt=sse"
	}
	return "/models/" + escapeModelPath(model) + ":generateContent", ""
}

// geminiCountRequest is the Gemini row's countRequest: countTokens may
// wrap a whole generateContent request in generateContentRequest.
func geminiCountRequest(body []byte) ([]byte, *translate.Error) {
	g := gjson.GetBytes(body, "generateContentRequest")
	if !g.Exists() {
		return body, nil
	}
	if !g.IsObject() {
		return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "generateContentRequest: must be an object", Param: "generateContentRequest"}
	}
	return []byte(g.Raw), nil
}

// geminiRenameCountBody is the Gemini row's renameCountBody: a wrapped
// generateContentRequest names its model too.
func geminiRenameCountBody(body []byte, model string) ([]byte, error) {
	if !gjson.GetBytes(body, "generateContentRequest.model").Exists() {
		return body, nil
	}
	return sjson.SetBytes(body, "generateContentRequest.model", "models/"+model)
}

// parseGeminiModelList reads the model ids of a Gemini backend's list,
// {"models":[{"name":"models/x"}]}.
func parseGeminiModelList(body []byte) []string {
	var ids []string
	for _, m := range gjson.GetBytes(body, "models").Array() {
		ids = append(ids, strings.TrimPrefix(m.Get("name").String(), "models/"))
	}
	return ids
}

func writeGeminiJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

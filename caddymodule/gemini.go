package caddymodule

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Gemini puts the model and the method into the URL,
// .../v1beta/models/{model}:{method} (or /v1/), and chooses the stream
// framing with a query parameter: alt=sse streams server-sent events,
// anything else a streamed JSON array. This file holds what the handler
// needs to know about that. (Model lists are in models.go, countTokens in
// count_tokens.go.)

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

// geminiMatch is the clientEndpoints match function of the Gemini protocol:
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

func writeGeminiJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// Gemini puts the model and the method into the URL,
// .../v1beta/models/{model}:{method} (or /v1/), and chooses the stream
// framing with a query parameter: alt=sse streams server-sent events,
// anything else a streamed JSON array. This file holds what the handler
// needs to know about that, and the model list louter answers itself for
// Gemini clients.

// geminiModelPath splits a Gemini API path into the model and the method.
// The path may have any prefix before the API version.
func geminiModelPath(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	if prefix := path[:i]; !strings.HasSuffix(prefix, "/v1beta") && !strings.HasSuffix(prefix, "/v1") {
		return "", "", false
	}
	model, method, ok = strings.Cut(path[i+len("/models/"):], ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	return model, method, true
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
	_, method, _ := geminiModelPath(r.URL.Path)
	if method != "streamGenerateContent" {
		return false, false
	}
	return true, r.URL.Query().Get("alt") != "sse"
}

// geminiBackendEndpoint is the Gemini backend's endpoint: a translated
// stream always asks for SSE, which the transcoder reads.
func geminiBackendEndpoint(model string, stream bool) (string, string) {
	if stream {
		return "/models/" + model + ":streamGenerateContent", "alt=sse"
	}
	return "/models/" + model + ":generateContent", ""
}

// serveGeminiAux answers the Gemini model list and reports whether it did
// (countTokens is answered in count_tokens.go):
//
//   - GET .../v1beta/models and .../v1beta/models/{model}: the models of
//     the configuration whose patterns are literal names (a pattern with a
//     '*' names no model). The /v1/models variants are answered only for a
//     request carrying a Gemini key, because OpenAI clients list models at
//     /v1/models too.
func (l *Louter) serveGeminiAux(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	gemini, _ := translate.Lookup(translate.ProtocolGemini)
	if gemini == nil {
		return false
	}
	if r.Method != http.MethodGet {
		return false
	}
	geminiKey := r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key")
	var rest string
	switch i := strings.LastIndex(path, "/models"); {
	case i < 0:
		return false
	case strings.HasSuffix(path[:i], "/v1beta"), strings.HasSuffix(path[:i], "/v1") && geminiKey:
		rest = strings.TrimPrefix(path[i+len("/models"):], "/")
		if path[i+len("/models"):] != "" && !strings.HasPrefix(path[i+len("/models"):], "/") {
			return false
		}
	default:
		return false
	}
	if rest == "" {
		models := []geminiModelInfo{}
		for i := range l.Models {
			if m := l.Models[i].Match; !strings.Contains(m, "*") {
				models = append(models, newGeminiModelInfo(m))
			}
		}
		writeGeminiJSON(w, http.StatusOK, map[string]any{"models": models})
		return true
	}
	if _, routed := l.route(rest); !routed || strings.Contains(rest, "/") {
		_ = writeError(w, gemini, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: model %q is not configured", rest)))
		return true
	}
	writeGeminiJSON(w, http.StatusOK, newGeminiModelInfo(rest))
	return true
}

// geminiModelInfo is the part of Gemini's Model resource louter can tell.
type geminiModelInfo struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	DisplayName                string   `json:"displayName"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

func newGeminiModelInfo(model string) geminiModelInfo {
	return geminiModelInfo{
		Name:                       "models/" + model,
		BaseModelID:                model,
		DisplayName:                model,
		SupportedGenerationMethods: []string{"generateContent", "streamGenerateContent", "countTokens"},
	}
}

func writeGeminiJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

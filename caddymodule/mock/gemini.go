package mock

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// Gemini puts the model and the method in the path,
// .../models/{model}:generateContent or :streamGenerateContent, and frames
// a stream as SSE with ?alt=sse, as a streamed JSON array otherwise.

// geminiPath matches Gemini's two content-generation endpoints.
func geminiPath(path string) bool {
	_, method, ok := geminiModelMethod(path)
	return ok && (method == "generateContent" || method == "streamGenerateContent")
}

func geminiModelMethod(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	// The method follows the last ':' (a model name may hold one).
	rest := path[i+len("/models/"):]
	j := strings.LastIndexByte(rest, ':')
	if j <= 0 {
		return "", "", false
	}
	return rest[:j], rest[j+1:], true
}

// geminiFromURL sets the model and the stream mode the URL names.
func geminiFromURL(r *http.Request, req *translate.Request) (jsonArray bool) {
	model, method, _ := geminiModelMethod(r.URL.Path)
	if req.Model == "" {
		req.Model = model
	}
	req.Stream = method == "streamGenerateContent"
	return req.Stream && r.URL.Query().Get("alt") != "sse"
}

// geminiCallSignature is the thought signature the mock signs its function
// calls with, folded into the call id the way the Gemini codec carries
// signatures ("-ts-" + unpadded base64url).
var geminiCallSignature = "-ts-" + base64.RawURLEncoding.EncodeToString([]byte("louter_mock thought signature"))

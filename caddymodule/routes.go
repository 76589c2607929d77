package caddymodule

import (
	"net/http"
	"strings"

	"github.com/louter/louter/translate"
)

// clientEndpoint recognizes the requests of one client protocol.
type clientEndpoint struct {
	protocol translate.Protocol
	// match reports whether a request path (escaped, as on the wire)
	// belongs to the protocol, and the model the path names for protocols
	// that put it there (Gemini's /v1beta/models/{model}:generateContent);
	// "" means the body names it.
	match func(path string) (pathModel string, ok bool)
}

// clientEndpoints lists the client protocols louter answers, tried in order.
// A new protocol adds a row. Any prefix before the API path is allowed, so a
// client pointed at http://host/anthropic reaches /anthropic/v1/messages.
var clientEndpoints = []clientEndpoint{
	{translate.ProtocolAnthropic, pathSuffix("/v1/messages")},
	{translate.ProtocolOpenAIChat, pathSuffix("/v1/chat/completions")},
	{translate.ProtocolOpenAIResponses, pathSuffix("/v1/responses")},
	{translate.ProtocolGemini, geminiMatch},
}

// clientStreamFromURL lists the client protocols whose URL, not body, says
// whether to stream (Gemini's :streamGenerateContent), with how the client
// wants the stream framed: SSE, or a streamed JSON array (Gemini without
// ?alt=sse).
var clientStreamFromURL = map[translate.Protocol]func(r *http.Request) (stream, jsonArray bool){
	translate.ProtocolGemini: geminiStreamFromURL,
}

// pathSuffix matches paths that end with suffix.
func pathSuffix(suffix string) func(string) (string, bool) {
	return func(path string) (string, bool) {
		return "", strings.HasSuffix(path, suffix)
	}
}

// detectClient returns the client protocol of a request louter translates,
// and the model its path names ("" when its body does): the chat calls of
// classifyRequest's classification, POST only. Everything else (model
// lists, token counting, GETs) is not a chat call.
func detectClient(r *http.Request) (clientEndpoint, string, bool) {
	return classifyRequest(r).chat(r.Method)
}

// chat returns the client endpoint of a classified chat call.
func (req apiRequest) chat(method string) (clientEndpoint, string, bool) {
	if req.action != actChat || method != http.MethodPost {
		return clientEndpoint{}, "", false
	}
	for _, ep := range clientEndpoints {
		if ep.protocol == req.client {
			return ep, req.model, true
		}
	}
	return clientEndpoint{}, "", false
}

// route returns the first model route whose pattern matches model.
func (l *Louter) route(model string) (*ModelRoute, bool) {
	for i := range l.Models {
		if globMatch(l.Models[i].Match, model) {
			return &l.Models[i], true
		}
	}
	return nil, false
}

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters (including none, and including '/' and ':', which model names
// such as "accounts/fireworks/models/x" and "llama3:8b" contain) and every
// other byte matches itself. It backtracks only to the last star, so it runs
// in O(len(pattern)·len(s)) at worst, with no allocation.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0 // position of the last '*' in pattern, and of s when we met it
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			// Let the last star swallow one more byte and retry.
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

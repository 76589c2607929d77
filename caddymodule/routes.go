package caddymodule

import (
	"net/http"
	"strings"
)

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
func detectClient(r *http.Request) (*protocolRow, string, bool) {
	return classifyRequest(r).chat(r.Method)
}

// chat returns the client protocol's row of a classified chat call, and
// the model its path names.
func (req apiRequest) chat(method string) (*protocolRow, string, bool) {
	if req.action != actChat || method != http.MethodPost {
		return noRow, "", false
	}
	row, ok := rows.byProtocol[req.client]
	if !ok {
		return noRow, "", false
	}
	return row, req.model, true
}

// route returns the first model route whose pattern or alias matches
// model.
func (l *Louter) route(model string) (*ModelRoute, bool) {
	for i := range l.Models {
		if l.Models[i].matches(model) { // model_aliases.go
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

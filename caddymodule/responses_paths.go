package caddymodule

import (
	"net/http"
	"strings"
)

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

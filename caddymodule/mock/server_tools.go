package mock

import (
	"github.com/louter/louter/translate"
)

// webSearchScenario answers as a backend that ran a web search: the
// search (its query is the last user message), the two pages it found,
// and an answer citing the first page. Anthropic and the Responses API put the search before
// the text, Gemini after it (groundingMetadata), as the providers do.
// Pages carry encrypted content, which only the Anthropic encoder writes.
// It answers so whether or not the request offered the tool, so that a
// test can see what a client whose protocol has no searches gets.
func webSearchScenario(x *exchange) *reply {
	query := lastUserText(x.req)
	if query == "" {
		query = "louter"
	}
	prefix := x.spec.serverToolIDPrefix
	if prefix == "" {
		prefix = "srv_"
	}
	id := newID(prefix)
	call := block{kind: translate.PartServerToolCall, server: &translate.ServerToolUse{ID: id, Kind: translate.ServerWebSearch, Query: query}}
	result := block{kind: translate.PartServerToolResult, server: &translate.ServerToolUse{ID: id, Kind: translate.ServerWebSearch, Results: []translate.WebResult{
		{URL: "https://louter.example/docs", Title: "louter docs", PageAge: "1 day ago", Encrypted: "mock-encrypted-1"},
		{URL: "https://caddy.example/modules", Title: "Caddy modules", Encrypted: "mock-encrypted-2"},
	}}}
	// The answer cites the first page for "a Caddy module".
	text := block{kind: translate.PartText, deltas: words("Louter is a Caddy module that translates between LLM protocols."),
		cites: []translate.Citation{{URL: "https://louter.example/docs", Title: "louter docs", CitedText: "a Caddy module", Start: 10, End: 24, EncryptedIndex: "mock-index-1"}}}
	blocks := []block{call, result, text}
	if x.spec.protocol == translate.ProtocolGemini {
		blocks = []block{text, call, result}
	}
	return &reply{blocks: blocks, stop: translate.StopEndTurn}
}

package caddymodule

import (
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// Anthropic's compact_20260112 edit on a backend without context editing
// (translate.EditContext): past the edit's trigger the translation asks
// editSummarizer for a summary of the history before the newest user
// turn. It asks the routed model through the summary turn that
// /v1/responses/compact and inline Responses compaction use
// (summaryTurn): the history, encoded as Responses items, goes through the
// chat path again (routing, limits, fallbacks and translation apply), so
// whichever backend serves the model writes the summary. Nothing is
// stored: the client gets the summary in the answer's compaction block and
// sends it back, which replaces the history on the next turn.

// editSummarizer is the translate.Summarizer of a request r routed by
// model.
func (l *Louter) editSummarizer(r *http.Request, model string) translate.Summarizer {
	return func(hist *translate.Request, instructions string) (string, error) {
		enc, path := summaryTurnProtocol()
		body, err := enc.EncodeRequest(hist)
		if err != nil {
			return "", err
		}
		res := gjson.GetManyBytes(body, "input", "instructions")
		input := []byte(res[0].Raw)
		if !res[0].IsArray() {
			input = []byte("[]")
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = path, ""
		text, _, failed, err := l.summaryTurn(r2, model, res[1], "", input, instructions)
		switch {
		case failed != nil:
			return "", compactFailed(failed, nil)
		case err != nil:
			return "", err
		}
		return text, nil
	}
}

// summaryTurnProtocol is the codec summaryTurn's requests are in (the row
// whose stateful API has compaction: the Responses API's) and the path
// they are served at.
func summaryTurnProtocol() (translate.Codec, string) {
	for _, row := range protocolRows {
		if api := row.stateful; api != nil && api.compaction {
			c, _ := translate.Lookup(row.protocol)
			return c, api.path
		}
	}
	panic("louter: no protocol row serves compaction") // a programming error, caught by every test
}

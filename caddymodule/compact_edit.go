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
		enc, _ := translate.Lookup(translate.ProtocolOpenAIResponses)
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
		r2.URL.Path, r2.URL.RawPath = "/v1/responses", ""
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

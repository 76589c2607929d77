package caddymodule

import (
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/caddymodule/internal/stateful"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// Anthropic's compact_20260112 edit on a backend without context editing
// (translate.EditContext): past the edit's trigger the translation asks
// editSummarizer for a summary of the history before the newest user
// turn. It asks the routed model through the summary turn that
// /v1/responses/compact and inline Responses compaction use
// (stateful.SummaryTurn): the history, encoded as Responses items, goes through the
// chat path again (routing, limits, fallbacks and translation apply), so
// whichever backend serves the model writes the summary. Nothing is
// stored: the client gets the summary in the answer's compaction block and
// sends it back, which replaces the history on the next turn. With
// pause_after_compaction the answer is the block alone (answerPaused).

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
		text, _, failed, err := stateful.SummaryTurn(l.chatTurn, r2, model, res[1], "", input, instructions)
		switch {
		case failed != nil:
			return "", stateful.CompactFailed(failed, nil)
		case err != nil:
			return "", err
		}
		return text, nil
	}
}

// summaryTurnProtocol is the codec stateful.SummaryTurn's requests are in (the row
// whose stateful API has compaction: the Responses API's) and the path
// they are served at.
func summaryTurnProtocol() (translate.Codec, string) {
	for _, row := range protocolRows {
		if api := row.stateful; api != nil && api.Compacts() {
			c, _ := translate.Lookup(row.protocol)
			return c, api.Path()
		}
	}
	panic("louter: no protocol row serves compaction") // a programming error, caught by every test
}

// answerPaused answers a request whose compact_20260112 edit paused after
// compacting (pause_after_compaction): the compaction block alone, with
// stop reason compaction, in the client's protocol, streamed when req
// streams. No backend is asked.
func answerPaused(w http.ResponseWriter, client translate.Codec, req *translate.Request) error {
	if !req.Stream {
		body, err := client.EncodeResponse(&translate.Response{StopReason: translate.StopCompaction}, req)
		if err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, body)
	}
	out := &stream.SSEOutput{}
	defer out.Release()
	enc := client.NewStreamEncoder(req)
	for _, ev := range [...]translate.Event{{Type: translate.EventMessageStart}, {Type: translate.EventMessageStop, Stop: translate.StopCompaction}} {
		enc.Encode(out, &ev)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(out.Bytes())
	return err
}

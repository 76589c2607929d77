package caddymodule

import (
	"slices"

	"github.com/louter/louter/translate"
)

// A backend that ran a web search or fetch reports it in its answer; the
// client codecs show it where their protocol can (translate's
// server_tool_results.go). An OpenAI Chat client cannot: its encoders
// leave the calls and results out, and this observer counts that, once
// per answer, in louter_dropped_fields_total (field "server_tool_results")
// and the exchange's louter_dropped, as every other thing a translation
// leaves out is counted.

// serverToolDrops watches an attempt for server tool blocks its client
// cannot be shown.
type serverToolDrops struct {
	nopObserver
	q    *chatRequest
	seen bool
}

// watchServerToolDrops registers the observer when the client's protocol
// cannot show server tool results.
func (q *chatRequest) watchServerToolDrops(rw *responseWriter) {
	if rw.passthrough || translate.ShowsServerToolResults(q.ep.protocol) {
		return
	}
	rw.addObserver(&serverToolDrops{q: q}, hookEvent|hookResponse)
}

func (o *serverToolDrops) onEvent(_ *responseWriter, ev *translate.Event) {
	if ev.Type == translate.EventBlockStart && (ev.Block == translate.BlockServerToolCall || ev.Block == translate.BlockServerToolResult) {
		o.drop()
	}
}

func (o *serverToolDrops) onResponse(_ *responseWriter, resp *translate.Response) {
	for i := range resp.Parts {
		if t := resp.Parts[i].Type; t == translate.PartServerToolCall || t == translate.PartServerToolResult {
			o.drop()
			return
		}
	}
}

func (o *serverToolDrops) drop() {
	if o.seen {
		return
	}
	o.seen = true
	o.q.dropped = append(slices.Clip(o.q.dropped), translate.ServerToolResultsDrop)
}

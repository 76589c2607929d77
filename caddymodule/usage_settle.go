package caddymodule

import (
	"github.com/louter/louter/limits"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Limits, budgets and the ledger count what the backend reports. An
// attempt that ends without a report — a stream cut before its usage, a
// backend that ignores stream_options.include_usage, a JSON answer
// without usage — is not free: it is counted on an estimate, the input's
// (the one admit took, client_limits.go) and the output's, counted from
// the text that was answered (tokencount.EstimateText, piece by piece, so
// nothing is kept). A stream that reported some usage and then failed is
// counted at the larger of the reported output and the counted one: an
// Anthropic stream's message_start says one output token. The text is
// only counted for requests whose usage counts (access.countsUsage), and
// only those ask an OpenAI Chat stream for its usage.

// outputCount counts the output of a response whose usage counts.
type outputCount struct {
	on     bool
	tokens int64
	// dec decodes a passthrough stream's events (which are otherwise only
	// validated), to count their text.
	dec translate.StreamDecoder
	evs []translate.Event
}

// event counts a streamed event's text: text, reasoning and tool call
// arguments all arrive as block deltas.
func (c *outputCount) event(ev *translate.Event) {
	if ev.Type == translate.EventBlockDelta && ev.Text != "" {
		c.tokens += int64(tokencount.EstimateText(ev.Text))
	}
}

// response counts a complete answer's text, when it reported no usage.
func (c *outputCount) response(resp *translate.Response) {
	if !c.on || resp.Usage != (translate.Usage{}) {
		return
	}
	for i := range resp.Parts {
		p := &resp.Parts[i]
		text := p.Text
		if p.Type == translate.PartToolCall && p.ToolCall != nil {
			text = p.ToolCall.Name + p.ToolCall.Arguments
		}
		c.tokens += int64(tokencount.EstimateText(text))
	}
}

// countPassEvent counts the text of a passthrough stream's event
// (stream.PassWatcher.Observe).
func (rw *responseWriter) countPassEvent(name string, data []byte) {
	c := &rw.count
	if c.dec == nil {
		c.dec = rw.backend.codec.NewStreamDecoder()
	}
	c.evs = c.dec.Decode(c.evs[:0], name, data)
	for i := range c.evs {
		c.event(&c.evs[i])
	}
}

// billedUsage is what the attempt that answered used, for the limits and
// the ledger: the usage the backend reported, never below zero, or an
// estimate (estimated) when it reported none; nothing when no answer
// began or the backend refused the request. inputEstimate is the
// request's estimate.
func (o *attemptOutcome) billedUsage(inputEstimate int64) (u limits.Usage, estimated bool) {
	if o.Mode == answerNone || o.Status >= 400 {
		return limits.Usage{}, false
	}
	if o.HasUsage && (o.Usage.InputTokens > 0 || o.Usage.OutputTokens > 0) {
		// The decoders clamp what they read (translate/usage_count.go);
		// this holds for codecs registered elsewhere too.
		u = limits.Usage{Input: int64(max(o.Usage.InputTokens, 0)), Output: int64(max(o.Usage.OutputTokens, 0)),
			CacheRead: int64(max(o.Usage.CacheReadTokens, 0)), CacheWrite: int64(max(o.Usage.CacheWriteTokens, 0))}
		if o.StreamFailed && o.CountedOutput > u.Output {
			u.Output, estimated = o.CountedOutput, true
		}
		return u, estimated
	}
	return limits.Usage{Input: inputEstimate, Output: o.CountedOutput}, true
}

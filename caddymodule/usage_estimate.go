package caddymodule

import (
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Anthropic streams announce the input tokens in their first event,
// message_start, and Gemini streams carry usageMetadata on every chunk;
// Claude Code's context meter and auto-compaction read the first figure.
// A backend that has not reported the input by then gets a local estimate
// announced in its place (tokencount.Quick: a few tens of microseconds for
// a 100 KB request, no allocation), which the backend's counts replace as
// soon as they come, in the final event at the latest. OpenAI backends
// report usage only at the end, and Gemini backends may too (usage on the
// last chunk only), so every backend gets an estimate but those whose
// streams always open with the input. Both facts are in the protocols'
// rows (protocols.go): earlyUsage of the client's, inputAtStart of the
// backend's.

// inputTokensEstimate returns the estimate a translated streaming request
// needs announced up front, or 0 when none is needed.
func inputTokensEstimate(client translate.Protocol, b *Backend, ir *translate.Request) int {
	if !ir.Stream || !rowOf(client).earlyUsage || rowOf(b.Protocol).inputAtStart {
		return 0
	}
	return tokencount.Quick(ir, rowOf(b.Protocol).tokenFraming)
}

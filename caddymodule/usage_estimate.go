package caddymodule

import (
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Anthropic streams announce the input tokens in their first event,
// message_start, and Gemini streams carry usageMetadata on every chunk;
// Claude Code's context meter and auto-compaction read the first figure.
// OpenAI backends report usage only at the end of a stream, so for them
// louter announces a local estimate (tokencount.Quick: a few tens of
// microseconds for a 100 KB request, no allocation), which the backend's
// exact counts replace in the final event. Anthropic backends announce the
// input in their message_start and Gemini backends in every chunk, so
// nothing is estimated for them.

// earlyUsageClients are the client protocols whose streams report input
// usage before the end.
var earlyUsageClients = map[translate.Protocol]bool{
	translate.ProtocolAnthropic: true,
	translate.ProtocolGemini:    true,
}

// lateUsageBackends are the backend protocols that report input usage only
// at the end of a stream.
var lateUsageBackends = map[translate.Protocol]bool{
	translate.ProtocolOpenAIChat:      true,
	translate.ProtocolOpenAIResponses: true,
}

// inputTokensEstimate returns the estimate a translated streaming request
// needs announced up front, or 0 when none is needed.
func inputTokensEstimate(client translate.Protocol, b *Backend, ir *translate.Request) int {
	if !ir.Stream || !earlyUsageClients[client] || !lateUsageBackends[b.Protocol] {
		return 0
	}
	return tokencount.Quick(ir, b.Protocol)
}

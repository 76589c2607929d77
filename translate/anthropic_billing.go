package translate

import "strings"

// Claude Code puts an attribution line first in its system prompt, as a
// text block of its own:
//
//	x-anthropic-billing-header: cc_version=2.1.330.8fa; cc_entrypoint=sdk-cli;
//
// The three hex digits after the version are a fingerprint of the
// conversation's first user message, so the line differs between
// conversations and between sub-agents. A backend that caches by exact
// token prefix (llama-server, vLLM, SGLang, and OpenAI-style prompt
// caches) sees the whole system prompt and tool list behind it as new for
// every conversation. Anthropic reads the line for attribution; other
// backends have no use for it, and StripBillingHeader removes it for them.

// BillingHeaderPrefix starts Claude Code's attribution line, which Claude
// Code itself recognises by this prefix.
const BillingHeaderPrefix = "x-anthropic-billing-header:"

// StripBillingHeader removes Claude Code's attribution line from the start
// of r's system prompt: the whole first part when it is the line (Claude
// Code sends it as a block of its own), or the first line of a prompt that
// starts with it. It records the removal on r and reports whether there
// was one.
func StripBillingHeader(r *Request) bool {
	if len(r.System) == 0 || r.System[0].Type != PartText || !strings.HasPrefix(r.System[0].Text, BillingHeaderPrefix) {
		return false
	}
	text := r.System[0].Text
	if _, rest, ok := strings.Cut(text, "\n"); ok && strings.TrimSpace(rest) != "" {
		sys := make([]Part, len(r.System))
		copy(sys, r.System)
		sys[0].Text = rest
		r.System = sys
	} else {
		r.System = r.System[1:]
	}
	r.Drop("system", "Claude Code's x-anthropic-billing-header line, which would defeat the backend's prefix cache")
	return true
}

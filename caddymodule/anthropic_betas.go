package caddymodule

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Anthropic's beta flags (anthropic-beta: a,b) per backend kind. Claude
// Code sends a dozen in every request, and the list changes with each
// release; what a backend does with one it does not know differs, bridged
// so:
//
//   - Anthropic takes the header, passed on with the client's request
//     (anthropicBackendHeaders), and ignores what it does not use.
//   - Bedrock takes them in the body, as the anthropic_beta array, and
//     refuses the whole request (400 "invalid beta flag") for a single
//     value it does not know; Vertex AI takes the header and refuses
//     unknown values too. A request translated for either keeps only the
//     values its row's betaRule accepts, renamed where the backend knows
//     a beta under another name.
//
// A backend's drop_betas adjusts the rule: its patterns are read after the
// row's, the last that matches a value deciding, a plain glob leaving the
// value out and a "!glob" keeping it ("drop_betas !my-beta-*" lets a new
// beta through to Bedrock before louter's list names it). Every value left
// out is a Request.Dropped entry, counted in louter_dropped_fields_total.

// betaRule is how backends of a protocol take beta flags when the request
// is translated for them.
type betaRule struct {
	// inBody: the values go in the body's anthropic_beta array, not in
	// the anthropic-beta header.
	inBody bool
	// accepts are the values the backend is known to take, as globs;
	// every other value is left out.
	accepts []string
	// renames are values the backend takes under another name.
	renames map[string]string
}

// cloudBetas are the values Bedrock is known to take (Envoy AI Gateway's
// allow-list, confirmed against Bedrock by live probes: CLOUD.md); Vertex
// AI's Claude takes the same set as far as its documentation tells.
// Known to be refused: prompt-caching-2024-07-31 (caching needs no beta
// there), extended-cache-ttl-2025-04-11, files-api-2025-04-14,
// code-execution-2025-05-22, memory-2025-08-18.
var cloudBetas = []string{
	"context-1m-2025-08-07", "context-management-2025-06-27",
	"interleaved-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14",
	"token-efficient-tools-2025-02-19", "output-128k-2025-02-19",
	"computer-use-2024-10-22", "computer-use-2025-01-24",
	"tool-search-tool-2025-10-19", "effort-2025-11-24",
}

// bedrockBetas is the bedrock row's rule: the body's anthropic_beta;
// Claude Code's advanced-tool-use beta is tool search's there.
var bedrockBetas = &betaRule{inBody: true, accepts: cloudBetas,
	renames: map[string]string{"advanced-tool-use-2025-11-20": "tool-search-tool-2025-10-19"}}

// vertexBetas is the vertex_anthropic row's rule: the header.
var vertexBetas = &betaRule{accepts: cloudBetas,
	renames: map[string]string{"advanced-tool-use-2025-11-20": "tool-search-tool-2025-10-19"}}

// patterns is the rule as drop_betas patterns: every value left out but
// those accepted.
func (rule *betaRule) patterns() []string {
	p := make([]string, 0, 1+len(rule.accepts))
	p = append(p, "*")
	for _, a := range rule.accepts {
		p = append(p, "!"+a)
	}
	return p
}

// clientBetas returns the anthropic-beta values of the client's headers,
// comma-separated lists split, in order.
func clientBetas(h http.Header) []string {
	var out []string
	for _, line := range h.Values("Anthropic-Beta") {
		for v := range strings.SplitSeq(line, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// apply returns the values of betas backend b takes under rule, each once,
// and the Dropped entries of those it leaves out.
func (rule *betaRule) apply(b *Backend, betas []string) (kept, dropped []string) {
	for _, v := range betas {
		name := v
		if to, ok := rule.renames[v]; ok {
			name = to
		}
		if !betaKept(append(rule.patterns(), b.DropBetas...), name) {
			dropped = append(dropped, "anthropic-beta: "+v+" is dropped for backend "+b.name)
			continue
		}
		if !slices.Contains(kept, name) {
			kept = append(kept, name)
		}
	}
	return kept, dropped
}

// betaKept reports whether a backend's drop_betas patterns keep v: the
// last pattern that matches decides, "!glob" keeping and "glob" dropping;
// none matching keeps it.
func betaKept(patterns []string, v string) bool {
	keep := true
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if ok, _ := path.Match(strings.TrimPrefix(p, "!"), v); ok {
			keep = neg
		}
	}
	return keep
}

// translatedBetas carries the client's beta flags to a backend whose row
// has a betaRule, for a translated request: into the body (returned) or
// the header h, as the rule says. It returns the body and the Dropped
// entries.
func translatedBetas(b *Backend, rule *betaRule, betas []string, h http.Header, body []byte) ([]byte, []string) {
	kept, dropped := rule.apply(b, betas)
	h.Del("Anthropic-Beta")
	if len(kept) == 0 {
		return body, dropped
	}
	if !rule.inBody {
		h.Set("Anthropic-Beta", strings.Join(kept, ","))
		return body, dropped
	}
	// The encoder may have named betas the body needs (context_management's
	// on Bedrock): those stay, first.
	var all []string
	for _, v := range gjson.GetBytes(body, "anthropic_beta").Array() {
		all = append(all, v.Str)
	}
	for _, v := range kept {
		if !slices.Contains(all, v) {
			all = append(all, v)
		}
	}
	if out, err := sjson.SetBytes(body, "anthropic_beta", all); err == nil {
		body = out
	}
	return body, dropped
}

package caddymodule

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/louter/louter/translate"
)

// What the Anthropic row (protocols.go) does for today's Anthropic
// clients — Claude Code and the SDK majors that speak API version
// 2026-10-21 — beyond translating their bodies. It differs from the other
// rows in four ways, bridged so:
//
//   - Two API versions. A client names its version in anthropic-version,
//     and a backend is configured with the version it speaks
//     (Backend.AnthropicVersion). A client of 2026-10-21 is refused what
//     that version refuses whatever the backend (anthropicCheckRequest);
//     a backend of 2026-10-21, or any backend asked for Claude 4.7 or
//     later, never gets temperature, top_p or top_k (anthropicSampling);
//     the backend gets its own version in the header and its key in the
//     header its version reads (anthropicBackendHeaders).
//   - Betas. anthropic-beta goes only to Anthropic backends, less the
//     values the backend's drop_betas names; each value left out is
//     counted as a dropped field.
//   - The gateway contract. Claude Code warms up with HEAD <base>/api/hello
//     (answered at once, whatever the site's other handlers do), and
//     reads request-id from every answer, streams included: an answer
//     without one gets one (anthropicRequestID).
//   - Workspaces. anthropic-workspace-id passes on same-protocol
//     requests, and back, like the version headers.

// anthropicProbes are the paths, below louter's prefix, that Claude Code
// probes with HEAD at start-up.
var anthropicProbes = []string{"/api/hello"}

// anthropicCheckRequest refuses a Messages request Anthropic refuses: one
// without max_tokens, which Anthropic requires and Claude Code always
// sends (a translating backend would otherwise answer what Anthropic
// would not, under a limit of the backend's choosing), and what the
// client's API version does not allow (translate.CheckAnthropicVersion).
// count_tokens, which takes no max_tokens, is not checked here.
func anthropicCheckRequest(h http.Header, body []byte, top *translate.TopLevel) *translate.Error {
	if !top.LimitsAt[translate.LimitMaxTokens].Found() {
		return &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest,
			Param: "max_tokens", Message: "max_tokens: Field required"}
	}
	return translate.CheckAnthropicVersion(h.Get("Anthropic-Version"), body)
}

// anthropicSampling is the Anthropic row's samplingRule.
var anthropicSampling = &samplingRule{
	refuses: func(b *Backend, model string) bool {
		return translate.AnthropicDropsSampling(b.AnthropicVersion, model)
	},
	strip: translate.DropAnthropicSampling,
}

// anthropicBackendHeaders sets what an Anthropic backend is to get of the
// version headers, and moves the credential into the header its version
// reads. It returns the entries for the anthropic-beta values it left out
// ("anthropic-beta: value ..."), for the dropped-fields count.
//
// Every request gets the backend's configured version when it has one; a
// translated request without one gets louter's default (prepare), a
// passthrough keeps the client's. With 2026-10-21 an API key travels as
// Authorization: Bearer, as that version's SDKs send it; with 2023-06-01 a
// client's API key sent as a bearer token (sk-ant-api..., a 2026-10-21
// SDK's habit) moves to x-api-key, while an OAuth token stays a bearer
// token.
func anthropicBackendHeaders(b *Backend, h, cred http.Header) (dropped []string) {
	switch b.AnthropicVersion {
	case translate.AnthropicVersion2026:
		h.Set("Anthropic-Version", b.AnthropicVersion)
		if key := cred.Get("X-Api-Key"); key != "" {
			cred.Del("X-Api-Key")
			cred.Set("Authorization", "Bearer "+key)
		}
	case translate.AnthropicVersion2023:
		h.Set("Anthropic-Version", b.AnthropicVersion)
		if cred.Get("X-Api-Key") == "" {
			if tok, ok := bearerToken(cred.Get("Authorization")); ok && strings.HasPrefix(tok, "sk-ant-api") {
				cred.Del("Authorization")
				cred.Set("X-Api-Key", tok)
			}
		}
	}
	if len(b.DropBetas) == 0 {
		return nil
	}
	betas := h.Values("Anthropic-Beta")
	if len(betas) == 0 {
		return nil
	}
	var kept []string
	for _, line := range betas {
		for v := range strings.SplitSeq(line, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			if !betaKept(b.DropBetas, v) { // anthropic_betas.go
				dropped = append(dropped, "anthropic-beta: "+v+" is dropped for backend "+b.name)
				continue
			}
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		h.Del("Anthropic-Beta")
	} else {
		h.Set("Anthropic-Beta", strings.Join(kept, ","))
	}
	return dropped
}

// bearerToken returns the token of an Authorization: Bearer value.
func bearerToken(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if len(v) <= 7 || !strings.EqualFold(v[:7], "bearer ") {
		return "", false
	}
	return strings.TrimSpace(v[7:]), true
}

// requestIDObserver gives an answer to an Anthropic client a request-id
// when the backend's answer has none, streams included: Claude Code puts
// it into its transcripts and errors, and usage tools de-duplicate on it.
// A passthrough answer from Anthropic keeps Anthropic's own.
type requestIDObserver struct{ nopObserver }

func (requestIDObserver) onBackendHeader(rw *responseWriter, _ int) {
	if rw.header.Get("Request-Id") == "" {
		rw.header.Set("Request-Id", newRequestID())
	}
}

// newRequestID returns an id in the shape of Anthropic's: req_ and 24
// random characters.
func newRequestID() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return "req_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// validateVersions checks anthropic_version and drop_betas: a known
// version and valid globs, on a backend whose protocol has versions and
// betas (its row's backendHeaders).
func (b *Backend) validateVersions(name string) []error {
	if b.AnthropicVersion == "" && len(b.DropBetas) == 0 {
		return nil
	}
	row := rowOf(b.Protocol)
	if b.AnthropicVersion != "" && row.backendHeaders == nil {
		return []error{fmt.Errorf("backend %q: anthropic_version applies to Anthropic Messages backends only, not %q", name, b.Protocol)}
	}
	if len(b.DropBetas) > 0 && row.backendHeaders == nil && row.betas == nil {
		return []error{fmt.Errorf("backend %q: drop_betas applies to backends that take Anthropic's beta flags (anthropic, bedrock, vertex_anthropic), not %q", name, b.Protocol)}
	}
	var errs []error
	if b.AnthropicVersion != "" && !translate.KnownAnthropicVersion(b.AnthropicVersion) {
		errs = append(errs, fmt.Errorf("backend %q: anthropic_version %q: want %s or %s", name, b.AnthropicVersion, translate.AnthropicVersion2023, translate.AnthropicVersion2026))
	}
	for _, p := range b.DropBetas {
		if _, err := path.Match(strings.TrimPrefix(p, "!"), ""); err != nil {
			errs = append(errs, fmt.Errorf("backend %q: drop_betas %q: %v", name, p, err))
		}
	}
	return errs
}

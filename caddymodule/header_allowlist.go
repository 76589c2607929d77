package caddymodule

import (
	"net/http"
	"strings"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/translate"
)

// Which of the client's headers reach a backend is decided by allowlist:
// louter builds the backend's request, and a header it does not know may
// carry a credential (every provider and gateway has its own). The lists
// below, and the header sets of the protocol rows (protocols.go), are
// documented in docs/security.md; keep them in step.

// forwardedHeaders go from the client to every backend: content
// negotiation, tracing and request ids, plus the headers reverse_proxy owns
// (hop-by-hop headers, which it removes itself, and X-Forwarded-*, which it
// sets or overwrites according to its trusted_proxies).
var forwardedHeaders = headerSet(
	"Accept", "Accept-Language", "Content-Type", "Content-Length", "User-Agent",
	"Traceparent", "Tracestate", "Baggage",
	"X-Request-Id", "X-Correlation-Id", "X-Client-Request-Id",
	"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host",
)

// Each protocol's own headers, passed only when the client speaks the
// backend's protocol (passthrough), and the credential headers such a
// request keeps with pass_client_auth, are in its row (protocols.go:
// ownHeaders, sdkHeaders, passAuthHeaders).

// sdkHeaderPrefix starts the telemetry headers of the Stainless-generated
// Anthropic and OpenAI SDKs (X-Stainless-Lang, -Retry-Count, ...), passed
// on same-protocol pairs of those protocols (protocolRow.sdkHeaders).
const sdkHeaderPrefix = "X-Stainless-"

func headerSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[http.CanonicalHeaderKey(n)] = true
	}
	return m
}

// filterHeaders deletes from h every header not allowed to reach a backend
// of protocol p. passthrough says whether the client speaks p; extra holds
// the backend's forward_headers.
func filterHeaders(h http.Header, p translate.Protocol, passthrough bool, extra map[string]bool) {
	row := rowOf(p)
	own, stainless := row.ownHeaders, row.sdkHeaders
	for k := range h {
		switch {
		case forwardedHeaders[k], extra[k]:
		case passthrough && own[k]:
		case passthrough && stainless && strings.HasPrefix(k, sdkHeaderPrefix):
		default:
			delete(h, k)
		}
	}
}

// takeClientCredentials removes the client's credential headers from h
// and returns those a same-protocol backend of protocol p accepts, as the
// client sent them; with none, the key of a query parameter, moved to the
// header p reads it from.
func takeClientCredentials(h http.Header, p translate.Protocol, queryKey string) http.Header {
	row := rowOf(p)
	keep := row.passAuthHeaders
	cred := make(http.Header)
	for k, v := range h {
		if redact.IsCredentialHeader(k) {
			if keep[k] {
				cred[k] = v
			}
			delete(h, k)
		}
	}
	if !redact.HasKeyHeader(cred) && queryKey != "" {
		row.setKey(cred, queryKey)
	}
	return cred
}

// removeCredentialParams drops every credential parameter of a raw query,
// keeping the other pairs byte for byte and in order.
func removeCredentialParams(raw string) string {
	return redact.MapQuery(raw, func(string) (string, bool) { return "", false })
}

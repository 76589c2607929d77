package caddymodule

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/louter/louter/translate"
)

// Which of the client's headers reach a backend is decided by allowlist:
// louter builds the backend's request, and a header it does not know may
// carry a credential (every provider and gateway has its own). The lists
// below, and the header sets of the protocol rows (protocols.go), are
// documented in the README's Security section; keep them in step.

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

// credentialHeaders are every header any of the four providers, Azure
// OpenAI or an API gateway in front of them reads a credential, or an
// account a credential is billed to, from. None reaches a backend unless
// pass_client_auth is set, and none can be listed in forward_headers.
var credentialHeaders = headerSet(
	"Authorization", "Proxy-Authorization", "Cookie",
	"X-Api-Key", "Api-Key", "Anthropic-Api-Key", "X-Goog-Api-Key",
	"Ocp-Apim-Subscription-Key",
	"Openai-Organization", "Openai-Project", "Chatgpt-Account-Id", "X-Goog-User-Project",
)

// keyHeaders are the credential headers that hold the key itself, in the
// order pass_client_auth looks for the client's key; the others
// (organization, project, account) only go along with it.
var keyHeaders = []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key", "Api-Key", "Anthropic-Api-Key"}

// credentialQueryParams are the query parameters a key can be sent in
// (Gemini's ?key=, Google's ?access_token=, and the usual spellings),
// matched without regard to case: ?KEY= is a key too.
var credentialQueryParams = []string{"key", "api_key", "api-key", "apikey", "access_token"}

func headerSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[http.CanonicalHeaderKey(n)] = true
	}
	return m
}

// isCredentialHeader reports whether a header may carry a credential.
func isCredentialHeader(name string) bool {
	return credentialHeaders[http.CanonicalHeaderKey(name)]
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
		if credentialHeaders[k] {
			if keep[k] {
				cred[k] = v
			}
			delete(h, k)
		}
	}
	if !hasKeyHeader(cred) && queryKey != "" {
		row.setKey(cred, queryKey)
	}
	return cred
}

func hasKeyHeader(h http.Header) bool {
	for _, k := range keyHeaders {
		if h.Get(k) != "" {
			return true
		}
	}
	return false
}

// clientKey returns the API key the client sent, from whichever header or
// query parameter it sent it in.
func clientKey(h http.Header, rawQuery string) string {
	for _, k := range keyHeaders {
		v := strings.TrimSpace(h.Get(k))
		if v == "" {
			continue
		}
		if k == "Authorization" {
			if len(v) <= 7 || !strings.EqualFold(v[:7], "bearer ") {
				continue // Basic or another scheme: not an API key
			}
			v = strings.TrimSpace(v[7:])
		}
		return v
	}
	return queryCredential(rawQuery)
}

// clientSecrets returns every credential value the client sent, in any
// credential header or query parameter, for the scrubber.
func clientSecrets(h http.Header, rawQuery string) []string {
	var out []string
	for k, vs := range h {
		if !credentialHeaders[k] {
			continue
		}
		for _, v := range vs {
			if scheme, token, ok := strings.Cut(strings.TrimSpace(v), " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic")) {
				v = strings.TrimSpace(token)
			}
			out = append(out, v)
		}
	}
	for pair := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if isCredentialParam(k) {
			if uv, err := url.QueryUnescape(v); err == nil {
				out = append(out, uv)
			}
			out = append(out, v)
		}
	}
	return out
}

// queryCredential returns the value of the first credential parameter of a
// raw query, or "".
func queryCredential(raw string) string {
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if isCredentialParam(k) {
			if uv, err := url.QueryUnescape(v); err == nil && uv != "" {
				return uv
			}
		}
	}
	return ""
}

// isCredentialParam reports whether a raw query parameter name, unescaped
// and in any case, is one a key is sent in.
func isCredentialParam(raw string) bool {
	name, err := url.QueryUnescape(raw)
	if err != nil {
		name = raw
	}
	for _, c := range credentialQueryParams {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// removeCredentialParams drops every credential parameter of a raw query,
// keeping the other pairs byte for byte and in order.
func removeCredentialParams(raw string) string {
	return mapQuery(raw, func(string) (string, bool) { return "", false })
}

// mapQuery rewrites the credential parameters of a raw query with fn, which
// returns the pair's new value and whether to keep the pair; the other
// pairs stay byte for byte and in order.
func mapQuery(raw string, fn func(value string) (string, bool)) string {
	if raw == "" {
		return raw
	}
	var out strings.Builder
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, hasValue := strings.Cut(pair, "=")
		if isCredentialParam(k) {
			nv, keep := fn(v)
			if !keep {
				continue
			}
			pair = k
			if hasValue {
				pair += "=" + nv
			}
		}
		if out.Len() > 0 {
			out.WriteByte('&')
		}
		out.WriteString(pair)
	}
	return out.String()
}

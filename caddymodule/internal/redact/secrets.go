package redact

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Package redact says what counts as a secret, in one place: the headers
// and query parameters a credential travels in, the values of them a client
// sent, and the shapes of credentials louter removes from what it writes
// whatever their source; and it scrubs them (scrub.go). The mechanisms that
// act on these live with their features: header filtering
// (caddymodule/header_allowlist.go), the log filter (caddymodule/logfilter),
// the secret writer and recordings. docs/security.md documents these lists;
// keep them in step.
//
// Everything here is safe for concurrent use; nothing retains its input.

// Marker replaces a secret in what louter writes to a client.
const Marker = "[redacted]"

// MinLen is the shortest known secret (a configured or client key)
// scrubbed by value: a shorter one ("test", "x") would blank ordinary words
// in error messages. Real provider keys are far longer.
const MinLen = 8

// LogValue is what a Marker header or query value is logged as,
// Caddy's own word for it.
const LogValue = "REDACTED"

// credentialHeaders are every header any of the four providers, Azure
// OpenAI or an API gateway in front of them reads a credential, or an
// account a credential is billed to, from. None reaches a backend unless
// pass_client_auth is set, and none can be listed in forward_headers.
var credentialHeaders = map[string]bool{ // canonical names
	"Authorization": true, "Proxy-Authorization": true, "Cookie": true,
	"X-Api-Key": true, "Api-Key": true, "Anthropic-Api-Key": true, "X-Goog-Api-Key": true,
	"Ocp-Apim-Subscription-Key": true,
	"Openai-Organization":       true, "Openai-Project": true, "Chatgpt-Account-Id": true, "X-Goog-User-Project": true,
}

// KeyHeaders are the credential headers that hold the key itself, in the
// order pass_client_auth looks for the client's key; the others
// (organization, project, account) only go along with it.
var KeyHeaders = []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key", "Api-Key", "Anthropic-Api-Key"}

// credentialQueryParams are the query parameters a key can be sent in
// (Gemini's ?key=, Google's ?access_token=, and the usual spellings),
// matched without regard to case: ?KEY= is a key too.
var credentialQueryParams = []string{"key", "api_key", "api-key", "apikey", "access_token"}

// IsCredentialHeader reports whether a header may carry a credential.
func IsCredentialHeader(name string) bool {
	return credentialHeaders[http.CanonicalHeaderKey(name)]
}

// IsCredentialParam reports whether a raw query parameter name, unescaped
// and in any case, is one a key is sent in.
func IsCredentialParam(raw string) bool {
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

func HasKeyHeader(h http.Header) bool {
	for _, k := range KeyHeaders {
		if h.Get(k) != "" {
			return true
		}
	}
	return false
}

// ClientKey returns the API key the client sent, from whichever header or
// query parameter it sent it in.
func ClientKey(h http.Header, rawQuery string) string {
	for _, k := range KeyHeaders {
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
	return QueryCredential(rawQuery)
}

// QueryCredential returns the value of the first credential parameter of a
// raw query, or "".
func QueryCredential(raw string) string {
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if IsCredentialParam(k) {
			if uv, err := url.QueryUnescape(v); err == nil && uv != "" {
				return uv
			}
		}
	}
	return ""
}

// ClientSecrets returns every credential value the client sent, in any
// credential header or query parameter, for the scrubber.
func ClientSecrets(h http.Header, rawQuery string) []string {
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
		if IsCredentialParam(k) {
			if uv, err := url.QueryUnescape(v); err == nil {
				out = append(out, uv)
			}
			out = append(out, v)
		}
	}
	return out
}

// patterns are the shapes of provider credentials and internal
// addresses, replaced in what louter writes to a client and to a
// recording whether louter knows the value or not: a backend may echo a
// key it was sent by something behind it, or name the socket it failed
// on. needs is a cheap test a line (and its ASCII lower-case copy) must
// pass for the pattern to match it — ScrubRecordLine skips the pattern
// otherwise, since none has a literal prefix Go's regexp could skip ahead
// with; nil runs the pattern always.
var patterns = []struct {
	re    *regexp.Regexp
	repl  []byte
	needs func(line, lower []byte) bool
}{
	// OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-api03-...,
	// sk-ant-oat01-...) and the many OpenAI-compatible servers that copied
	// the sk- prefix.
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`), []byte(Marker), contains("sk-")},
	// Google API keys and OAuth access tokens.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{20,}`), []byte(Marker), contains("AIza")},
	{regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-.]{8,}`), []byte(Marker), contains("ya29.")},
	// A bearer token of any kind.
	{regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{16,}`), []byte("${1}" + Marker),
		func(line, lower []byte) bool { return bytes.Contains(lower, []byte("bearer")) || foldsToASCII(line) }},
	// A key in a quoted URL's query, under any of credentialQueryParams.
	{regexp.MustCompile(`(?i)([?&](?:` + strings.Join(credentialQueryParams, "|") + `)=)[^&\s"'\\]+`), []byte("${1}" + Marker),
		func(line, lower []byte) bool {
			for _, p := range credentialQueryParams {
				if bytes.Contains(lower, []byte(p+"=")) {
					return true
				}
			}
			return foldsToASCII(line)
		}},
	// IPv4 and bracketed IPv6 socket addresses (host:port).
	{regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}\b`), []byte("[address]"), func(line, _ []byte) bool { return ipv4Port(line) }},
	{regexp.MustCompile(`\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\]:\d{1,5}\b`), []byte("[address]"), contains("]:")},
}

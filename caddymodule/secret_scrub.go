package caddymodule

import (
	"bytes"
	"regexp"
)

// redacted replaces a secret in what louter writes to a client.
const redacted = "[redacted]"

// minSecretLen is the shortest known secret (a configured or client key)
// scrubbed by value: a shorter one ("test", "x") would blank ordinary words
// in error messages. Real provider keys are far longer.
const minSecretLen = 8

// secretPatterns are the shapes of provider credentials and internal
// addresses, replaced in error messages whether louter knows the value or
// not: a backend may echo a key it was sent by something behind it, or
// name the socket it failed on.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl []byte
}{
	// OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-api03-...,
	// sk-ant-oat01-...) and the many OpenAI-compatible servers that copied
	// the sk- prefix.
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`), []byte(redacted)},
	// Google API keys and OAuth access tokens.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{20,}`), []byte(redacted)},
	{regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-.]{8,}`), []byte(redacted)},
	// A bearer token of any kind.
	{regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{16,}`), []byte("${1}" + redacted)},
	// A key in a quoted URL's query.
	{regexp.MustCompile(`(?i)([?&](?:key|api_key|api-key|apikey|access_token)=)[^&\s"'\\]+`), []byte("${1}" + redacted)},
	// IPv4 and bracketed IPv6 socket addresses (host:port).
	{regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}\b`), []byte("[address]")},
	{regexp.MustCompile(`\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\]:\d{1,5}\b`), []byte("[address]")},
}

// scrubSecrets returns p with every known secret and everything shaped
// like a credential or a socket address replaced. It returns p itself when
// there is nothing to replace.
func scrubSecrets(p []byte, known []string) []byte {
	for _, s := range known {
		if len(s) >= minSecretLen && bytes.Contains(p, []byte(s)) {
			p = bytes.ReplaceAll(p, []byte(s), []byte(redacted))
		}
	}
	for _, sp := range secretPatterns {
		if sp.re.Match(p) {
			p = sp.re.ReplaceAll(p, sp.repl)
		}
	}
	return p
}

// scrubString is scrubSecrets for a string.
func scrubString(s string, known []string) string {
	return string(scrubSecrets([]byte(s), known))
}

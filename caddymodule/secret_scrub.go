package caddymodule

import (
	"bytes"
)

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

package redact

import (
	"bytes"
	"strings"
)

// Scrub returns p with every known secret and everything shaped
// like a credential or a socket address replaced. It returns p itself when
// there is nothing to replace.
func Scrub(p []byte, known []string) []byte {
	for _, s := range known {
		if len(s) >= MinLen && bytes.Contains(p, []byte(s)) {
			p = bytes.ReplaceAll(p, []byte(s), []byte(Marker))
		}
	}
	for _, sp := range patterns {
		if sp.re.Match(p) {
			p = sp.re.ReplaceAll(p, sp.repl)
		}
	}
	return p
}

// ScrubString is Scrub for a string.
func ScrubString(s string, known []string) string {
	return string(Scrub([]byte(s), known))
}

// ScrubRecordLine is Scrub for a whole record line, which may be
// megabytes of JSON: the same known secrets and the same patterns,
// but each pattern runs only when the line holds a literal it cannot match
// without. The patterns start with \b or a class, which leaves Go's
// regexp no literal prefix to skip ahead with, so on a 100 KB line each
// costs a full scan; most lines hold none of the literals. A pattern with
// no known literal (one added later) always runs.
func ScrubRecordLine(line []byte, known []string) []byte {
	for _, s := range known {
		if len(s) >= MinLen && bytes.Contains(line, []byte(s)) {
			line = bytes.ReplaceAll(line, []byte(s), []byte(Marker))
		}
	}
	lower := asciiLower(line)
	for _, sp := range patterns {
		if sp.needs != nil && !sp.needs(line, lower) {
			continue
		}
		if sp.re.Match(line) {
			line = sp.re.ReplaceAll(line, sp.repl)
		}
	}
	return line
}

func contains(s string) func(line, lower []byte) bool {
	return func(line, _ []byte) bool { return bytes.Contains(line, []byte(s)) }
}

// foldsToASCII reports whether b holds one of the two non-ASCII letters
// that (?i) matches to ASCII ones: the Kelvin sign (k) and the long s (s);
// asciiLower does not fold them, so such a line runs the pattern.
func foldsToASCII(b []byte) bool {
	return bytes.Contains(b, []byte("\u212a")) || bytes.Contains(b, []byte("\u017f"))
}

// asciiLower returns a copy of b with ASCII letters in lower case (the
// patterns' (?i) folds no other letters into these literals).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// ipv4Port reports whether b holds a colon with a digit after it and
// three dots in the digits and dots before it, as every IPv4 host:port
// does (a time such as 11:40:03 does not).
func ipv4Port(b []byte) bool {
	for i := 1; i+1 < len(b); i++ {
		j := bytes.IndexByte(b[i:len(b)-1], ':')
		if j < 0 {
			return false
		}
		i += j
		if !isDigit(b[i+1]) {
			continue
		}
		dots := 0
		for k := i - 1; k >= 0 && k >= i-15 && (isDigit(b[k]) || b[k] == '.'); k-- {
			if b[k] == '.' {
				dots++
			}
		}
		if dots >= 3 {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// MapQuery rewrites the credential parameters of a raw query with fn, which
// returns the pair's new value and whether to keep the pair; the other
// pairs stay byte for byte and in order.
func MapQuery(raw string, fn func(value string) (string, bool)) string {
	if raw == "" {
		return raw
	}
	var out strings.Builder
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, hasValue := strings.Cut(pair, "=")
		if IsCredentialParam(k) {
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

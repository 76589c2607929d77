package redact

import (
	"bytes"
	"strings"
	"testing"
)

// ScrubRecordLine must redact exactly what Scrub does: its literal
// tests only skip patterns that cannot match.
func TestScrubRecordLineMatchesScrubSecrets(t *testing.T) {
	for i, sp := range patterns {
		if sp.needs == nil {
			t.Errorf("patterns[%d] (%s) has no literal test: it runs on every record line", i, sp.re)
		}
	}
	// Key shapes are joined at run time, so the source trips no scanner.
	pad := strings.Repeat("x", 40)
	inputs := []string{
		`{"text":"nothing to see here, 1.5 and 3:4","time":"2026-11-25T11:40:03.12Z"}`,
		`{"e":"at 192.168.0.10:80"}`,
		`{"k":"` + "sk-" + "ant-api03-abcdefgh12345678" + `"}`,
		`{"k":"` + "AIza" + "SyA12345678901234567890abcd" + `"}`,
		`{"k":"` + "ya29" + ".a0AfH6SMBabcdefgh" + `"}`,
		`{"h":"BeArEr abcdefghijklmnop1234"}`,
		`{"h":"bearer abcdefghijklmnop1234"}`,
		`{"u":"https://x/y?Access_Token=abcdef123456"}`,
		"{\"u\":\"https://x/y?\u212aey=abcdef123456\"}", // the Kelvin sign is a K to (?i)
		`{"u":"https://x/y?alt=sse&KEY=abcdef123456"}`,
		`{"e":"dial tcp 10.1.2.3:8443: refused"}`,
		`{"e":"dial tcp [::1]:8443: refused"}`,
		`{"known":"my-configured-key-0001","p":"` + pad + `"}`,
	}
	known := []string{"my-configured-key-0001"}
	for _, in := range inputs {
		want := Scrub([]byte(in), known)
		got := ScrubRecordLine([]byte(in), known)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestScrubSecrets(t *testing.T) {
	known := []string{"backend-secret-123", "short"}
	tests := []struct{ in, want string }{
		{"Incorrect API key provided: backend-secret-123.", "Incorrect API key provided: [redacted]."},
		{"a short word stays", "a short word stays"}, // under MinLen
		// Key-shaped fixtures are joined at run time, so the source holds
		// nothing a secret scanner would take for a real key.
		{"key sk-" + "proj-AbC123_xyz-0987654321 is invalid", "key [redacted] is invalid"},
		{"sk-ant-" + "api03-abcdefghij-KLMNOP_qrs", "[redacted]"},
		{"Incorrect API key provided: sk-1234567890abcdef", "Incorrect API key provided: [redacted]"},
		{"API key not valid: AI" + "zaSyA1234567890abcdefghijklmnopqrstu", "API key not valid: [redacted]"},
		{"token ya29.a0AfH6SMBx-abc_def", "token [redacted]"},
		{"got Authorization: Bearer eyJhbGciOi.J9.abc", "got Authorization: Bearer [redacted]"},
		{"expected Bearer authentication", "expected Bearer authentication"}, // a word, not a token
		{`fetching "https://x.googleapis.com/v1?alt=sse&key=qk123&b=1"`, `fetching "https://x.googleapis.com/v1?alt=sse&key=[redacted]&b=1"`},
		{"dial tcp 10.0.3.7:8080: connection refused", "dial tcp [address]: connection refused"},
		{"dial tcp [fd00::1]:443: refused", "dial tcp [address]: refused"},
		{"version 1.2.3.4 and ratio 3:1 and task-list", "version 1.2.3.4 and ratio 3:1 and task-list"},
		{"no secrets here", "no secrets here"},
	}
	for _, tt := range tests {
		if got := string(Scrub([]byte(tt.in), known)); got != tt.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

package caddymodule

import (
	"bytes"
	"strings"
	"testing"
)

// scrubRecordLine must redact exactly what scrubSecrets does: its literal
// tests only skip patterns that cannot match.
func TestScrubRecordLineMatchesScrubSecrets(t *testing.T) {
	for i, sp := range secretPatterns {
		if sp.needs == nil {
			t.Errorf("secretPatterns[%d] (%s) has no literal test: it runs on every record line", i, sp.re)
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
		want := scrubSecrets([]byte(in), known)
		got := scrubRecordLine([]byte(in), known)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

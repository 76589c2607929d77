package translate

import (
	"regexp"
	"testing"
)

// TestOwnID: an answer's id keeps the client protocol's shape: its own
// kept, another protocol's replaced by a stand-in that depends on it alone
// (a stream's start and end, and a replay, agree), none minted afresh.
func TestOwnID(t *testing.T) {
	for _, tt := range []struct {
		id, prefix string
		same       bool // id comes back unchanged
	}{
		{"msg_01XFDUDYJgAACzvnptvVoYEL", "msg_", true},
		{"msg_bdrk_0123", "msg_", true},
		{"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "msg_", false},
		{"resp_68af", "msg_", false},
		{"kq3yZ-Gemini-responseId", "msg_", false},
		{"msg_", "msg_", false}, // a bare prefix is no id
		{"chatcmpl-123", "chatcmpl-", true},
		{"msg_01XFDUDYJgAACzvnptvVoYEL", "chatcmpl-", false},
		{"", "msg_", false},
	} {
		got := ownID(tt.id, tt.prefix)
		if tt.same {
			if got != tt.id {
				t.Errorf("ownID(%q, %q) = %q, want it unchanged", tt.id, tt.prefix, got)
			}
			continue
		}
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(tt.prefix) + `[0-9a-f]{24}$`).MatchString(got) {
			t.Errorf("ownID(%q, %q) = %q, want %s and 24 hex digits", tt.id, tt.prefix, got, tt.prefix)
		}
		again := ownID(tt.id, tt.prefix)
		if tt.id != "" && again != got {
			t.Errorf("ownID(%q, %q): %q, then %q; want the same stand-in", tt.id, tt.prefix, got, again)
		}
		if tt.id == "" && again == got {
			t.Errorf("ownID(\"\", %q) minted %q twice", tt.prefix, got)
		}
	}
}

package dialect

import (
	"bytes"
	"strings"
)

// The markup a ContentParser recognises. Every marker starts with '<' and
// holds no other '<', so a scan can jump from '<' to '<' and a marker
// split across chunks is always a suffix starting at the last '<' looked at.
const (
	tagToolCall     = "<tool_call>"
	tagToolCallEnd  = "</tool_call>"
	tagFunction     = "<function="
	tagFunctionEnd  = "</function>"
	tagParameter    = "<parameter="
	tagParameterEnd = "</parameter>"
	tagThink        = "<think>"
	tagThinkEnd     = "</think>"
)

// markerAt reports which marker s starts with. When s is too short to tell
// but is the beginning of one, partial is true and the caller must wait for
// more input before deciding.
func markerAt(s string, markers []string) (which int, partial bool) {
	for k, m := range markers {
		if len(s) >= len(m) && s[:len(m)] == m {
			return k, false
		}
	}
	for _, m := range markers {
		if len(s) < len(m) && m[:len(s)] == s {
			return -1, true
		}
	}
	return -1, false
}

// scanMarkers finds the first marker in s at or after from. It returns the
// marker's offset and index, or, when none is complete, the offset of a
// suffix of s that could still begin one (to be held back) and -1, or len(s)
// and -1.
func scanMarkers(s string, from int, markers []string) (at, which int) {
	for i := from; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
		k, partial := markerAt(s[i:], markers)
		if k >= 0 || partial {
			return i, k
		}
	}
	return len(s), -1
}

// scanMarkersBytes is scanMarkers for a buffered tool call.
func scanMarkersBytes(b []byte, from int, markers []string) (at, which int) {
	for i := from; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		i += j
		// Only a marker's worth of bytes is converted, which the compiler
		// keeps on the stack.
		k, partial := markerAt(string(b[i:min(len(b), i+maxMarkerLen)]), markers)
		if k >= 0 || partial {
			return i, k
		}
	}
	return len(b), -1
}

// maxMarkerLen is the length of the longest marker of any set.
const maxMarkerLen = len(harmonyConstrain)

// skipSpace returns the offset of the first byte of s that is not
// whitespace, or len(s).
func skipSpace(s string) int {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return i
		}
	}
	return len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

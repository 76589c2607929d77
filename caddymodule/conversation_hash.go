package caddymodule

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/jsonwire"
	"github.com/louter/louter/translate"
)

// firstTurnHash hashes the text of the system prompt and of the first
// message of the conversation that is not a system prompt: OpenAI Chat and
// Responses carry theirs as leading system or developer messages, which
// are hashed, and the first message after them is the user's. Counting a
// fixed number of messages instead would take the assistant's answer into
// the key of a conversation with no system message, from the second turn
// on. Only text is hashed, not raw JSON: Claude Code moves cache_control
// breakpoints from turn to turn, which changes the bytes but not the
// conversation. sys and msgs are where the body scan found the members
// (translate.TopLevel), so only those are read.
func firstTurnHash(body []byte, sys, msgs translate.Span) string {
	member := func(at translate.Span) string {
		if !at.Found() {
			return ""
		}
		return unsafe.String(&body[at.Start], at.End-at.Start) // read only; nothing of it is kept
	}
	w := textHash{h: xxhash.New()}
	w.value(member(sys), 0, 0, true)
	ms := member(msgs)
	i := skipSpace(ms, 0)
	if i < len(ms) && (ms[i] == '[' || ms[i] == '{') {
		// Each element (or, for an object, each member's value) is a
		// message; the first that is not a system prompt ends the first turn.
		w.elements(ms, i, 0, func(m string) bool {
			w.value(m, 0, 0, true)
			return isSystemMessage(gjson.Parse(m))
		})
	} else {
		w.value(ms, i, 0, true) // Responses: input may be one string
	}
	if w.n == 0 {
		return ""
	}
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], w.h.Sum64())
	return "hash:" + hex.EncodeToString(sum[:])
}

// isSystemMessage reports whether a message is a system prompt carried
// as a message (OpenAI Chat's and Responses' system and developer roles).
// No other protocol has these roles, so no protocol needs naming.
func isSystemMessage(m gjson.Result) bool {
	if !m.IsObject() {
		return false
	}
	switch m.Get("role").Str {
	case "system", "developer":
		return true
	}
	return false
}

// textSeparator ends each text hashed, so "ab","c" and "a","bc" differ.
var textSeparator = [1]byte{0}

// textHash writes every "text" string of a JSON value to h: the value
// itself when it is a string; in arrays, every element; in objects, the
// values of "text", "content" and "parts" (so it reads every protocol's
// message shapes alike, content strings, content blocks, Gemini parts, and
// skips "cache_control" and other non-text members), at most 8 levels
// deep. Each string is written unescaped, the way gjson's Str holds it,
// followed by a separator, and counted in n.
//
// It walks the raw bytes the body scan located rather than a gjson
// Result because gjson unescapes every string it iterates over into a new
// one, and the hash runs on every streamed request without a session id,
// over the whole system prompt: here an escape-free run of a string goes
// to the hash as it lies in the body, and an escape as its few bytes.
// The body was validated by the scan; on anything malformed the walk
// stops, it never reads past the value.
type textHash struct {
	h *xxhash.Digest
	n int
}

// value walks the JSON value at s[i:] (after optional space), depth
// levels down, and returns the index just past it. hash is false for a
// value that is only skipped.
func (w *textHash) value(s string, i, depth int, hash bool) int {
	i = skipSpace(s, i)
	if i >= len(s) {
		return len(s)
	}
	hash = hash && depth <= 8 // messages are shallow; bound the walk
	switch s[i] {
	case '"':
		end, esc := stringEnd(s, i)
		if hash && end-i >= 2 {
			if esc {
				w.unescaped(s[i+1 : end-1])
			} else {
				_, _ = w.h.WriteString(s[i+1 : end-1])
			}
			_, _ = w.h.Write(textSeparator[:])
			w.n++
		}
		return end
	case '[', '{':
		if !hash {
			return skipContainer(s, i)
		}
		return w.elements(s, i, depth, nil)
	default: // a number or literal: no text
		j := i + 1
		for j < len(s) && !isDelimiter(s[j]) {
			j++
		}
		return j
	}
}

// elements walks the array or object at s[i] (s[i] is '[' or '{'), depth
// levels down, and returns the index just past it. With each nil, it
// hashes every element of an array and the text members of an object.
// With each set, it hands each element (or each member's value, as gjson's
// ForEach does) to each instead, until each returns false.
func (w *textHash) elements(s string, i, depth int, each func(string) bool) int {
	obj := s[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			return len(s)
		}
		if s[i] == closer {
			return i + 1
		}
		want := true
		if obj {
			if s[i] != '"' {
				return len(s) // malformed
			}
			end, esc := stringEnd(s, i)
			want = isTextMember(s[i:end], esc)
			i = skipSpace(s, end)
			if i >= len(s) || s[i] != ':' {
				return len(s)
			}
			i++
		}
		start := skipSpace(s, i)
		if each != nil {
			i = w.value(s, start, depth+1, false)
			if i <= start || !each(s[start:i]) {
				return len(s)
			}
		} else if i = w.value(s, start, depth+1, want); i <= start {
			return len(s)
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// isTextMember reports whether a member's name (quoted, as in the body)
// is one whose value holds text: "text", "content" or "parts".
func isTextMember(quoted string, esc bool) bool {
	name := quoted
	if len(name) >= 2 {
		name = name[1 : len(name)-1]
	}
	if esc {
		name = gjson.Parse(quoted).Str // rare: an escaped member name
	}
	switch name {
	case "text", "content", "parts":
		return true
	}
	return false
}

// unescaped writes the JSON string content raw (between its quotes, with
// escapes) to the hash unescaped: the bytes gjson's Str would hold, and
// with its rules (a lone surrogate becomes U+FFFD; the text ends at a
// malformed escape; the scan let no control character through), so the key is what it was
// when gjson unescaped the string first. Runs without escapes are written
// as they are.
func (w *textHash) unescaped(raw string) {
	var buf [8]byte
	for len(raw) > 0 {
		j := strings.IndexByte(raw, '\\') // the body is valid JSON: no control characters
		if j < 0 {
			j = len(raw)
		}
		_, _ = w.h.WriteString(raw[:j])
		if j == len(raw) || raw[j] < ' ' || j+1 >= len(raw) {
			return
		}
		c, n := raw[j+1], 2
		switch c {
		case '\\', '/', '"':
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			if j+6 > len(raw) {
				return
			}
			r, n := hex4(raw[j+2:]), 6
			if utf16.IsSurrogate(r) && len(raw)-j-6 >= 6 && raw[j+6] == '\\' && raw[j+7] == 'u' {
				r = utf16.DecodeRune(r, hex4(raw[j+8:]))
				n += 6
			}
			_, _ = w.h.Write(buf[:utf8.EncodeRune(buf[:], r)])
			raw = raw[j+n:]
			continue
		default:
			return
		}
		buf[0] = c
		_, _ = w.h.Write(buf[:1])
		raw = raw[j+n:]
	}
}

// hex4 is the value of the four hex digits that start s (gjson's runeit:
// 0 when they are not hex digits).
func hex4(s string) rune {
	n, _ := strconv.ParseUint(s[:4], 16, 64)
	return rune(n)
}

// stringEnd returns the index just past the JSON string starting at s[i]
// (a quote), and whether it has escapes; len(s) when it is not closed. It
// looks for the next quote or backslash eight bytes at a time: the texts
// it crosses are most of a 100 KB request (strings.IndexAny with two bytes
// goes byte by byte).
func stringEnd(s string, i int) (end int, esc bool) {
	j := i + 1
	for {
		for j+8 <= len(s) {
			if m := jsonwire.QuoteOrBackslash(load64(s, j)); m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		for j < len(s) && s[j] != '"' && s[j] != '\\' {
			j++
		}
		if j >= len(s) {
			return len(s), esc
		}
		if s[j] == '"' {
			return j + 1, esc
		}
		esc = true
		j += 2
	}
}

// load64 reads the eight bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// skipContainer returns the index just past the array or object starting
// at s[i], without recursion, however deep it nests.
func skipContainer(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i, _ = stringEnd(s, i)
			i--
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// isDelimiter reports whether c ends a number or literal.
func isDelimiter(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}

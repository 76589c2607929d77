package translate

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// This file holds the small JSON writers the codecs build their bodies with.
// Bodies are assembled by appending bytes, so a request with a 50 KB system
// prompt costs one copy of it, not a map[string]any round trip. Raw subtrees
// (tool schemas, arguments) are appended as they came.
//
// gjson.AppendJSONString exists, but it escapes <, > and & unless a
// package-global switch is flipped; coding prompts are full of those, and the
// escapes would bloat bodies and differ from what the providers send. So we
// write our own string appender.

const jsonHex = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal, for packages that
// write JSON by hand as the codecs do.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// appendJSONString appends s as a JSON string literal. Control characters,
// quotes and backslashes are escaped; invalid UTF-8 becomes U+FFFD so the
// output is always valid JSON; U+2028 and U+2029 are escaped so the output is
// also safe to embed in JavaScript. Runs of plain bytes are copied at once.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendJSONStringContents(dst, s)
	return append(dst, '"')
}

// appendJSONStringContents appends s escaped as appendJSONString does, but
// without the quotes: the contents of a JSON string literal, for texts
// joined into one literal.
func appendJSONStringContents(dst []byte, s string) []byte {
	const high = 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	start := 0
	for i := 0; i < len(b); {
		// A run of bytes copied as they are: eight at a time while a word
		// holds none that stops it, then byte by byte up to the one that
		// does. Prose goes by words; code, with an escape every few bytes,
		// mostly by bytes, where one table load decides.
		for i+8 <= len(b) {
			v := binary.LittleEndian.Uint64(b[i:])
			if m := jsonSpecialBytes(v) | v&high; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(b) && jsonWriteSafe[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		// Non-ASCII text: rune after rune while it lasts.
		for i < len(b) && b[i] >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				start = i + size
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[r&0xf])
				start = i + size
			}
			i += size
		}
	}
	return append(dst, s[start:]...)
}

// jsonWriteSafe marks the bytes a JSON string literal holds as they are:
// printable ASCII other than the quote and the backslash.
var jsonWriteSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONKey appends a member name and its colon: "key":
func appendJSONKey(dst []byte, key string) []byte {
	dst = appendJSONString(dst, key)
	return append(dst, ':')
}

// appendJSONComma appends a comma unless dst is empty or ends in an opening
// brace, an opening bracket or a colon, so members and elements can be
// appended without tracking whether one came before.
func appendJSONComma(dst []byte) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' && dst[n-1] != '[' && dst[n-1] != ':' {
		dst = append(dst, ',')
	}
	return dst
}

// appendJSONRawOrNull appends raw, which must be valid JSON, or null when it
// is empty.
func appendJSONRawOrNull(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// appendJSONStringOrNull appends s as a JSON string, or null when it is
// empty.
func appendJSONStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, s)
}

// appendJSONInt appends an integer.
func appendJSONInt(dst []byte, n int64) []byte {
	return strconv.AppendInt(dst, n, 10)
}

// appendJSONFloat appends a number in its shortest exact form. JSON has no
// NaN or infinities; they become null.
func appendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendJSONBool appends true or false.
func appendJSONBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

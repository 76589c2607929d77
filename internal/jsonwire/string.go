// Package jsonwire holds the JSON string writer louter's hand-written
// encoders share: translate's codecs build request and response bodies
// with it, and record writes its record lines with it. Bodies are
// assembled by appending bytes, so a request with a 50 KB system prompt
// costs one copy of it, not a map[string]any round trip.
//
// encoding/json and gjson.AppendJSONString escape <, > and & (the latter
// unless a package-global switch is flipped); coding prompts are full of
// those, and the escapes would bloat bodies and differ from what the
// providers send. So the writer is louter's own.
//
// JSON scanning stays in package translate, its only user.
package jsonwire

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal. Control characters,
// quotes and backslashes are escaped; invalid UTF-8 becomes U+FFFD so the
// output is always valid JSON; U+2028 and U+2029 are escaped so the output
// is also safe to embed in JavaScript. Runs of plain bytes are copied at
// once.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendContents(dst, s, "\ufffd")
	return append(dst, '"')
}

// AppendStringContents appends s escaped as AppendString does, but without
// the quotes: the contents of a JSON string literal, for texts joined into
// one literal.
func AppendStringContents(dst []byte, s string) []byte {
	return appendContents(dst, s, "\ufffd")
}

// AppendStringAsEncodingJSON appends s as a JSON string literal byte for
// byte as encoding/json writes it with SetEscapeHTML(false). It differs
// from AppendString only in invalid UTF-8, whose U+FFFD it writes as the
// escape \ufffd rather than as the character: for writers that promise
// encoding/json's output, as record does.
func AppendStringAsEncodingJSON(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendContents(dst, s, `\ufffd`)
	return append(dst, '"')
}

// appendContents appends s escaped, writing replacement for each byte of
// invalid UTF-8.
func appendContents(dst []byte, s string, replacement string) []byte {
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
			if m := SpecialBytes(v) | v&high; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(b) && writeSafe[b[i]] {
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
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
				dst = append(dst, replacement...)
				start = i + size
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
				start = i + size
			}
			i += size
		}
	}
	return append(dst, s[start:]...)
}

// writeSafe marks the bytes a JSON string literal holds as they are:
// printable ASCII other than the quote and the backslash.
var writeSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// SpecialBytes returns a mask with the high bit set in the bytes of the
// little-endian word v that are special in a JSON string: the quote, the
// backslash and the control characters. Bytes above the lowest special one
// may be marked wrongly (a borrow runs upwards), never those below it, so
// the lowest set bit is exact, and the mask is zero only when no byte is
// special. The writer stops at them; translate's string scanners too.
func SpecialBytes(v uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	q := v ^ (ones * '"')
	b := v ^ (ones * '\\')
	return ((v-ones*0x20) & ^v | (q-ones) & ^q | (b-ones) & ^b) & high
}

// QuoteOrBackslash returns a mask with the high bit set in the bytes of
// the little-endian word v that are a quote or a backslash: the bytes that
// end or escape within a JSON string known to be valid. As with
// SpecialBytes, only the lowest set bit is exact, and the mask is zero
// only when no byte is one of the two.
func QuoteOrBackslash(v uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	q := v ^ (ones * '"')
	b := v ^ (ones * '\\')
	return ((q-ones) & ^q | (b-ones) & ^b) & high
}

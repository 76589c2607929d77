package translate

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/louter/louter/internal/jsonwire"
)

// Unescaping JSON strings, exactly as gjson does (see json_scan.go): after
// a scan (jsonUnescape, jsonUnescapePaired) or during it
// (jsonScanUnescape, for the texts a decoder keeps).

// jsonText is what jsonScanUnescape found in a string.
type jsonText struct {
	end    int  // index of the closing quote
	esc    bool // escapes occur; the text was appended to dst
	high   bool // as jsonScanString's
	paired bool // as jsonUnescapePaired's
}

// jsonScanUnescape scans and validates a string whose opening quote is at
// data[i-1], as jsonScanString does, and unescapes it on the way, as
// jsonUnescapePaired does, for the strings whose text is kept: one pass
// instead of two. Once an escape is found, the contents read so far and
// all that follows are appended to dst, unescaped; without escapes dst is
// returned untouched (the text is data's bytes). When ok is false, what
// was appended to dst is unspecified.
func jsonScanUnescape(data []byte, i int, dst []byte) (jsonText, []byte, bool) {
	t := jsonText{paired: true}
	var seen uint64
	start := i
	// Up to the first special byte the text is data's own.
	for i+8 <= len(data) {
		v := binary.LittleEndian.Uint64(data[i:])
		seen |= v
		if m := jsonwire.SpecialBytes(v); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
		i += 8
	}
	for i < len(data) && !jsonStringSpecial[data[i]] {
		seen |= uint64(data[i])
		i++
	}
	t.high = seen&0x8080808080808080 != 0
	if i >= len(data) {
		return t, dst, false
	}
	switch data[i] {
	case '"':
		t.end = i
		return t, dst, true
	case '\\':
		t.esc = true
		dst = append(dst, data[start:i]...)
		return jsonUnescapeFrom(data, i, dst, t, seen)
	}
	return t, dst, false // a control character
}

// jsonUnescapeFrom is jsonScanUnescape from the backslash at data[i] on. It
// writes dst through an index rather than appending: each word scanned is
// stored whole at the write position, which then moves past the bytes of
// the word before its first special one, so that a run between escapes (a
// line of code, ~40 bytes) costs no copy call, and an escape costs a store.
// The words read are those jsonScanString reads, so high is the same.
func jsonUnescapeFrom(data []byte, i int, dst []byte, t jsonText, seen uint64) (jsonText, []byte, bool) {
	w := len(dst)
	out := dst[:cap(dst)]
	for {
		// Room for a word, or for the longest escape (four bytes).
		if len(out)-w < 8 {
			out = slices.Grow(out[:w], 8)
			out = out[:cap(out)]
		}
		switch data[i] {
		case '"':
			t.end = i
			return t, out[:w], true
		case '\\':
			i++
			if i >= len(data) {
				return t, out[:w], false
			}
			switch c := data[i]; {
			case jsonSimpleEscapes[c] != 0:
				out[w] = jsonSimpleEscapes[c]
				w++
			case c == 'u':
				if !jsonIsHex4(data, i+1) {
					return t, out[:w], false
				}
				r := jsonHex4(data[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					// As gjson: the \u escape that follows is the pair,
					// whatever it holds.
					if i+2 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
						if !jsonIsHex4(data, i+3) {
							return t, out[:w], false
						}
						r = utf16.DecodeRune(r, jsonHex4(data[i+3:]))
						i += 6
					}
					if r == utf8.RuneError || utf16.IsSurrogate(r) {
						t.paired = false
					}
				}
				w += utf8.EncodeRune(out[w:], r)
			default:
				return t, out[:w], false
			}
			i++
		default: // a control character
			return t, out[:w], false
		}
		// The run up to the next special byte, copied a word at a time.
		for i+8 <= len(data) {
			if len(out)-w < 8 {
				out = slices.Grow(out[:w], 8)
				out = out[:cap(out)]
			}
			word, to := data[i:i+8], out[w:w+8]
			v := binary.LittleEndian.Uint64(word)
			seen |= v
			binary.LittleEndian.PutUint64(to, v)
			if m := jsonwire.SpecialBytes(v); m != 0 {
				n := bits.TrailingZeros64(m) / 8
				i += n
				w += n
				break
			}
			i += 8
			w += 8
		}
		if i+8 > len(data) {
			// The last bytes of data, one at a time.
			if len(out)-w < len(data)-i+8 {
				out = slices.Grow(out[:w], len(data)-i+8)
				out = out[:cap(out)]
			}
			for i < len(data) && !jsonStringSpecial[data[i]] {
				seen |= uint64(data[i])
				out[w] = data[i]
				i++
				w++
			}
		}
		t.high = seen&0x8080808080808080 != 0
		if i >= len(data) {
			return t, out[:w], false
		}
	}
}

// jsonIsHex4 reports whether data[i:i+4] are four hex digits.
func jsonIsHex4(data []byte, i int) bool {
	return i+4 <= len(data) && jsonIsHex(data[i]) && jsonIsHex(data[i+1]) && jsonIsHex(data[i+2]) && jsonIsHex(data[i+3])
}

// jsonUnescape appends the contents of a valid JSON string (without its
// quotes) to dst with the escapes resolved exactly as gjson resolves them:
// a \u escape of a surrogate takes the \u escape that follows it as its
// pair, even when the two do not form a valid pair (giving U+FFFD), and a
// lone surrogate becomes U+FFFD.
func jsonUnescape(dst, s []byte) []byte {
	dst, _ = jsonUnescapePaired(dst, s)
	return dst
}

// jsonUnescapePaired is jsonUnescape, also reporting whether every \u
// escape of a surrogate was half of a valid pair (none became U+FFFD).
func jsonUnescapePaired(dst, s []byte) ([]byte, bool) {
	paired := true
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			// The run up to the next backslash is copied at once.
			j := jsonIndexBackslash(s, i)
			dst = append(dst, s[i:j]...)
			if j == len(s) {
				break
			}
			i = j
		}
		i++
		switch c := s[i]; c {
		case 'u':
			r := jsonHex4(s[i+1:])
			i += 5
			if utf16.IsSurrogate(r) {
				if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
					r = utf16.DecodeRune(r, jsonHex4(s[i+2:]))
					i += 6
				}
				if r == utf8.RuneError || utf16.IsSurrogate(r) {
					paired = false
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // the escapes of one letter (the string is valid JSON)
			dst = append(dst, jsonSimpleEscapes[c])
		}
		i++
	}
	return dst, paired
}

// jsonSimpleEscapes maps the letter after a backslash to the byte it
// stands for, for every escape but \u; 0 means no such escape.
var jsonSimpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// jsonIndexBackslash returns the index of the first backslash in s at or
// after i, or len(s). Runs between escapes are often short (a newline
// every line of code), so the first 32 bytes are searched eight at a time
// before bytes.IndexByte, whose setup costs more than such a run.
func jsonIndexBackslash(s []byte, i int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	for k := 0; k < 4 && i+8 <= len(s); k++ {
		v := binary.LittleEndian.Uint64(s[i:]) ^ (ones * '\\')
		if m := (v - ones) &^ v & high; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	if j := bytes.IndexByte(s[i:], '\\'); j >= 0 {
		return i + j
	}
	return len(s)
}

// jsonHex4 reads the four hex digits starting s.
func jsonHex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

package translate

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/louter/louter/internal/jsonwire"
)

// refJSONScanUnescape is jsonScanUnescape as it was before it wrote
// through an index (commit 903d8a8), appending each run and each escape:
// the reference its differential tests hold it to.
func refJSONScanUnescape(data []byte, i int, dst []byte) (jsonText, []byte, bool) {
	t := jsonText{paired: true}
	var seen uint64
	run := i // start of the bytes not yet appended, once esc
	for {
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
			if t.esc {
				dst = append(dst, data[run:i]...)
			}
			t.end = i
			return t, dst, true
		case '\\':
			dst = append(dst, data[run:i]...)
			t.esc = true
			i++
			if i >= len(data) {
				return t, dst, false
			}
			switch c := data[i]; {
			case jsonSimpleEscapes[c] != 0:
				dst = append(dst, jsonSimpleEscapes[c])
			case c == 'u':
				if !jsonIsHex4(data, i+1) {
					return t, dst, false
				}
				r := jsonHex4(data[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					// As gjson: the \u escape that follows is the pair,
					// whatever it holds.
					if i+2 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
						if !jsonIsHex4(data, i+3) {
							return t, dst, false
						}
						r = utf16.DecodeRune(r, jsonHex4(data[i+3:]))
						i += 6
					}
					if r == utf8.RuneError || utf16.IsSurrogate(r) {
						t.paired = false
					}
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return t, dst, false
			}
			i++
			run = i
		default: // a control character
			return t, dst, false
		}
	}
}

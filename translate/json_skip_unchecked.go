package translate

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/louter/louter/internal/jsonwire"
)

// jsonSkipUnchecked returns the index after the string, array or object
// starting at data[i], without validating it: it only follows strings
// (to their closing quote, which bytes.IndexByte finds many bytes at a
// time) and brackets. On valid JSON its end is jsonSkipValue's; on invalid
// JSON it returns some index, or ok false, and never reads out of bounds.
// A caller must validate what it skipped before anything relies on it
// (TopLevel.Validate).
func jsonSkipUnchecked(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	if data[i] == '"' {
		return jsonSkipStringUnchecked(data, i+1)
	}
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := jsonSkipStringUnchecked(data, i+1)
			if !ok {
				return end, false
			}
			i = end - 1
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return i, false
}

// jsonSkipStringUnchecked returns the index after the closing quote of the
// string whose contents start at data[i]: the first quote not escaped,
// that is not preceded by an odd run of backslashes. Most strings of a
// request are short (names, types, roles): their first sixteen bytes are
// read eight at a time for a quote or a backslash, without a call. A
// longer string, or one with an escape, is crossed by bytes.IndexByte from
// quote to quote.
func jsonSkipStringUnchecked(data []byte, i int) (int, bool) {
	start := i
	for n := 0; n < 2 && i+8 <= len(data); n++ {
		// The lowest marked byte is exact.
		if m := jsonwire.QuoteOrBackslash(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			j := i + bits.TrailingZeros64(m)/8
			if data[j] == '"' {
				return j + 1, true
			}
			i = j
			break
		}
		i += 8
	}
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data), false
		}
		q := i + j
		k := q
		for k > start && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

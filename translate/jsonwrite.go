package translate

import (
	"math"
	"strconv"

	"github.com/louter/louter/internal/jsonwire"
)

// This file holds the small JSON writers the codecs build their bodies with.
// Bodies are assembled by appending bytes, so a request with a 50 KB system
// prompt costs one copy of it, not a map[string]any round trip. Raw subtrees
// (tool schemas, arguments) are appended as they came. The string writer is
// internal/jsonwire's, which record's record lines share; it escapes no HTML
// (<, > and & fill coding prompts).

// AppendJSONString appends s as a JSON string literal, for packages that
// write JSON by hand as the codecs do. Control characters, quotes and
// backslashes are escaped; invalid UTF-8 becomes U+FFFD so the output is
// always valid JSON; U+2028 and U+2029 are escaped so the output is also
// safe to embed in JavaScript; <, > and & are not escaped.
func AppendJSONString(dst []byte, s string) []byte { return jsonwire.AppendString(dst, s) }

// appendJSONString is AppendJSONString, under the name the codecs use.
func appendJSONString(dst []byte, s string) []byte { return jsonwire.AppendString(dst, s) }

// appendJSONStringContents appends s escaped as appendJSONString does, but
// without the quotes: the contents of a JSON string literal, for texts
// joined into one literal.
func appendJSONStringContents(dst []byte, s string) []byte {
	return jsonwire.AppendStringContents(dst, s)
}

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

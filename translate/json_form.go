package translate

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file lets an encoder splice a string from the request body into the
// body it writes. A Claude Code request is mostly text (system prompt, tool
// descriptions, file contents returned by tools); translated into another
// protocol the same texts go out again as JSON strings. JSON string contents
// in, JSON string contents out: when the escapes the client wrote are valid
// in the output too, the bytes can be copied as they are instead of
// unescaped by the decoder and escaped again, byte by byte, by the encoder.

// jsonForm is the escaped form a decoder read a string value from: the
// contents of the JSON string literal (without its quotes) as the client
// wrote them. esc is a view into the decoded body (no copy), so a form is
// only as good as the body: the body must not be modified while the IR that
// holds the form is used (see Codec.DecodeRequest).
//
// A form is kept beside the IR field it belongs to (Part.textForm,
// Tool.descForm) and names the decoded text it is the form of (of). An
// encoder passes both to appendJSONText, which uses the form only while the
// field still holds that text: code that rewrites the field (a dialect, a
// caller) needs to know nothing about forms, the stale form is then ignored.
// The zero jsonForm is no form.
type jsonForm struct {
	of  string // the decoded text esc is the escaped form of
	esc string // the escaped contents; "" when there is no form
}

// use reports whether f is the escaped form of s. When the field still
// holds the string the decoder stored, this is a length and pointer
// comparison: Go's string comparison checks for the same data pointer
// before it compares bytes. When the field was reassigned the strings
// differ (or, if equal, the form is still an escaping of the same text), so
// the answer is always right.
func (f jsonForm) use(s string) bool {
	return f.esc != "" && f.of == s
}

// newJSONForm returns the form of the string s decoded from esc, the
// contents of a JSON string literal the scanner has validated, or no form
// when copying esc would not write s (see jsonSpliceable). esc must stay
// unmodified as long as the form is used; it is not copied.
func newJSONForm(s string, esc []byte) jsonForm {
	if len(esc) == 0 || !jsonSpliceable(esc) {
		return jsonForm{}
	}
	return jsonForm{of: s, esc: unsafe.String(&esc[0], len(esc))}
}

// appendJSONText appends s as a JSON string literal: the form f verbatim
// when it is s's, else s escaped by appendJSONString.
func appendJSONText(dst []byte, s string, f jsonForm) []byte {
	if f.use(s) {
		dst = append(dst, '"')
		dst = append(dst, f.esc...)
		return append(dst, '"')
	}
	return appendJSONString(dst, s)
}

// appendJSONTextContents appends s as the contents of a JSON string literal,
// without quotes, for texts joined into one literal; see appendJSONText.
func appendJSONTextContents(dst []byte, s string, f jsonForm) []byte {
	if f.use(s) {
		return append(dst, f.esc...)
	}
	return appendJSONStringContents(dst, s)
}

// jsonSpliceable reports whether esc, the contents of a valid JSON string
// literal, can be copied into an output body in place of escaping the text
// it decodes to, with the same meaning to every JSON parser and the same
// bytes appendJSONStringContents would write when esc holds no escapes:
//   - esc is valid UTF-8 (the escape path turns invalid bytes into U+FFFD);
//   - it holds no raw U+2028 or U+2029 (the escape path escapes them);
//   - every \u escape of a surrogate is a high surrogate followed by a \u
//     escape of a low one: a lone surrogate decodes to U+FFFD here but is
//     read differently by other parsers.
//
// Both checks skip plain text quickly (eight bytes at a time, and from
// backslash to backslash), so they cost far less than escaping.
func jsonSpliceable(esc []byte) bool {
	return jsonSpliceableText(esc) && jsonPairedSurrogates(esc)
}

// jsonSpliceableText reports whether b is valid UTF-8 without U+2028 or
// U+2029.
func jsonSpliceableText(b []byte) bool {
	const high = 0x8080808080808080
	for i := 0; i < len(b); {
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&high == 0 {
			i += 8
		}
		if i >= len(b) {
			break
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// jsonPairedSurrogates reports whether every \u escape of a surrogate in
// esc (valid string contents) is a high surrogate followed by a \u escape
// of a low one.
func jsonPairedSurrogates(esc []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(esc[i:], '\\')
		if j < 0 {
			return true
		}
		i += j
		if esc[i+1] != 'u' {
			i += 2
			continue
		}
		r := jsonHex4(esc[i+2:])
		i += 6
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xdc00 || len(esc)-i < 6 || esc[i] != '\\' || esc[i+1] != 'u' {
			return false
		}
		if lo := jsonHex4(esc[i+2:]); lo < 0xdc00 || lo > 0xdfff {
			return false
		}
		i += 6
	}
}

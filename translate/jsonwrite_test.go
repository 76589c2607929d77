package translate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\s`, `"q\"b\\s"`},
		{"a\nb\rc\td\be\ff", `"a\nb\rc\td\be\ff"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"<a href='x'>&</a>", `"<a href='x'>&</a>"`}, // no HTML escaping
		{"ünï ✓ 😀", `"ünï ✓ 😀"`},
		{"bad\xffutf8", "\"bad\ufffdutf8\""},
		{"ls\u2028ps\u2029", `"ls\u2028ps\u2029"`},
	}
	for _, tt := range tests {
		got := string(appendJSONString(nil, tt.in))
		if got != tt.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s is not valid JSON: %v", got, err)
		}
	}
}

// TestAppendJSONStringBytes checks every single byte and a few sequences
// round-trip through encoding/json.
func TestAppendJSONStringBytes(t *testing.T) {
	for c := 0; c < 128; c++ {
		s := "x" + string(rune(c)) + "y"
		var back string
		if err := json.Unmarshal(appendJSONString(nil, s), &back); err != nil || back != s {
			t.Errorf("byte %#x: got %q, %v", c, back, err)
		}
	}
}

func TestAppendJSONScalars(t *testing.T) {
	var b []byte
	b = append(b, '{')
	b = appendJSONComma(b)
	b = appendJSONKey(b, "a")
	b = appendJSONInt(b, -12)
	b = appendJSONComma(b)
	b = appendJSONKey(b, "b")
	b = appendJSONFloat(b, 0.7)
	b = appendJSONComma(b)
	b = appendJSONKey(b, "c")
	b = appendJSONFloat(b, math.NaN())
	b = appendJSONComma(b)
	b = appendJSONKey(b, "d")
	b = appendJSONBool(b, true)
	b = appendJSONComma(b)
	b = appendJSONKey(b, "e")
	b = appendJSONRawOrNull(b, nil)
	b = appendJSONComma(b)
	b = appendJSONKey(b, "f")
	b = appendJSONStringOrNull(b, "")
	b = appendJSONComma(b)
	b = appendJSONKey(b, "g")
	b = appendJSONRawOrNull(b, []byte(`[1]`))
	b = append(b, '}')
	want := `{"a":-12,"b":0.7,"c":null,"d":true,"e":null,"f":null,"g":[1]}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// jsonRefAppendString is appendJSONString as it was before it copied runs
// eight bytes at a time: the reference the word-at-a-time loop is held to.
func jsonRefAppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
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
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// TestAppendJSONStringWords puts every byte, and a few sequences, at every
// offset of the eight-byte words, in runs long enough for the word loop.
func TestAppendJSONStringWords(t *testing.T) {
	specials := []string{"\u2028", "\u2029", "\xff", "\xe2\x82", "é", "😀", "\"\\", "\n\t"}
	for c := 0; c < 256; c++ {
		specials = append(specials, string([]byte{byte(c)}))
	}
	for _, sp := range specials {
		for off := 0; off < 17; off++ {
			s := strings.Repeat("a", off) + sp + strings.Repeat("b", 19) + sp
			got, want := appendJSONString(nil, s), jsonRefAppendString(nil, s)
			if string(got) != string(want) {
				t.Fatalf("%q: got %s, want %s", s, got, want)
			}
		}
	}
}

// FuzzAppendJSONString holds appendJSONString to the byte-at-a-time
// reference.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("plain text with a \"quote\" and a \\ backslash\n")
	f.Add("ünï ✓ 😀 \u2028 bad\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), jsonRefAppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

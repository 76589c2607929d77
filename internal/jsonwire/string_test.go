package jsonwire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
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
		got := string(AppendString(nil, tt.in))
		if got != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s is not valid JSON: %v", got, err)
		}
	}
}

// TestAppendStringBytes checks every single byte and a few sequences
// round-trip through encoding/json.
func TestAppendStringBytes(t *testing.T) {
	for c := 0; c < 128; c++ {
		s := "x" + string(rune(c)) + "y"
		var back string
		if err := json.Unmarshal(AppendString(nil, s), &back); err != nil || back != s {
			t.Errorf("byte %#x: got %q, %v", c, back, err)
		}
	}
}

// refAppendString is AppendString as it was before it copied runs
// eight bytes at a time: the reference the word-at-a-time loop is held to.
func refAppendString(dst []byte, s string) []byte {
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
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
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
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

// TestAppendStringWords puts every byte, and a few sequences, at every
// offset of the eight-byte words, in runs long enough for the word loop.
func TestAppendStringWords(t *testing.T) {
	specials := []string{"\u2028", "\u2029", "\xff", "\xe2\x82", "é", "😀", "\"\\", "\n\t"}
	for c := 0; c < 256; c++ {
		specials = append(specials, string([]byte{byte(c)}))
	}
	for _, sp := range specials {
		for off := 0; off < 17; off++ {
			s := strings.Repeat("a", off) + sp + strings.Repeat("b", 19) + sp
			got, want := AppendString(nil, s), refAppendString(nil, s)
			if string(got) != string(want) {
				t.Fatalf("%q: got %s, want %s", s, got, want)
			}
		}
	}
}

// FuzzAppendString holds AppendString to the byte-at-a-time
// reference.
func FuzzAppendString(f *testing.F) {
	f.Add("plain text with a \"quote\" and a \\ backslash\n")
	f.Add("ünï ✓ 😀 \u2028 bad\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), refAppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// encodingJSON is s as encoding/json writes it without HTML escaping.
func encodingJSON(t testing.TB, s string) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestAppendStringAsEncodingJSON puts every byte, and the sequences where
// the writers could differ from encoding/json, at every offset of the
// eight-byte words.
func TestAppendStringAsEncodingJSON(t *testing.T) {
	specials := []string{"\u2028", "\u2029", "\xff", "\xe2\x82", "\xed\xa0\x80", "é", "😀", "\"\\", "\b\f", "<&>", "\x7f", "\ufffd"}
	for c := 0; c < 256; c++ {
		specials = append(specials, string([]byte{byte(c)}))
	}
	for _, sp := range specials {
		for off := 0; off < 17; off++ {
			s := strings.Repeat("a", off) + sp + strings.Repeat("b", 19) + sp
			want := encodingJSON(t, s)
			if got := string(AppendStringAsEncodingJSON(nil, s)); got != want {
				t.Fatalf("%q: got %s, encoding/json %s", s, got, want)
			}
			if got := string(AppendString(nil, s)); utf8.ValidString(s) && got != want {
				t.Fatalf("%q: AppendString %s, encoding/json %s", s, got, want)
			}
		}
	}
}

// FuzzAppendStringAsEncodingJSON holds AppendStringAsEncodingJSON to
// encoding/json, and AppendString too where s is valid UTF-8 (the only
// place they differ).
func FuzzAppendStringAsEncodingJSON(f *testing.F) {
	f.Add("plain text with a \"quote\" and a \\ backslash\n")
	f.Add("ünï ✓ 😀 \u2028 bad\xff \b\f <&>")
	f.Fuzz(func(t *testing.T, s string) {
		want := encodingJSON(t, s)
		if got := string(AppendStringAsEncodingJSON(nil, s)); got != want {
			t.Fatalf("%q: got %s, encoding/json %s", s, got, want)
		}
		if got := string(AppendString(nil, s)); utf8.ValidString(s) && got != want {
			t.Fatalf("%q: AppendString %s, encoding/json %s", s, got, want)
		}
	})
}

// TestQuoteOrBackslash checks the mask's lowest set bit against a byte
// loop, for words holding a quote, a backslash, near misses (the bytes
// one above and below each, control characters, bytes from 0x80) and
// none, at every position.
func TestQuoteOrBackslash(t *testing.T) {
	fill := []byte{'a', '"' - 1, '"' + 1, '\\' - 1, '\\' + 1, 0x00, 0x1f, 0x80, 0xdc, 0xff}
	for _, f := range fill {
		for _, c := range []byte{'"', '\\', f} {
			for pos := range 8 {
				var w [8]byte
				for k := range w {
					w[k] = f
				}
				w[pos] = c
				w[(pos+3)%8] = '"' // a later hit must not hide the first
				v := uint64(0)
				for k := 7; k >= 0; k-- {
					v = v<<8 | uint64(w[k])
				}
				want := -1
				for k, b := range w {
					if b == '"' || b == '\\' {
						want = k
						break
					}
				}
				m := QuoteOrBackslash(v)
				got := -1
				if m != 0 {
					for k := range 8 {
						if m>>(8*k+7)&1 == 1 {
							got = k
							break
						}
					}
				}
				if got != want {
					t.Errorf("QuoteOrBackslash(% x): first at %d, want %d", w, got, want)
				}
			}
		}
	}
}

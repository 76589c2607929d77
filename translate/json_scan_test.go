package translate

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/jsonwire"
)

// jsonValid is the scanners' acceptance of a whole document.
func jsonValid(data []byte) bool {
	_, i, ok := jsonScanValue(data, jsonSkipSpace(data, 0))
	return ok && jsonScanTail(data, i)
}

// TestJSONScanValidity holds the scanner's acceptance to gjson.ValidBytes,
// the check the gjson path makes, and to the expected answer.
func TestJSONScanValidity(t *testing.T) {
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	deepObj := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	tests := []struct {
		in   string
		want bool
	}{
		// Scalars and whitespace.
		{`{}`, true},
		{`[]`, true},
		{` {} `, true},
		{"\t\r\n{\n}\r\n", true},
		{`"s"`, true},
		{`1`, true},
		{`true`, true},
		{`false`, true},
		{`null`, true},
		{``, false},
		{` `, false},
		{"\v{}", false}, // only the four JSON whitespace bytes
		{"{}\f", false},
		{"{\u00a0}", false},
		{`{} {}`, false},
		{`{}x`, false},
		{`nul`, false},
		{`nulL`, false},
		{`tru`, false},
		{`fals`, false},
		{`True`, false},
		{`undefined`, false},
		// Numbers.
		{`0`, true},
		{`-0`, true},
		{`-1.5e+10`, true},
		{`1E-2`, true},
		{`1e5`, true},
		{`123456789012345678901234567890`, true},
		{`[0,1,-2,3.25,4e1,5E+1,6e-1]`, true},
		{`01`, false},
		{`-`, false},
		{`-a`, false},
		{`+1`, false},
		{`.5`, false},
		{`1.`, false},
		{`1.e3`, false},
		{`1e`, false},
		{`1e+`, false},
		{`[1e]`, false},
		{`0x10`, false},
		{`[-]`, false},
		{`[1.]`, false},
		{`{"a":01}`, false},
		{`{"a":1 2}`, false},
		// Strings and escapes.
		{`"\"\\\/\b\f\n\r\t"`, true},
		{`"\u0041\u00e9\uD83D\uDE00"`, true},
		{`"\ud800"`, true}, // a lone surrogate is valid JSON text
		{`"\uDE00\uD83D"`, true},
		{"\"caf\xc3\xa9\"", true},
		{"\"\xff\xfe\"", true}, // invalid UTF-8 is not checked
		{"\"\x7f\"", true},
		{`"\x41"`, false},
		{`"\'"`, false},
		{`"\u12"`, false},
		{`"\u12G4"`, false},
		{`"\u"`, false},
		{`"\`, false},
		{`"abc`, false},
		{"\"a\nb\"", false},
		{"\"a\tb\"", false},
		{"\"\x00\"", false},
		{"\"\x1f\"", false},
		{`"a"b"`, false},
		// Objects and arrays.
		{`{"a":1,"b":[1,{"c":null}],"d":{"e":"f"}}`, true},
		{`{ "a" : 1 , "b" : [ 1 , 2 ] }`, true},
		{`{"a":1,"a":2}`, true},
		{`{"":{}}`, true},
		{`{"k\"ey":1}`, true},
		{`[[],{},[[]],[{}]]`, true},
		{deep, true},
		{deepObj, true},
		{`{`, false},
		{`}`, false},
		{`[`, false},
		{`{"a"}`, false},
		{`{"a":}`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`{'a':1}`, false},
		{`{"a":1,}`, false},
		{`{,"a":1}`, false},
		{`{"a":1 "b":2}`, false},
		{`{"a":1}}`, false},
		{`{"a":[1}`, false},
		{`{"a":{]}`, false},
		{`[1,]`, false},
		{`[,1]`, false},
		{`[1 2]`, false},
		{`[1,,2]`, false},
		{`[}`, false},
		{`[{]`, false},
		{`{1:2}`, false},
		{`{"a":1`, false},
		{`{"a":"b`, false},
		{`{"a\":1}`, false},
		{deep[:len(deep)-1], false},
		{deep + "]", false},
		{strings.Repeat("[", 100) + strings.Repeat("}", 100), false},
	}
	for _, tt := range tests {
		got, oracle := jsonValid([]byte(tt.in)), gjson.ValidBytes([]byte(tt.in))
		if got != tt.want || oracle != tt.want {
			t.Errorf("%.60q: scanner %v, gjson %v, want %v", tt.in, got, oracle, tt.want)
		}
	}
}

// TestJSONUnescape holds unescaping to gjson's, including its handling of
// surrogates that do not pair.
func TestJSONUnescape(t *testing.T) {
	tests := []struct{ lit, want string }{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"a\"b\\c\/d"`, `a"b\c/d`},
		{`"\b\f\n\r\t"`, "\b\f\n\r\t"},
		{`"\u0041\u00e9\u4e2d"`, "Aé中"},
		{`"\u00E9"`, "é"},
		{`"x\uD83D\uDE00y"`, "x😀y"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D"`, "\uFFFD"},
		{`"\uD83Dx"`, "\uFFFDx"},
		{`"\uDE00\uD83D"`, "\uFFFD"}, // the pair is taken and does not decode
		{`"\uD83D\u0041"`, "\uFFFD"}, // gjson consumes the second escape
		{`"\uD83D\\u0041"`, "\uFFFD\\u0041"},
		{`"\u0000"`, "\x00"},
		{"\"caf\xc3\xa9 \\n\xff\"", "café \n\xff"},
		{`"tail\\"`, `tail\`},
	}
	for _, tt := range tests {
		data := []byte(tt.lit)
		sp, _, ok := jsonScanValue(data, 0)
		if !ok {
			t.Fatalf("%s: not scanned", tt.lit)
		}
		var scratch []byte
		got := sp.str(data, &scratch)
		if oracle := gjson.ParseBytes(data).Str; got != tt.want || oracle != tt.want {
			t.Errorf("%s: got %q, gjson %q, want %q", tt.lit, got, oracle, tt.want)
		}
	}
}

func TestJSONSmallInt(t *testing.T) {
	tests := []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"7", 7, true},
		{"-12", -12, true},
		{"999999999999999", 999999999999999, true},
		{"1000000000000000", 0, false},
		{"1.0", 0, false},
		{"1e2", 0, false},
		{"-", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := jsonSmallInt([]byte(tt.raw))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: got %d %v, want %d %v", tt.raw, got, ok, tt.want, tt.ok)
		}
		if ok && gjson.Parse(tt.raw).Int() != got {
			t.Errorf("%q: gjson reads %d", tt.raw, gjson.Parse(tt.raw).Int())
		}
	}
}

// TestJSONSpecialBytes checks the word-at-a-time test against the byte
// table: every byte value at every position, above and below another
// special byte.
func TestJSONSpecialBytes(t *testing.T) {
	lowest := func(w []byte) int {
		for i, c := range w {
			if jsonStringSpecial[c] {
				return i
			}
		}
		return 8
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []byte{'a', 0xff, '"', 0x00} {
				for other := 0; other < 8; other++ {
					w := []byte("aaaaaaaa")
					w[other] = fill
					w[pos] = byte(c)
					m := jsonwire.SpecialBytes(binary.LittleEndian.Uint64(w))
					got := 8
					if m != 0 {
						got = bits.TrailingZeros64(m) / 8
					}
					if want := lowest(w); got != want {
						t.Fatalf("%q: first special byte at %d, want %d", w, got, want)
					}
				}
			}
		}
	}
}

// TestJSONScanStringHigh checks the scanner's high flag: never false for a
// string holding a byte from 0x80 up, wherever the byte is.
func TestJSONScanStringHigh(t *testing.T) {
	for _, in := range []string{"", "é", "\xff", `\n`, "ab\u2028"} {
		for off := 0; off < 17; off++ {
			contents := strings.Repeat("a", off) + in + strings.Repeat(`b\"`, off%3)
			data := []byte(`"` + contents + `" , "tail é"`)
			end, _, high, ok := jsonScanString(data, 1)
			if !ok || end != len(contents)+1 {
				t.Fatalf("%q: end %d ok %v", contents, end, ok)
			}
			if want := strings.ContainsFunc(contents, func(r rune) bool { return r >= 0x80 }); want && !high {
				t.Errorf("%q: high = false", contents)
			}
		}
	}
}

// FuzzJSONScanUnescape holds the one-pass scan and unescape to the scanner
// and jsonUnescapePaired run one after the other, and to its former
// implementation (refJSONScanUnescape).
func FuzzJSONScanUnescape(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\"c\\d\/e\u00e9\ud83d\ude00f"`, `"x\ud800\u0041"`, `"x\ud800"`, `"bad\u12"`, "\"ctl\x01\"", `"end\`, `"\ud800\u`, "\"é\xff\"", `"0123456\n\t\\\"\/\b\f\r89abcdef\udc00\ud800 tail`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '"' {
			return
		}
		end, esc, high, ok := jsonScanString(data, 1)
		got, dst, gotOK := jsonScanUnescape(data, 1, nil)
		ref, refDst, refOK := refJSONScanUnescape(data, 1, nil)
		if got != ref || gotOK != refOK || gotOK && string(dst) != string(refDst) {
			t.Fatalf("%q: %+v %v %q, reference %+v %v %q", data, got, gotOK, dst, ref, refOK, refDst)
		}
		if ok != gotOK {
			t.Fatalf("%q: ok %v, scanner %v", data, gotOK, ok)
		}
		if !ok {
			return
		}
		if got.end != end || got.esc != esc {
			t.Fatalf("%q: %+v, scanner end %d esc %v", data, got, end, esc)
		}
		// high may be said of a string without such bytes (either may
		// read words reaching past the closing quote, and they read
		// different words once an escape comes), never the reverse.
		if bytes.IndexFunc(data[1:end], func(r rune) bool { return r >= 0x80 }) >= 0 && (!got.high || !high) {
			t.Fatalf("%q: high %v, scanner high %v, for a string with bytes from 0x80 up", data, got.high, high)
		}
		if !esc {
			if len(dst) != 0 {
				t.Fatalf("%q: appended %q without escapes", data, dst)
			}
			return
		}
		want, paired := jsonUnescapePaired(nil, data[1:end])
		if string(dst) != string(want) || got.paired != paired {
			t.Fatalf("%q: %q paired %v, want %q paired %v", data, dst, got.paired, want, paired)
		}
	})
}

// TestJSONIsSpaceEveryByte checks the whitespace test against RFC 8259's
// four whitespace bytes over every byte value: its shortcut for bytes past
// the space must not leave one out or let one in.
func TestJSONIsSpaceEveryByte(t *testing.T) {
	for c := range 256 {
		want := c == ' ' || c == '\n' || c == '\r' || c == '\t'
		if got := jsonIsSpace(byte(c)); got != want {
			t.Errorf("jsonIsSpace(%#x) = %v, want %v", c, got, want)
		}
	}
}

// TestTrimSpaceMatchesBytes holds trimSpace's shortcut to bytes.TrimSpace
// for every first and last byte, and for Unicode spaces at either end,
// whose UTF-8 bytes its ASCII test must not take for printable.
func TestTrimSpaceMatchesBytes(t *testing.T) {
	check := func(in []byte) {
		if got, want := trimSpace(in), bytes.TrimSpace(in); !bytes.Equal(got, want) {
			t.Errorf("trimSpace(%q) = %q, want %q", in, got, want)
		}
	}
	for a := range 256 {
		for b := range 256 {
			check([]byte{byte(a), '{', '}', byte(b)})
		}
	}
	for _, s := range []string{"", " ", "\u0085{}", "{}\u0085", "\u00a0{}\u00a0", "\u2028{}", "{}\u3000", "\v{}\f", "é", "{}é"} {
		check([]byte(s))
	}
}

package translate

import (
	"encoding/json"
	"math"
	"testing"
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

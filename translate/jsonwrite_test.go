package translate

import (
	"math"
	"testing"
)

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

package translate

import "testing"

// jsonSkipCases are values for jsonSkipValue, well-formed and broken.
var jsonSkipCases = []string{
	`"s"`, `"a\"b"`, `"bad\q"`, `"open`, "\"ctl\x01\"",
	`{}`, `[]`, `{"a":[1,{"b":null}],"c":"d"}`, `{"a":1,}`, `[1 2]`, `{"a":[1}`,
	`0`, `-1.5e+3`, `-`, `01`, `1.`, `2e`,
	`null`, `nul`, `true`, `tru`, `false`, `fals`,
	``, `x`, `}`, `,`,
}

// TestJSONSkipValue holds jsonSkipValue to jsonScanValue: the same
// acceptance and the same index after the value (or at the error).
func TestJSONSkipValue(t *testing.T) {
	for _, in := range jsonSkipCases {
		for _, tail := range []string{"", ` ,"x":1}`} {
			data := []byte(in + tail)
			_, wantEnd, wantOK := jsonScanValue(data, 0)
			end, ok := jsonSkipValue(data, 0)
			if end != wantEnd || ok != wantOK {
				t.Errorf("%q: skip (%d, %v), scan (%d, %v)", data, end, ok, wantEnd, wantOK)
			}
		}
	}
}

func FuzzJSONSkipValue(f *testing.F) {
	for _, s := range jsonSkipCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, wantEnd, wantOK := jsonScanValue(data, 0)
		end, ok := jsonSkipValue(data, 0)
		if end != wantEnd || ok != wantOK {
			t.Fatalf("%q: skip (%d, %v), scan (%d, %v)", data, end, ok, wantEnd, wantOK)
		}
	})
}

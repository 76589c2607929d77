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

// checkSkipUnchecked holds jsonSkipUnchecked to jsonSkipValue: the same
// end on every valid string, array and object; on anything else, no panic
// and an index within data.
func checkSkipUnchecked(t *testing.T, data []byte) {
	t.Helper()
	end, ok := jsonSkipUnchecked(data, 0)
	if end < 0 || end > len(data) {
		t.Fatalf("%q: end %d out of range", data, end)
	}
	if len(data) == 0 || data[0] != '"' && data[0] != '[' && data[0] != '{' {
		return
	}
	if wantEnd, wantOK := jsonSkipValue(data, 0); wantOK && (!ok || end != wantEnd) {
		t.Fatalf("%q: unchecked (%d, %v), validated %d", data, end, ok, wantEnd)
	}
}

// jsonSkipUncheckedCases are values that take jsonSkipUnchecked down its
// paths: escaped quotes after runs of backslashes, brackets inside
// strings, nesting.
var jsonSkipUncheckedCases = []string{
	`"\\"`, `"\\\""`, `"a\\\\"`, `"\\\\\""x"`, `"[{\"]}"`, `["]",{"}":"\\"}]`,
	`{"a":"\u005c"}`, `[[[[]]],{}]`, `"abcdefgh\"ijkl"`, `"abcdefghijklmno\\"`, `"0123456789abcdef\"x"`, `"abcdefg\\\\"`, `"` + "\u2028\x00\xff" + `"`, `[`, `"\`, `{"a":"b\"}`,
}

func TestJSONSkipUnchecked(t *testing.T) {
	for _, in := range append(jsonSkipCases, jsonSkipUncheckedCases...) {
		for _, tail := range []string{"", ` ,"x":1}`, `"]}`} {
			checkSkipUnchecked(t, []byte(in+tail))
		}
	}
}

func FuzzJSONSkipUnchecked(f *testing.F) {
	for _, s := range append(jsonSkipCases, jsonSkipUncheckedCases...) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkSkipUnchecked)
}

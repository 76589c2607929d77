package mock

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestSynthesizeArguments(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"no schema", ``, `{}`},
		{"invalid schema", `{"type":`, `{}`},
		{"no required", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`},
		{"scalars", `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}},"required":["s","i","n","b","z"]}`,
			`{"s":"louter","i":1,"n":1,"b":true,"z":null}`},
		{"enum and const", `{"properties":{"e":{"type":"string","enum":["low","high"]},"c":{"const":42}},"required":["e","c"]}`, `{"e":"low","c":42}`},
		{"minimum", `{"properties":{"n":{"type":"integer","minimum":3.5}},"required":["n"]}`, `{"n":4}`},
		{"nullable type list", `{"properties":{"s":{"type":["null","string"]}},"required":["s"]}`, `{"s":"louter"}`},
		{"arrays", `{"properties":{"a":{"type":"array","items":{"type":"integer"}},"b":{"type":"array","minItems":2,"items":{"type":"string"}}},"required":["a","b"]}`, `{"a":[],"b":["louter","louter"]}`},
		{"nested object", `{"properties":{"o":{"type":"object","properties":{"x":{"type":"boolean"},"y":{"type":"string"}},"required":["x"]}},"required":["o"]}`, `{"o":{"x":true}}`},
		{"anyOf", `{"properties":{"u":{"anyOf":[{"type":"integer"},{"type":"string"}]}},"required":["u"]}`, `{"u":1}`},
		{"dotted name", `{"properties":{"a.b":{"type":"boolean"},"a":{"type":"string"}},"required":["a.b"]}`, `{"a.b":true}`},
		{"name needing escapes", `{"properties":{"q\"x":{"type":"integer"}},"required":["q\"x"]}`, `{"q\"x":1}`},
		{"required without property", `{"type":"object","required":["ghost"]}`, `{"ghost":"louter"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := synthesizeArguments([]byte(tt.schema))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !gjson.Valid(got) {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
}

func TestSynthesizeArgumentsRecursiveSchema(t *testing.T) {
	// A schema that nests deeper than maxSchemaDepth still ends.
	schema := `{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object","required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}},"required":["o"]}`
	if got := synthesizeArguments([]byte(schema)); !gjson.Valid(got) {
		t.Errorf("invalid JSON %s", got)
	}
}

func TestAppendJSONString(t *testing.T) {
	got := string(appendJSONString(nil, "a\"b\\c\n\t\x01 <&> é"))
	if want := `"a\"b\\c\n\t\u0001 <&> é"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

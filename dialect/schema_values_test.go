package dialect

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// TestTypingSchemaTypesAlike checks that the few bytes a stream keeps of a
// tool's schema (typingSchema) type every parameter value as the whole
// schema does.
func TestTypingSchemaTypesAlike(t *testing.T) {
	schema := `{"type":"object","description":"d","properties":{` +
		`"s":{"type":"string","description":"a long description","enum":["a","b"]},` +
		`"i":{"type":"integer","minimum":0},` +
		`"n":{"type":["number","null"]},` +
		`"b":{"type":"boolean","default":false},` +
		`"o":{"properties":{"x":{"type":"string"}}},` +
		`"a":{"items":{"type":"string"}},` +
		`"u":{"anyOf":[{"type":"integer","description":"x"},{"type":"null"}]},` +
		`"w":{"oneOf":[{"type":"boolean","nullable":true},{"type":"string"}]},` +
		`"z":{"type":"integer","nullable":true},` +
		`"e":{"description":"no type"},` +
		`"q":true,` +
		`"k\"ey":{"type":"number"}` +
		`},"required":["s"]}`
	tools := func(raw string) toolSchemas { return toolSchemas{"T": {raw: []byte(raw)}} }
	full, small := tools(schema), tools(string(appendTypingSchema(nil, []byte(schema))))
	params := []string{"s", "i", "n", "b", "o", "a", "u", "w", "z", "e", "q", `k"ey`, "missing"}
	values := []string{"42", " 7 ", "3.5", "true", "null", `{"x":1}`, "[1,2]", "{'x': True}", "text", ""}
	for _, p := range params {
		for _, v := range values {
			want := string(full.appendValue(nil, "T", p, v))
			if got := string(small.appendValue(nil, "T", p, v)); got != want {
				t.Errorf("param %q value %q: %s with the typing schema, %s with the whole one", p, v, got, want)
			}
		}
	}
	if s := appendTypingSchema(nil, []byte(`{"type":"object"}`)); s != nil {
		t.Errorf("a schema without properties kept %s", s)
	}
	if !gjson.Valid(string(appendTypingSchema(nil, []byte(schema)))) {
		t.Errorf("not JSON: %s", appendTypingSchema(nil, []byte(schema)))
	}
}

// TestTypingSchemaSize checks that a stream keeps a small part of Claude
// Code's tool schemas (testdata/bench/claude_code_100k.json).
func TestTypingSchemaSize(t *testing.T) {
	raw, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		t.Fatal(err)
	}
	var whole, kept int
	var tools []translate.Tool
	gjson.GetBytes(raw, "tools.#.input_schema").ForEach(func(_, s gjson.Result) bool {
		whole += len(s.Raw)
		tools = append(tools, translate.Tool{Schema: []byte(s.Raw)})
		return true
	})
	for i, s := range typingSchemas(tools) {
		kept += len(s)
		if want := appendTypingSchema(nil, tools[i].Schema); string(s) != string(want) {
			t.Errorf("tool %d: %s, want %s", i, s, want)
		}
	}
	if whole < 10000 || kept*5 > whole {
		t.Errorf("kept %d of %d schema bytes, want under a fifth", kept, whole)
	}
	t.Logf("kept %d of %d schema bytes", kept, whole)
}

// TestTypingCache checks that streams with the same tools share one typing
// schema, and that the cache stays bounded.
func TestTypingCache(t *testing.T) {
	raw := []byte(`{"properties":{"n":{"type":"integer","description":"how many"}}}`)
	a, b := cachedTypingSchema(raw), cachedTypingSchema(bytes.Clone(raw))
	if string(a) != `{"properties":{"n":{"type":"integer"}}}` || &a[0] != &b[0] {
		t.Fatalf("got %s and %s, want one shared typing schema", a, b)
	}
	if cachedTypingSchema(nil) != nil || cachedTypingSchema([]byte(`{"type":"object"}`)) != nil {
		t.Error("a schema without parameters got a typing schema")
	}
	huge := []byte(`{"properties":{"p":{"type":"string","description":"` + strings.Repeat("x", typingCacheMax) + `"}}}`)
	if got := cachedTypingSchema(huge); string(got) != `{"properties":{"p":{"type":"string"}}}` {
		t.Errorf("a huge schema: %s", got)
	}
	typingCache.Lock()
	_, kept := typingCache.m[string(huge)]
	typingCache.Unlock()
	if kept {
		t.Error("a schema past a sixteenth of the bound was cached")
	}
	for i := range 5000 {
		cachedTypingSchema([]byte(fmt.Sprintf(`{"properties":{"p%d":{"type":"string","description":"%0900d"}}}`, i, i)))
		typingCache.Lock()
		n := typingCache.bytes
		typingCache.Unlock()
		if n > typingCacheMax {
			t.Fatalf("the cache holds %d bytes, past its bound %d", n, typingCacheMax)
		}
	}
}

// BenchmarkTypingSchemas is what a stream's plan spends on its tools'
// schemas per request: Claude Code's 12 tools, the cache warm.
func BenchmarkTypingSchemas(b *testing.B) {
	raw, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		b.Fatal(err)
	}
	var tools []translate.Tool
	gjson.GetBytes(raw, "tools.#.input_schema").ForEach(func(_, s gjson.Result) bool {
		tools = append(tools, translate.Tool{Schema: []byte(s.Raw)})
		return true
	})
	b.ReportAllocs()
	for b.Loop() {
		typingSchemas(tools)
	}
}

package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

// The Responses API counts a citation's span in characters, the IR in
// bytes: on text that is not ASCII the two differ, and a span taken the
// wrong way cuts a character in half or cites the wrong words.
func TestRespCitationOffsets(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		start, end int // characters, as the Responses API sends them
		cited      string
	}{
		{"ascii", "Paris is the capital.", 0, 5, "Paris"},
		{"accents before", "Café: Zürich is in Switzerland.", 6, 12, "Zürich"},
		{"cjk", "東京は日本の首都です。", 0, 2, "東京"},
		{"emoji then span", "🙂 Berlin", 2, 8, "Berlin"},
		{"past the end", "short", 2, 40, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ann := `{"type":"url_citation","url":"https://example.com/","title":"t","start_index":` +
				itoa(tt.start) + `,"end_index":` + itoa(tt.end) + `}`
			c, ok := respCitation(gjson.Parse(ann), tt.text)
			if !ok {
				t.Fatal("not read as a citation")
			}
			if c.CitedText != tt.cited {
				t.Fatalf("cited text %q, want %q", c.CitedText, tt.cited)
			}
			if tt.cited == "" {
				return
			}
			// Written back, the span is the one the backend sent.
			p := []Part{{Type: PartText, Text: tt.text, Citations: []Citation{c}}}
			out := gjson.ParseBytes(respAppendAnnotations(nil, p))
			if s, e := out.Get("0.start_index").Int(), out.Get("0.end_index").Int(); int(s) != tt.start || int(e) != tt.end {
				t.Fatalf("written back as %d..%d, want %d..%d", s, e, tt.start, tt.end)
			}
		})
	}
}

// A span the IR holds in bytes (Gemini's, whose segment offsets are
// bytes) reaches a Responses client in characters, and a second part's
// span is moved by the characters of the first.
func TestRespAppendAnnotationsCharacters(t *testing.T) {
	parts := []Part{
		{Type: PartText, Text: "Grüße aus ", Citations: []Citation{{URL: "https://a.example/", Start: 0, End: len("Grüße")}}},
		{Type: PartText, Text: "München.", Citations: []Citation{{URL: "https://b.example/", Start: 0, End: len("München")}}},
	}
	out := gjson.ParseBytes(respAppendAnnotations(nil, parts))
	want := [][2]int64{{0, 5}, {10, 17}}
	for i, w := range want {
		if s, e := out.Get(itoa(i)+".start_index").Int(), out.Get(itoa(i)+".end_index").Int(); s != w[0] || e != w[1] {
			t.Errorf("annotation %d: %d..%d, want %d..%d", i, s, e, w[0], w[1])
		}
	}
}

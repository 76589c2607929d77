package translate

import (
	"slices"
	"testing"
)

// TestRequestDrop holds Drop to its contract: one entry "field: reason"
// per distinct joined text, in first-drop order, whatever way the text
// splits into field and reason.
func TestRequestDrop(t *testing.T) {
	tests := []struct {
		name  string
		drops [][2]string
		want  []string
	}{
		{"one", [][2]string{{"a", "b"}}, []string{"a: b"}},
		{"repeated", [][2]string{{"a", "b"}, {"c", "d"}, {"a", "b"}, {"c", "d"}}, []string{"a: b", "c: d"}},
		{"same field, other reason", [][2]string{{"a", "b"}, {"a", "bb"}}, []string{"a: b", "a: bb"}},
		{"same joined text, split elsewhere", [][2]string{{"a", "b: c"}, {"a: b", "c"}}, []string{"a: b: c"}},
		{"prefix of another", [][2]string{{"ab", "c"}, {"a", "bc"}, {"a", "b"}}, []string{"ab: c", "a: bc", "a: b"}},
		{"empty parts", [][2]string{{"", ""}, {"", ""}, {"x", ""}}, []string{": ", "x: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			for _, d := range tt.drops {
				r.Drop(d[0], d[1])
			}
			if !slices.Equal(r.Dropped, tt.want) {
				t.Errorf("Dropped = %q, want %q", r.Dropped, tt.want)
			}
		})
	}
}

// TestRequestDropRepeatAllocs: dropping a field again allocates nothing.
func TestRequestDropRepeatAllocs(t *testing.T) {
	var r Request
	r.Drop("messages.content.cache_control", "not translated")
	if n := testing.AllocsPerRun(100, func() {
		r.Drop("messages.content.cache_control", "not translated")
	}); n != 0 {
		t.Errorf("a repeated Drop allocates %v times", n)
	}
}

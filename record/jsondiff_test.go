package record

import (
	"strings"
	"testing"
)

func TestDiffJSON(t *testing.T) {
	tests := []struct {
		name      string
		want, got string
		paths     []string
	}{
		{"equal, other order and spelling", `{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`, nil},
		{"changed text", `{"choices":[{"delta":{"content":"Hi"}}]}`, `{"choices":[{"delta":{"content":"Ho"}}]}`, []string{"$.choices[0].delta.content"}},
		{"missing member", `{"a":1,"b":2}`, `{"a":1}`, []string{"$.b"}},
		{"extra element", `[1]`, `[1,2]`, []string{"$[1]"}},
		{"generated ids", `{"id":"msg_0123456789abcdef01234567","created":1}`, `{"id":"msg_fedcba9876543210fedcba98","created":2}`, nil},
		{"ids of another kind", `{"id":"msg_0123456789abcdef01234567"}`, `{"id":"call_fedcba9876543210fedcba98"}`, []string{"$.id"}},
		{"a provider's id", `{"id":"chatcmpl-abc"}`, `{"id":"chatcmpl-abd"}`, []string{"$.id"}},
		{"not JSON", `[DONE]`, `[DONE]`, nil},
		{"not JSON, changed", `[DONE]`, `[END]`, []string{"$"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			for _, d := range diffJSON(nil, "p", []byte(tt.want), []byte(tt.got)) {
				paths = append(paths, d.Path)
			}
			if strings.Join(paths, " ") != strings.Join(tt.paths, " ") {
				t.Errorf("paths %v, want %v", paths, tt.paths)
			}
		})
	}
}

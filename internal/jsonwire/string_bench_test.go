package jsonwire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// benchTexts are texts of the shapes agents send: prose with a
// newline every ~70 bytes, code dense with quotes and tabs, a Read tool
// result of the Claude Code request (line-numbered code), non-ASCII prose.
func benchTexts(b *testing.B) map[string]string {
	texts := map[string]string{
		"prose":    strings.Repeat("You are a careful coding agent. Follow the <rules> & keep diffs small.\n", 140),
		"code":     strings.Repeat("func main() {\n\tfmt.Println(\"hello, \\\"world\\\"\")\n}\n", 200),
		"nonascii": strings.Repeat("Überprüfe die Änderungen — 変更を確認してください。\n", 200),
	}
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		b.Fatal(err)
	}
	var longest string
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		for _, block := range m.Get("content").Array() {
			if c := block.Get("content"); block.Get("type").Str == "tool_result" && len(c.Str) > len(longest) {
				longest = c.Str
			}
		}
	}
	if longest == "" {
		b.Fatal("no tool result text in the Claude Code request")
	}
	texts["tool_result"] = longest
	return texts
}

// BenchmarkAppendString measures the escape path translate's encoders take
// for texts that have no splice form.
func BenchmarkAppendString(b *testing.B) {
	for name, s := range benchTexts(b) {
		b.Run(name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(s)+2)
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				dst = AppendString(dst[:0], s)
			}
		})
	}
}

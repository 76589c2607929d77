package translate_test

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// BenchmarkScanTopLevel is the cost every request pays before routing: one
// scan over the top-level members of a ~100 KB Claude Code request. The
// "first model" line is what it replaced, a gjson lookup of "model".
func BenchmarkScanTopLevel(b *testing.B) {
	body := anthBigRequest(b, 100<<10)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if top, err := translate.ScanTopLevel(translate.ProtocolAnthropic, body); err != nil || top.Model.Str == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("first model", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if gjson.GetBytes(body, "model").Str == "" {
				b.Fatal("no model")
			}
		}
	})
}

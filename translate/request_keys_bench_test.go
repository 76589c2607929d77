package translate_test

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// BenchmarkScanTopLevel is the cost every request pays before routing: one
// pass that validates a ~100 KB Claude Code request and finds its top-level
// members. "deferred" is the scan of a body about to be decoded
// (ScanTopLevelDeferred), which skips the system prompt and the messages
// unchecked. "valid bytes" is the gjson.ValidBytes pass it made redundant,
// "first model" a gjson lookup of "model".
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
	decodes := func(string) bool { return true }
	b.Run("deferred", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if top, err := translate.ScanTopLevelDeferred(translate.ProtocolAnthropic, body, decodes); err != nil || top.Model.Str == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("valid bytes", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if !gjson.ValidBytes(body) {
				b.Fatal("invalid")
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

// BenchmarkScanThenDecode is what the handler does with a translated
// request before encoding it: the top-level scan, then the decode, with
// the validating scan and with the deferred one, which leaves the
// validation of what it skips to the decoder.
func BenchmarkScanThenDecode(b *testing.B) {
	body := anthBigRequest(b, 100<<10)
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	decodes := func(string) bool { return true }
	for _, deferred := range []bool{false, true} {
		b.Run(map[bool]string{false: "scan", true: "deferred"}[deferred], func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var te *translate.Error
				if deferred {
					_, te = translate.ScanTopLevelDeferred(translate.ProtocolAnthropic, body, decodes)
				} else {
					_, te = translate.ScanTopLevel(translate.ProtocolAnthropic, body)
				}
				if te != nil {
					b.Fatal(te)
				}
				if _, err := c.DecodeRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

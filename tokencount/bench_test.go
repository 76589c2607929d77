package tokencount

import (
	"bytes"
	"os"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// bigRequest is a Claude-Code-sized request (~100 KB): the agent session of
// the corpus with the Go-sources session's turns appended.
func bigRequest(b *testing.B) (*translate.Request, int) {
	b.Helper()
	a, err := os.ReadFile(corpusDir + "/agent_go_session.json")
	if err != nil {
		b.Fatal(err)
	}
	more, err := os.ReadFile(corpusDir + "/go_sources.json")
	if err != nil {
		b.Fatal(err)
	}
	msgs := gjson.GetBytes(a, "messages")
	extra := gjson.GetBytes(more, "messages")
	body := append([]byte(nil), a[:msgs.Index+len(msgs.Raw)-1]...)
	body = append(body, ',')
	body = append(body, bytes.TrimPrefix([]byte(extra.Raw), []byte("["))...)
	body = append(body, a[msgs.Index+len(msgs.Raw):]...)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	return req, len(body)
}

func BenchmarkCount(b *testing.B) {
	req, size := bigRequest(b)
	Count(req, translate.ProtocolAnthropic, "") // builds the vocabulary
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Count(req, translate.ProtocolAnthropic, "")
	}
}

func BenchmarkEstimate(b *testing.B) {
	req, size := bigRequest(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Estimate(req, translate.ProtocolAnthropic)
	}
}

func BenchmarkQuick(b *testing.B) {
	req, size := bigRequest(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Quick(req, translate.ProtocolAnthropic)
	}
}

// BenchmarkVocabulary is the one-time cost of building o200k_base's table.
func BenchmarkVocabulary(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		(&bpe{enc: o200k.enc}).get()
	}
}

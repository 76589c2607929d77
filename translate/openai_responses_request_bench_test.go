package translate

import (
	"os"
	"path/filepath"
	"testing"
)

// respClaudeCodeBody is the Responses form of the ~100 KB Claude Code
// request (testdata/bench/claude_code_100k.json), made with the codecs.
func respClaudeCodeBody(tb testing.TB) []byte {
	tb.Helper()
	anth, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		tb.Fatal(err)
	}
	req, err := anthropicCodec{}.DecodeRequest(anth)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := openAIResponsesCodec{}.EncodeRequest(req)
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func BenchmarkOpenAIResponsesDecodeRequest100K(b *testing.B) {
	body := respClaudeCodeBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (openAIResponsesCodec{}).DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestOpenAIResponsesToAnthropic100K(b *testing.B) {
	body := respClaudeCodeBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := openAIResponsesCodec{}.DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (anthropicCodec{}).EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

package translate

import (
	"os"
	"path/filepath"
	"testing"
)

// oaiClaudeCodeBody is the OpenAI Chat form of the ~100 KB Claude Code
// request (testdata/bench/claude_code_100k.json), made with the codecs
// rather than kept as a second fixture.
func oaiClaudeCodeBody(b testing.TB) []byte {
	b.Helper()
	anth, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		b.Fatal(err)
	}
	req, err := anthropicCodec{}.DecodeRequest(anth)
	if err != nil {
		b.Fatal(err)
	}
	body, err := openAIChatCodec{}.EncodeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkOpenAIChatDecodeRequest100K(b *testing.B) {
	body := oaiClaudeCodeBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (openAIChatCodec{}).DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOpenAIChatEncode measures enc encoding the IR the OpenAI Chat
// decoder made of the 100 KB request.
func benchOpenAIChatEncode(b *testing.B, enc Codec) {
	body := oaiClaudeCodeBody(b)
	req, err := openAIChatCodec{}.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req.Dropped = req.Dropped[:0]
		if _, err := enc.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnthropicEncodeRequestFromOpenAIChat100K(b *testing.B) {
	benchOpenAIChatEncode(b, anthropicCodec{})
}

func BenchmarkGeminiEncodeRequestFromOpenAIChat100K(b *testing.B) {
	benchOpenAIChatEncode(b, geminiCodec{})
}

// benchOpenAIChatTo measures a whole request translation: decoding the
// 100 KB OpenAI Chat request and encoding it for enc.
func benchOpenAIChatTo(b *testing.B, enc Codec) {
	body := oaiClaudeCodeBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := openAIChatCodec{}.DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enc.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestOpenAIChatToAnthropic100K(b *testing.B) { benchOpenAIChatTo(b, anthropicCodec{}) }

func BenchmarkRequestOpenAIChatToGemini100K(b *testing.B) { benchOpenAIChatTo(b, geminiCodec{}) }

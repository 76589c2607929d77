package stream_test

import (
	"testing"

	"github.com/louter/louter/translate"
)

// Gemini codec, each direction (codec_bench_test.go).

func BenchmarkGeminiCodecDecodeRequest(b *testing.B) {
	benchDecodeRequest(b, translate.ProtocolGemini)
}

func BenchmarkGeminiCodecEncodeRequest(b *testing.B) {
	benchEncodeRequest(b, translate.ProtocolGemini)
}

func BenchmarkGeminiCodecStreamDecode(b *testing.B) {
	benchStreamDecode(b, translate.ProtocolGemini)
}

func BenchmarkGeminiCodecStreamEncode(b *testing.B) {
	benchStreamEncode(b, translate.ProtocolGemini)
}

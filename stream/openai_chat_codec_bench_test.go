package stream_test

import (
	"testing"

	"github.com/louter/louter/translate"
)

// OpenAIChat codec, each direction (codec_bench_test.go).

func BenchmarkOpenAIChatCodecDecodeRequest(b *testing.B) {
	benchDecodeRequest(b, translate.ProtocolOpenAIChat)
}

func BenchmarkOpenAIChatCodecEncodeRequest(b *testing.B) {
	benchEncodeRequest(b, translate.ProtocolOpenAIChat)
}

func BenchmarkOpenAIChatCodecStreamDecode(b *testing.B) {
	benchStreamDecode(b, translate.ProtocolOpenAIChat)
}

func BenchmarkOpenAIChatCodecStreamEncode(b *testing.B) {
	benchStreamEncode(b, translate.ProtocolOpenAIChat)
}

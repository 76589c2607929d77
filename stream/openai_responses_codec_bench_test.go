package stream_test

import (
	"testing"

	"github.com/louter/louter/translate"
)

// OpenAIResponses codec, each direction (codec_bench_test.go).

func BenchmarkOpenAIResponsesCodecDecodeRequest(b *testing.B) {
	benchDecodeRequest(b, translate.ProtocolOpenAIResponses)
}

func BenchmarkOpenAIResponsesCodecEncodeRequest(b *testing.B) {
	benchEncodeRequest(b, translate.ProtocolOpenAIResponses)
}

func BenchmarkOpenAIResponsesCodecStreamDecode(b *testing.B) {
	benchStreamDecode(b, translate.ProtocolOpenAIResponses)
}

func BenchmarkOpenAIResponsesCodecStreamEncode(b *testing.B) {
	benchStreamEncode(b, translate.ProtocolOpenAIResponses)
}

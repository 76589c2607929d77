package stream_test

import (
	"testing"

	"github.com/louter/louter/translate"
)

// Anthropic codec, each direction (codec_bench_test.go).

func BenchmarkAnthropicCodecDecodeRequest(b *testing.B) {
	benchDecodeRequest(b, translate.ProtocolAnthropic)
}

func BenchmarkAnthropicCodecEncodeRequest(b *testing.B) {
	benchEncodeRequest(b, translate.ProtocolAnthropic)
}

func BenchmarkAnthropicCodecStreamDecode(b *testing.B) {
	benchStreamDecode(b, translate.ProtocolAnthropic)
}

func BenchmarkAnthropicCodecStreamEncode(b *testing.B) {
	benchStreamEncode(b, translate.ProtocolAnthropic)
}

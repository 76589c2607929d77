package stream_test

import (
	"testing"

	"github.com/louter/louter/translate"
)

// The Gemini stream converters, both ways, against the spine's protocols.

func BenchmarkStreamGeminiToAnthropic(b *testing.B) {
	benchStream(b, translate.ProtocolGemini, translate.ProtocolAnthropic)
}

func BenchmarkStreamGeminiToOpenAIChat(b *testing.B) {
	benchStream(b, translate.ProtocolGemini, translate.ProtocolOpenAIChat)
}

func BenchmarkStreamAnthropicToGemini(b *testing.B) {
	benchStream(b, translate.ProtocolAnthropic, translate.ProtocolGemini)
}

func BenchmarkStreamOpenAIChatToGemini(b *testing.B) {
	benchStream(b, translate.ProtocolOpenAIChat, translate.ProtocolGemini)
}

func BenchmarkRequestAnthropicToGemini(b *testing.B) {
	benchRequest(b, translate.ProtocolAnthropic, translate.ProtocolGemini, claudeCodeRequest(100<<10))
}

func BenchmarkRequestGeminiToAnthropic(b *testing.B) {
	// The Gemini twin of Claude Code's conversation, made by the codecs.
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	gem, _ := translate.Lookup(translate.ProtocolGemini)
	req, err := anth.DecodeRequest(claudeCodeRequest(100 << 10))
	if err != nil {
		b.Fatal(err)
	}
	body, err := gem.EncodeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	benchRequest(b, translate.ProtocolGemini, translate.ProtocolAnthropic, body)
}

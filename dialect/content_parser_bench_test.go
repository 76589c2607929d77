package dialect_test

import (
	"strings"
	"testing"

	"github.com/louter/louter/dialect"
)

const contentProse = "The quick brown fox jumps over the lazy dog; a < b holds, and so does c > d. "

// contentRepeat repeats unit until the result is about size bytes.
func contentRepeat(unit string, size int) string {
	return strings.Repeat(unit, max(1, size/len(unit)))
}

// contentChunks cuts s into pieces of n bytes, as a server streams deltas.
func contentChunks(s string, n int) []string {
	var pieces []string
	for len(s) > n {
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	return append(pieces, s)
}

func benchContent(b *testing.B, cfg dialect.ContentConfig, content string, chunk int) {
	pieces := contentChunks(content, chunk)
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	var segs []dialect.Segment
	for b.Loop() {
		p := dialect.NewContentParser(cfg)
		for _, s := range pieces {
			segs = p.Feed(segs[:0], s)
		}
		segs = p.Close(segs[:0])
	}
}

func BenchmarkContentParser(b *testing.B) {
	const size = 64 << 10
	hermes := strings.Repeat(contentProse, 4) + "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>\n"
	qwen := strings.Repeat(contentProse, 4) + "\n\n" + qwenWeather + "\n"
	harmony := "<|start|>assistant<|channel|>analysis<|message|>" + strings.Repeat(contentProse, 2) + "<|end|>" +
		"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>" +
		"<|start|>assistant<|channel|>final<|message|>" + strings.Repeat(contentProse, 2) + "<|end|>"
	for _, bc := range []struct {
		name    string
		cfg     dialect.ContentConfig
		content string
	}{
		{"plain", cfgAutoNT, contentRepeat(contentProse, size)},
		{"plain_with_tools", cfgAuto, contentRepeat(contentProse, size)},
		{"hermes", cfgHermes, contentRepeat(hermes, size)},
		{"qwen3_coder", cfgQwen, contentRepeat(qwen, size)},
		{"think", cfgAutoNT, "<think>\n" + contentRepeat(contentProse, size/2) + "</think>\n\n" + contentRepeat(contentProse, size/2)},
		{"harmony", cfgAuto, contentRepeat(harmony, size)},
	} {
		b.Run(bc.name, func(b *testing.B) { benchContent(b, bc.cfg, bc.content, 20) })
	}
}

// BenchmarkContentParserLongCall feeds one call byte by byte: the same
// MB/s at 64 KiB and 1 MiB shows that buffered bytes are not scanned again.
func BenchmarkContentParserLongCall(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64KiB", 64 << 10}, {"1MiB", 1 << 20}} {
		value := contentRepeat("a <b> </c> <parameter x=1> 12345\n", size.n)
		qwen := "<function=run>\n<parameter=cmd>\n" + value + "\n</parameter>\n</function>"
		hermes := "<tool_call>{\"name\":\"run\",\"arguments\":{\"cmd\":\"" + strings.ReplaceAll(value, "\n", `\n`) + "\"}}</tool_call>"
		b.Run("qwen3_coder/"+size.name, func(b *testing.B) { benchContent(b, cfgQwen, qwen, 1) })
		b.Run("hermes/"+size.name, func(b *testing.B) { benchContent(b, cfgHermes, hermes, 1) })
	}
}

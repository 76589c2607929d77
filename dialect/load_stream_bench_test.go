package dialect_test

import (
	"encoding/json"
	"testing"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// BenchmarkLoadStreamTranscode is the stream path of the load benchmark
// without the handler around it: the upstream's exact 243 OpenAI Chat
// events (harness.OpenAIChatStream: 198 text deltas, a tool call in 40
// argument fragments, finish, usage, [DONE]), one Write per event,
// through the dialect decoder (the request declares tools, as Claude
// Code's do) into an Anthropic Messages stream. It isolates the codecs'
// per-event cost, which BenchmarkServeHTTPLoadStream measures inside the
// whole handler.
func BenchmarkLoadStreamTranscode(b *testing.B) {
	events := harness.OpenAIChatStream()
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	tr := stream.Translation{Client: anth, Backend: oai, Request: &translate.Request{
		Model: "claude-opus-5-5", Stream: true,
		Tools: []translate.Tool{
			{Name: "Bash", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}`)},
			{Name: "Read", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
		},
	}}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		var out stream.SSEOutput
		tc := tr.NewStreamTranscoder(&out)
		w := 0
		for _, ev := range events {
			w += len(tc.Write(ev))
		}
		w += len(tc.Close())
		out.Release()
		if w < 20000 {
			b.Fatalf("%d bytes written", w)
		}
	}
}

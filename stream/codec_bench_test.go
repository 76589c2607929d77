package stream_test

import (
	"os"
	"testing"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// Per-protocol codec benchmarks, one direction at a time, all reporting
// allocations: request decode and encode with the ~100 KB Claude Code
// request of testdata/bench, stream decode and encode with the 200-delta
// turn of upstreamStream. The protocols' files
// (<protocol>_codec_bench_test.go) name them; the Request* and Stream*
// benchmarks of bench_test.go measure whole translations.

// claudeCodeFixture is testdata/bench/claude_code_100k.json, the issue's
// request workload.
func claudeCodeFixture(b *testing.B) []byte {
	body, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// fixtureIR is the fixture decoded, as every request encoder gets it.
func fixtureIR(b *testing.B) *translate.Request {
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(claudeCodeFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	return req
}

// benchDecodeRequest decodes the fixture in protocol p's form.
func benchDecodeRequest(b *testing.B, p translate.Protocol) {
	c, _ := translate.Lookup(p)
	body, err := c.EncodeRequest(fixtureIR(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEncodeRequest encodes the decoded fixture for protocol p.
func benchEncodeRequest(b *testing.B, p translate.Protocol) {
	c, _ := translate.Lookup(p)
	req := fixtureIR(b)
	body, err := c.EncodeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// frame is one SSE event of a stream, its data in memory of its own.
type frame struct {
	name string
	data []byte
}

// streamFrames is upstreamStream in protocol p, split into its events.
func streamFrames(b *testing.B, p translate.Protocol) (frames []frame, size int) {
	body := upstreamStream(b, p)
	var sp stream.SSEParser
	collect := func(name string, data []byte) {
		frames = append(frames, frame{name, append([]byte(nil), data...)})
	}
	if err := sp.Feed(body, collect); err != nil {
		b.Fatal(err)
	}
	if err := sp.Close(collect); err != nil {
		b.Fatal(err)
	}
	return frames, len(body)
}

// benchStreamDecode decodes protocol p's stream into IR events, event by
// event, with a fresh decoder per stream.
func benchStreamDecode(b *testing.B, p translate.Protocol) {
	c, _ := translate.Lookup(p)
	frames, size := streamFrames(b, p)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var evs []translate.Event
	for b.Loop() {
		dec := c.NewStreamDecoder()
		n := 0
		for _, f := range frames {
			evs = dec.Decode(evs[:0], f.name, f.data)
			n += len(evs)
		}
		if n += len(dec.End(evs[:0])); n < len(frames)/2 {
			b.Fatalf("%d IR events from %d frames", n, len(frames))
		}
	}
}

// countingFrames is a FrameWriter that keeps nothing.
type countingFrames struct{ n, frames int }

func (w *countingFrames) WriteFrame(_ string, data []byte) { w.n += len(data); w.frames++ }

// benchStreamEncode encodes the turn's IR events (decoded once from the
// OpenAI Chat stream) as protocol p's stream, with a fresh encoder per
// stream. SetBytes counts the bytes written.
func benchStreamEncode(b *testing.B, p translate.Protocol) {
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	frames, _ := streamFrames(b, translate.ProtocolOpenAIChat)
	dec := oai.NewStreamDecoder()
	var evs []translate.Event
	for _, f := range frames {
		evs = dec.Decode(evs, f.name, f.data)
	}
	evs = dec.End(evs)
	c, _ := translate.Lookup(p)
	req := &translate.Request{Model: "client-model", Stream: true, IncludeUsage: true}
	run := func() *countingFrames {
		w := &countingFrames{}
		enc := c.NewStreamEncoder(req)
		for i := range evs {
			enc.Encode(w, &evs[i])
		}
		return w
	}
	w := run()
	// Every text delta becomes a frame of its own (the stream is not
	// batched).
	if w.frames < len(evs)-20 {
		b.Fatalf("%d frames for %d IR events", w.frames, len(evs))
	}
	size := w.n
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

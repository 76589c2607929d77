package stream_test

import (
	"bytes"
	"testing"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// The passthrough benchmarks feed the same upstream stream (upstreamStream:
// ~210 events) one event per write, as servers flush them, in three ways:
// a plain copy (what reverse_proxy alone does), the PassWatcher, and the
// observing Transcoder louter used before (the backend's full stream
// decoder behind a discarding encoder). ns/event is per upstream event.

func BenchmarkPassthroughCopy(b *testing.B) {
	for _, p := range passFuzzProtocols {
		b.Run(string(p), func(b *testing.B) {
			events := splitEvents(upstreamStream(b, p))
			benchPass(b, events, func() func([]byte) []byte {
				return func(p []byte) []byte { return p }
			})
		})
	}
}

func BenchmarkPassthroughWatched(b *testing.B) {
	for _, p := range passFuzzProtocols {
		b.Run(string(p), func(b *testing.B) {
			events := splitEvents(upstreamStream(b, p))
			benchPass(b, events, func() func([]byte) []byte {
				return stream.NewPassWatcher(p, false).Write
			})
		})
	}
}

func BenchmarkPassthroughObservedByDecoder(b *testing.B) {
	for _, p := range passFuzzProtocols {
		b.Run(string(p), func(b *testing.B) {
			events := splitEvents(upstreamStream(b, p))
			codec, _ := translate.Lookup(p)
			benchPass(b, events, func() func([]byte) []byte {
				tc := stream.NewTranscoder(&stream.SSEParser{}, codec.NewStreamDecoder(), nopEncoder{}, &stream.SSEOutput{})
				return func(p []byte) []byte { tc.Write(p); return p }
			})
		})
	}
}

func benchPass(b *testing.B, events [][]byte, start func() func([]byte) []byte) {
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	var sink bytes.Buffer
	sink.Grow(2 * n)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		sink.Reset()
		write := start()
		for _, ev := range events {
			sink.Write(write(ev))
		}
		if sink.Len() != n {
			b.Fatalf("%d of %d bytes forwarded", sink.Len(), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// splitEvents cuts an SSE body after each blank line.
func splitEvents(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		i := bytes.Index(body, []byte("\n\n"))
		if i < 0 {
			return append(out, body)
		}
		out = append(out, body[:i+2])
		body = body[i+2:]
	}
	return out
}

type nopEncoder struct{}

func (nopEncoder) Encode(translate.FrameWriter, *translate.Event) {}

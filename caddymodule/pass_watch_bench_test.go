package caddymodule

import (
	"testing"
)

// openaiPassRequest is an OpenAI Chat client's streaming request for a
// model on an OpenAI Chat backend: a passthrough stream.
const openaiPassRequest = `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"weather?"}]}`

// BenchmarkServeHTTPPassthroughPerEvent is a same-protocol stream through
// the whole handler, one upstream event per write and flush: the watched
// passthrough with the stream timers armed (the defaults). Compare with
// BenchmarkServeHTTPPassthroughBaseline, the same upstream writing to the
// recorder directly.
func BenchmarkServeHTTPPassthroughPerEvent(b *testing.B) {
	events := benchOpenAIEvents()
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	l := realLouter(b, proxyLike(200, sseHeader(), events...))
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := l.ServeHTTP(rec, newRequest("POST", "/v1/chat/completions", openaiPassRequest), &nextRecorder{}); err != nil || rec.Code != 200 {
			b.Fatal(err, rec.Code)
		}
		if rec.Body.Len() != n {
			b.Fatalf("%d of %d bytes passed", rec.Body.Len(), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// BenchmarkServeHTTPPassthroughBaseline is the upstream of
// BenchmarkServeHTTPPassthroughPerEvent without louter: what copying and
// flushing the events costs by itself.
func BenchmarkServeHTTPPassthroughBaseline(b *testing.B) {
	events := benchOpenAIEvents()
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	upstream := proxyLike(200, sseHeader(), events...)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := upstream(rec, newRequest("POST", "/v1/chat/completions", openaiPassRequest)); err != nil || rec.Body.Len() != n {
			b.Fatal(err, rec.Body.Len())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

package caddymodule

import (
	"syscall"
	"testing"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/record"
)

// BenchmarkServeHTTPStreamRecord is BenchmarkServeHTTPStreamPerEvent with
// record off and on: the difference is what recording costs a streamed
// request — capturing both hops on the request's path, and the writer's
// JSON encoding, redaction and disk write on its own goroutine. The queue
// is large enough for every request and the writer is drained inside the
// timed loop, so all of the writer's work is counted; run it with -cpu 1
// or read "cpu-ns/op", the process's CPU time (user and system, from
// getrusage) per request, which a busy machine does not inflate as it does
// the wall time. "dropped/op" must stay 0.
func BenchmarkServeHTTPStreamRecord(b *testing.B) {
	events := benchOpenAIEvents()
	l := realLouter(b, proxyLike(200, sseHeader(), events...))
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			l.recording = nil
			var w *record.Writer
			if on {
				var err error
				w, err = record.NewWriter(record.WriterConfig{Dir: b.TempDir(), Scrub: redact.ScrubRecordLine, QueueSize: 1 << 14})
				if err != nil {
					b.Fatal(err)
				}
				l.recording = &recording{writer: w, keys: []string{"oai-key", "anth-key"}}
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				rec := newFlushRecorder()
				if err := l.ServeHTTP(rec, newRequest("POST", "/v1/messages", anthropicStreamRequest), &nextRecorder{}); err != nil || rec.Code != 200 {
					b.Fatal(err, rec.Code)
				}
			}
			if w != nil {
				w.Close() // timed: the writer's work is the request's
				b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op")
				l.recording = nil
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the process's CPU time so far, in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

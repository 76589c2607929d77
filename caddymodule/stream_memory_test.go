package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
)

// These tests hold many streams open through the handler, stalled by the
// upstream, and compare the live heap they hold after a few events and
// after many: the guide's "memory per stream flat however long the stream".

// heldStreamEvents is an OpenAI Chat stream of n text deltas after the
// role chunk, the shape of the load benchmark's stream before its tool
// call.
func heldStreamEvents(n int) []string {
	chunk := func(delta string) string {
		return `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	}
	events := []string{chunk(`{"role":"assistant","content":""}`)}
	for i := 0; i < n; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"word%d "}`, i)))
	}
	return events
}

// discardFlusher is a client connection that forgets what it is sent.
type discardFlusher struct{ h http.Header }

func (d *discardFlusher) Header() http.Header         { return d.h }
func (d *discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Flush()                      {}

// heldStreamUpstream sends events the way reverse_proxy hands a backend's
// body over when the backend is ahead of the client — in writes of up to
// 32 KiB (its copy buffer) that cut events anywhere — then stalls until
// release closes or the request ends. Each request is done once in
// stalled when it stalls (or fails).
func heldStreamUpstream(events []string, stalled *sync.WaitGroup, release <-chan struct{}) upstreamFunc {
	body := []byte(strings.Join(events, ""))
	return func(w http.ResponseWriter, r *http.Request) error {
		reached := sync.OnceFunc(stalled.Done)
		defer reached() // a request that fails counts as stalled
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 32<<10)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			_ = rc.Flush()
			rest = rest[n:]
		}
		reached()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return nil
	}
}

// heapPerHeldStream holds n streams of path and body open through a
// louter whose upstream stalls after events, and returns the live heap
// they hold, in bytes per stream. When profile is set, it writes a heap
// profile there with the streams held. The streams end before it returns.
func heapPerHeldStream(t *testing.T, n int, path, body string, events []string, profile string) float64 {
	t.Helper()
	var stalled sync.WaitGroup
	release := make(chan struct{})
	l := realLouter(t, heldStreamUpstream(events, &stalled, release))
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = newRequest("POST", path, body)
	}
	before := liveHeap()
	var served sync.WaitGroup
	errs := make(chan error, n)
	stalled.Add(n)
	served.Add(n)
	for _, r := range reqs {
		go func() {
			defer served.Done()
			if err := l.ServeHTTP(&discardFlusher{h: http.Header{}}, r, &nextRecorder{}); err != nil {
				errs <- err
			}
		}()
	}
	stalled.Wait()
	held := liveHeap()
	if profile != "" {
		if f, err := os.Create(profile); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	close(release)
	served.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return float64(int64(held)-int64(before)) / float64(n)
}

// liveHeap returns the bytes of live heap objects.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHeldStreamMemoryFlat holds streams after 10 upstream events and
// after 500, and checks that a stream holds no more heap after the long
// stretch than after the short one. LOUTER_HEAP_PROFILE=prefix writes the
// heap profiles with the streams held.
func TestHeldStreamMemoryFlat(t *testing.T) {
	const streams = 200
	tests := []struct {
		name, path, body string
	}{
		{"translated, Anthropic client to OpenAI Chat", "/v1/messages", anthropicStreamRequest},
		{"passthrough, OpenAI Chat", "/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"weather?"}]}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			profile := func(stall int) string {
				if p := os.Getenv("LOUTER_HEAP_PROFILE"); p != "" {
					return fmt.Sprintf("%s-%d-%d.pprof", p, i, stall)
				}
				return ""
			}
			short := heapPerHeldStream(t, streams, tt.path, tt.body, heldStreamEvents(10), profile(10))
			long := heapPerHeldStream(t, streams, tt.path, tt.body, heldStreamEvents(500), profile(500))
			t.Logf("live heap per held stream: %.0f B after 10 events, %.0f B after 500", short, long)
			if grown := long - short; grown > 4096 {
				t.Errorf("a stream held after 500 events holds %.0f B more than after 10 (bound 4096 B)", grown)
			}
		})
	}
}

// BenchmarkServeHTTPStreamBursts is BenchmarkServeHTTPStreamPerEvent with
// the upstream's body handed over in writes of up to 32 KiB, as
// reverse_proxy does when the backend is ahead of the client: the output
// buffers are as large as those writes' translation.
func BenchmarkServeHTTPStreamBursts(b *testing.B) {
	body := strings.Join(benchOpenAIEvents(), "")
	var chunks []string
	for rest := body; len(rest) > 0; {
		n := min(len(rest), 32<<10)
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	l := realLouter(b, proxyLike(200, sseHeader(), chunks...))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := l.ServeHTTP(&discardFlusher{h: http.Header{}}, newRequest("POST", "/v1/messages", anthropicStreamRequest), &nextRecorder{}); err != nil {
			b.Fatal(err)
		}
	}
}

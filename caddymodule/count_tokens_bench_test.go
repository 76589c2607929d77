package caddymodule

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// countBodyBytes is the size of BenchmarkCountTokensMemory's requests: the
// 32 MB of outside testing (issue 21), a little under max_request_body's
// default.
const countBodyBytes = 31 << 20

// bigCountBody is a count_tokens request of about size bytes: the Claude
// Code turn's messages repeated.
func bigCountBody(tb testing.TB, size int) []byte {
	tb.Helper()
	turn := []byte(readClaudeCodeTurn(tb))
	msgs := gjson.GetBytes(turn, "messages")
	inner := msgs.Raw[1 : len(msgs.Raw)-1]
	var b bytes.Buffer
	b.Grow(size + len(inner))
	b.WriteString(`{"model":"claude-big","messages":[`)
	for b.Len()+len(inner)+2 < size {
		if b.Len() > len(`{"model":"claude-big","messages":[`) {
			b.WriteByte(',')
		}
		b.WriteString(inner)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// peakHeap samples the heap in use every millisecond until stop is
// closed, and returns the largest figure seen.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var m runtime.MemStats
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkCountTokensMemory sends four concurrent count_tokens requests
// (Anthropic client, OpenAI Chat backend: counted locally) and reports the
// peak heap in use above the idle heap (peak-MiB) and how many were
// counted rather than refused (counted/op). The bodies are the 32 MB of
// outside testing (issue 21) — the Claude Code turn's messages repeated,
// or one text of that size — and the largest the default max_count_body
// takes.
func BenchmarkCountTokensMemory(b *testing.B) {
	turns := bigCountBody(b, countBodyBytes)
	oneText := bigCountText(b, countBodyBytes)
	tests := []struct {
		name     string
		maxCount int64
		body     []byte
	}{
		{"default/31MB", 0, turns},
		{"default/8MB", 0, bigCountBody(b, defaultMaxCountBody-1)},
		{"max_count_body=32MiB/31MB", 32 << 20, turns},
		{"max_count_body=32MiB/31MB-one-text", 32 << 20, oneText},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			l := newLouter(b, &Louter{
				MaxCountBody: tt.maxCount,
				Backends:     map[string]*Backend{"oai": {Protocol: translate.ProtocolOpenAIChat}},
				Models:       []ModelRoute{{Match: "claude*", Backend: "oai", Rename: "gpt-4o"}},
			}, map[string]caddyhttp.MiddlewareHandler{"oai": proxyLike(http.StatusOK, nil)})
			benchCountMemory(b, l, tt.body)
		})
	}
}

func benchCountMemory(b *testing.B, l *Louter, body []byte) {
	var peak float64
	var counted atomic.Int64
	for b.Loop() {
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		stop := make(chan struct{})
		got := peakHeap(stop)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				r := newRequest(http.MethodPost, "/v1/messages/count_tokens", "")
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				rec := newFlushRecorder()
				if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil {
					b.Error(err)
				}
				if rec.Code == http.StatusOK {
					counted.Add(1)
				}
			})
		}
		wg.Wait()
		close(stop)
		peak += float64(<-got-m0.HeapInuse) / (1 << 20)
	}
	b.ReportMetric(peak/float64(b.N), "peak-MiB")
	b.ReportMetric(float64(counted.Load())/float64(b.N), "counted/op")
}

// bigCountText is a count_tokens request of about size bytes whose one
// message is one text: the Claude Code turn's JSON, repeated.
func bigCountText(tb testing.TB, size int) []byte {
	tb.Helper()
	piece, _ := json.Marshal(readClaudeCodeTurn(tb))
	piece = piece[1 : len(piece)-1]
	var b bytes.Buffer
	b.Grow(size + len(piece))
	b.WriteString(`{"model":"claude-big","messages":[{"role":"user","content":"`)
	for b.Len()+len(piece)+4 < size {
		b.Write(piece)
	}
	b.WriteString(`"}]}`)
	return b.Bytes()
}

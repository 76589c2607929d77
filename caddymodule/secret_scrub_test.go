package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSecretWriter drives the writer as louter's responseWriter does, in
// the pieces reverse_proxy writes.
func TestSecretWriter(t *testing.T) {
	const key = "backend-secret-123"
	tests := []struct {
		name        string
		status      int
		contentType string
		stream      bool
		chunks      []string
		want        string
		wantLength  string // Content-Length sent, "" for none
	}{
		{
			name: "error body held, scrubbed, length corrected", status: 401, contentType: "application/json",
			chunks:     []string{`{"error":{"message":"bad key back`, `end-secret-123"}}`},
			want:       `{"error":{"message":"bad key [redacted]"}}`,
			wantLength: "42",
		},
		{
			name: "stream: error lines scrubbed, a key cut between writes too", status: 200, contentType: "text/event-stream",
			chunks: []string{"data: {\"text\":\"hi\"}\n\ndata: {\"error\":{\"message\":\"key backend-se", "cret-123 at 10.0.0.1:80\"}}\n\n"},
			want:   "data: {\"text\":\"hi\"}\n\ndata: {\"error\":{\"message\":\"key [redacted] at [address]\"}}\n\n",
		},
		{
			name: "stream: model text is never touched", status: 200, contentType: "text/event-stream; charset=utf-8",
			chunks: []string{"data: {\"text\":\"use sk-abcdefghijklmnop and 10.0.0.1:80\"}\n\n"},
			want:   "data: {\"text\":\"use sk-abcdefghijklmnop and 10.0.0.1:80\"}\n\n",
		},
		{
			name: "stream: a Responses lifecycle event, its error null, is not scrubbed", status: 200, contentType: "text/event-stream",
			chunks: []string{"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"error\": null,\"instructions\":\"backend-secret-123 at 10.0.0.1:80\"}}\n\n"},
			want:   "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"error\": null,\"instructions\":\"backend-secret-123 at 10.0.0.1:80\"}}\n\n",
		},
		{
			name: "stream: an error after an error null in one line is scrubbed", status: 200, contentType: "text/event-stream",
			chunks: []string{"data: {\"response\":{\"error\":null},\"error\":{\"message\":\"backend-secret-123\"}}\n\n", "event: error\ndata: {\"type\":\"error\",\"message\":\"backend-secret-123\"}\n\n"},
			want:   "data: {\"response\":{\"error\":null},\"error\":{\"message\":\"[redacted]\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"message\":\"[redacted]\"}\n\n",
		},
		{
			name: "gemini JSON array stream, last line without newline", status: 200, contentType: "application/json", stream: true,
			chunks: []string{"[{\"a\":1},\r\n", "{\"error\":{\"message\":\"backend-secret-123\"}}]"},
			want:   "[{\"a\":1},\r\n{\"error\":{\"message\":\"[redacted]\"}}]",
		},
		{
			name: "successful JSON answer passes as is", status: 200, contentType: "application/json",
			chunks: []string{`{"text":"backend-secret-123 sk-abcdefghijklmnop"}`},
			want:   `{"text":"backend-secret-123 sk-abcdefghijklmnop"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			sw := newSecretWriter(rec, key)
			sw.stream = tt.stream
			sw.Header().Set("Content-Type", tt.contentType)
			if tt.status >= 300 {
				sw.Header().Set("Content-Length", "9") // stale, from upstream
			}
			sw.WriteHeader(tt.status)
			for _, c := range tt.chunks {
				if n, err := sw.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				sw.Flush()
			}
			sw.close()
			if rec.Code != tt.status || rec.Body.String() != tt.want {
				t.Errorf("got %d %q\nwant %d %q", rec.Code, rec.Body.String(), tt.status, tt.want)
			}
			if got := rec.Header().Get("Content-Length"); tt.wantLength != "" && got != tt.wantLength {
				t.Errorf("Content-Length %q, want %q", got, tt.wantLength)
			}
		})
	}
}

// TestSecretWriterHoldsErrorStatus checks that a flush does not commit an
// error's status before its body is scrubbed.
func TestSecretWriterHoldsErrorStatus(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := newSecretWriter(rec)
	sw.WriteHeader(http.StatusTooManyRequests)
	sw.Write([]byte(`{"error":{}}`))
	sw.Flush()
	if rec.Flushed || rec.Body.Len() != 0 {
		t.Fatalf("flushed %v, body %q before close", rec.Flushed, rec.Body.String())
	}
	sw.close()
	if rec.Code != http.StatusTooManyRequests || rec.Body.String() != `{"error":{}}` {
		t.Errorf("got %d %q", rec.Code, rec.Body.String())
	}
}

// BenchmarkSecretWriterStream is the scrubber's cost on a stream without
// errors, one event per write and flush as reverse_proxy does, against the
// same writes straight to the client.
func BenchmarkSecretWriterStream(b *testing.B) {
	events := benchOpenAIEvents()
	n := 0
	raw := make([][]byte, len(events))
	for i, ev := range events {
		n += len(ev)
		raw[i] = []byte(ev)
	}
	for _, scrub := range []bool{false, true} {
		b.Run(map[bool]string{false: "direct", true: "scrubbed"}[scrub], func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			rec := newFlushRecorder()
			for b.Loop() {
				rec.Body.Reset()
				rec.flushedAt = rec.flushedAt[:0]
				var w http.ResponseWriter = rec
				sw := newSecretWriter(rec, "backend-secret-123", "client-secret-456")
				if scrub {
					w = sw
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				for _, ev := range raw {
					w.Write(ev)
					w.(http.Flusher).Flush()
				}
				sw.close()
			}
		})
	}
}

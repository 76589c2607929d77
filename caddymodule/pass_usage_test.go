package caddymodule

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/louter/louter/translate"
)

// A passthrough JSON answer is passed on whole and its usage read from a
// bounded copy; past the bound, or for a stream client, nothing is kept.
func TestPassUsageCopy(t *testing.T) {
	answer := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3}}`)
	huge := append(bytes.Repeat([]byte(" "), maxPassUsageBody), answer...)
	codec, _ := translate.Lookup(translate.ProtocolAnthropic)
	for _, tt := range []struct {
		name        string
		body        []byte
		contentType string
		wantStream  bool
		want        bool
	}{
		{"small JSON", answer, "application/json", false, true},
		{"JSON with charset", answer, "application/json; charset=utf-8", false, true},
		{"over the bound", huge, "application/json", false, false},
		{"not JSON", answer, "text/plain", false, false},
		{"stream client", answer, "application/json", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rw := newResponseWriter(rec)
			rw.client, rw.backend, rw.passthrough, rw.wantStream = codec, &Backend{codec: codec}, true, tt.wantStream
			rw.Header().Set("Content-Type", tt.contentType)
			rw.WriteHeader(http.StatusOK)
			for rest := tt.body; len(rest) > 0; {
				n := min(len(rest), 32<<10) // reverse_proxy's writes
				if _, err := rw.Write(rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			rw.finish()
			if !bytes.Equal(rec.Body.Bytes(), tt.body) {
				t.Fatalf("the client got %d bytes, want the %d sent", rec.Body.Len(), len(tt.body))
			}
			if rw.hasUsage != tt.want {
				t.Fatalf("hasUsage = %v, want %v", rw.hasUsage, tt.want)
			}
			if tt.want && (rw.usage.InputTokens != 12 || rw.usage.OutputTokens != 3 || rw.stop != translate.StopEndTurn) {
				t.Errorf("usage %+v, stop %q", rw.usage, rw.stop)
			}
			if rw.passCopy.buf != nil {
				t.Error("the copy is still held after the answer ended")
			}
		})
	}
}

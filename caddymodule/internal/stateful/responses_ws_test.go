package stateful

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one Responses stream event as the SSE framing carries it.
func sseEvent(typ, data string) []byte {
	return []byte("event: " + typ + "\ndata: " + data + "\n\n")
}

// TestWSEventWriterFlat: a socket's writer turns each SSE event into one
// frame, however the stream is chunked, and its memory does not grow with
// the events: no allocation per event, one line buffer reused.
func TestWSEventWriterFlat(t *testing.T) {
	var frames []string
	w := &wsEventWriter{send: func(p []byte) error { frames = append(frames, string(p)); return nil }}
	w.begin()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	delta := sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","delta":"abc"}`)
	// Byte by byte, then whole.
	for i := range delta {
		_, _ = w.Write(delta[i : i+1])
	}
	_, _ = w.Write(delta)
	if len(frames) != 2 || frames[0] != `{"type":"response.output_text.delta","delta":"abc"}` || frames[0] != frames[1] {
		t.Fatalf("frames = %q", frames)
	}
	w.send = func([]byte) error { return nil }
	allocs := testing.AllocsPerRun(10000, func() { _, _ = w.Write(delta) })
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0 (a session's memory must not grow per event)", allocs)
	}
	if cap(w.line) > 1024 {
		t.Errorf("line buffer grew to %d", cap(w.line))
	}
	// A large event, then small ones: the large buffer is let go.
	_, _ = w.Write(sseEvent("response.completed", `{"type":"response.completed","response":{"x":"`+strings.Repeat("y", 100<<10)+`"}}`))
	_, _ = w.Write(delta)
	if cap(w.line) > 64<<10 {
		t.Errorf("a large event's buffer is kept: %d", cap(w.line))
	}
}

// TestWSEventWriterErrorFrame: a turn answered with an error status goes
// out as one error frame with the status.
func TestWSEventWriterErrorFrame(t *testing.T) {
	var frames []string
	w := &wsEventWriter{send: func(p []byte) error { frames = append(frames, string(p)); return nil }}
	w.begin()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"error":{"type":"rate_limit_exceeded","message":"slow down"}}`))
	w.end()
	want := `{"type":"error","status":429,"error":{"type":"rate_limit_exceeded","message":"slow down"}}`
	if len(frames) != 1 || frames[0] != want {
		t.Errorf("frames = %q, want %s", frames, want)
	}
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// TestCaptureWriterKeepsOnlyTheTerminalEvent: the store's tap on a stream
// keeps the terminal event's response and nothing of the deltas.
func TestCaptureWriterKeepsOnlyTheTerminalEvent(t *testing.T) {
	c := &captureWriter{ResponseWriter: &discardWriter{h: http.Header{"Content-Type": {"text/event-stream"}}}}
	c.WriteHeader(http.StatusOK)
	delta := sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"`+strings.Repeat("z", 200)+`"}`)
	_, _ = c.Write(delta)
	allocs := testing.AllocsPerRun(10000, func() { _, _ = c.Write(delta) })
	if allocs != 0 {
		t.Errorf("%v allocations per event", allocs)
	}
	if cap(c.line) > 1024 {
		t.Errorf("the tap kept %d bytes of deltas", cap(c.line))
	}
	// Without an event line too (a passthrough backend's framing).
	final := fmt.Sprintf(`{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":%q}]}]}}`, strings.Repeat("t", 300))
	_, _ = c.Write([]byte("data: " + final[:50]))
	_, _ = c.Write([]byte(final[50:] + "\n\n"))
	got := string(c.response())
	if !strings.HasPrefix(got, `{"id":"resp_1"`) || !strings.Contains(got, strings.Repeat("t", 300)) {
		t.Errorf("captured %s", got)
	}
}

package stateful

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestEchoWriter: the id replaces the member's null however the answer is
// cut into writes: a stream's lines, a JSON answer with and without its
// length; an error answer passes as it is.
func TestEchoWriter(t *testing.T) {
	const (
		stream = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"previous_response_id\":null}}\n\n" +
			"event: response.output_text.delta\ndata: {\"delta\":\"\\\"previous_response_id\\\":null\"}\n\n"
		wantStream = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"previous_response_id\":\"resp_1\"}}\n\n" +
			"event: response.output_text.delta\ndata: {\"delta\":\"\\\"previous_response_id\\\":null\"}\n\n"
		obj     = `{"id":"r","previous_response_id":null}`
		wantObj = `{"id":"r","previous_response_id":"resp_1"}`
	)
	for _, tc := range []struct {
		name, ctype, body, want string
		status                  int
		sized                   bool
	}{
		{"stream", "text/event-stream", stream, wantStream, 200, false},
		{"json sized", "application/json", obj, wantObj, 200, true},
		{"json unsized", "application/json", obj, wantObj, 200, false},
		{"error", "application/json", `{"error":{"message":"x"},"previous_response_id":null}`, `{"error":{"message":"x"},"previous_response_id":null}`, 400, true},
	} {
		for _, cut := range []int{1, 3, 7, 1000} {
			rec := httptest.NewRecorder()
			e := newEchoWriter(rec, "previous_response_id", "resp_1")
			e.Header().Set("Content-Type", tc.ctype)
			if tc.sized {
				e.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
			}
			e.WriteHeader(tc.status)
			for b := tc.body; len(b) > 0; {
				n := min(cut, len(b))
				if _, err := e.Write([]byte(b[:n])); err != nil {
					t.Fatal(err)
				}
				b = b[n:]
			}
			e.finish()
			if got := rec.Body.String(); got != tc.want || rec.Code != tc.status {
				t.Errorf("%s, writes of %d: %d %q, want %q", tc.name, cut, rec.Code, got, tc.want)
			}
			if cl := rec.Header().Get("Content-Length"); tc.sized && cl != strconv.Itoa(len(tc.want)) {
				t.Errorf("%s: Content-Length %s for %d bytes", tc.name, cl, len(tc.want))
			}
		}
	}
	var _ http.Flusher = (*echoWriter)(nil)
}

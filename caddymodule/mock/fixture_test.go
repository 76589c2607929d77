package mock

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestFixtureReplay(t *testing.T) {
	dir := t.TempDir()
	sse := "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
		"event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n" +
		": comment\ndata: {\"type\":\"message_stop\"}\n\n" +
		"data: trailing without blank line"
	jsonBody := "{\n  \"id\": \"msg_1\"\n}\n"
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"a.sse": sse, "sub/b.json": jsonBody, "c.txt": "plain"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, scenario, want, contentType string
		chunkSize, wantWrites             int
	}{
		{"sse, one write per event", "fixture=a.sse", sse, "text/event-stream", 0, 4},
		{"sse, chunked", "fixture=a.sse", sse, "text/event-stream", 5, -1},
		{"json", "fixture=sub/b.json", jsonBody, "application/json", 0, 1},
		{"other", "fixture=c.txt", "plain", "application/octet-stream", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMock(t, &Mock{FixturesDir: dir, ChunkSize: tt.chunkSize})
			w := &recordingWriter{ResponseRecorder: httptest.NewRecorder()}
			r := newRequest(http.MethodPost, "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, ScenarioHeader, tt.scenario)
			if err := m.ServeHTTP(w, r, nil); err != nil {
				t.Fatal(err)
			}
			if w.Code != http.StatusOK || w.Body.String() != tt.want {
				t.Errorf("got %d %q, want the file byte for byte", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
			}
			if tt.wantWrites >= 0 && len(w.sizes) != tt.wantWrites {
				t.Errorf("%d writes %v, want %d", len(w.sizes), w.sizes, tt.wantWrites)
			}
			for _, n := range w.sizes {
				if tt.chunkSize > 0 && n > tt.chunkSize {
					t.Errorf("a write of %d bytes with chunk_size %d", n, tt.chunkSize)
				}
			}
		})
	}
}

func TestFixtureRefusals(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"secret":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../secret.json", outside, "link.json", "missing.sse"} {
		t.Run(name, func(t *testing.T) {
			m := newMock(t, &Mock{FixturesDir: dir})
			r := newRequest(http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ScenarioHeader, "fixture="+name)
			w := serve(t, m, r)
			if w.Code != http.StatusBadRequest || bytes.Contains(w.Body.Bytes(), []byte("secret\":1")) {
				t.Errorf("got %d %s", w.Code, w.Body)
			}
			assertErrorShape(t, "openai_chat", w.Body.Bytes())
		})
	}
}

func TestFixtureUnits(t *testing.T) {
	data := []byte("a\n\nb\r\n\r\n\nc")
	units := fixtureUnits("x.sse", data)
	if got := bytes.Join(units, nil); !bytes.Equal(got, data) {
		t.Errorf("units do not rebuild the file: %q", got)
	}
	if len(units) != 4 || string(units[0]) != "a\n\n" || string(units[1]) != "b\r\n\r\n" || string(units[2]) != "\n" || string(units[3]) != "c" {
		t.Errorf("units %q", units)
	}
}

package caddymodule

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A complete fake_b stream, and what a fake_a client gets for it.
const (
	fakeBStream = "event: start\ndata: {\"id\":\"r1\",\"model\":\"b-model\"}\n\n" +
		"event: text\ndata: {\"v\":\"Hel\"}\n\n" +
		"event: text\ndata: {\"v\":\"lo\"}\n\n" +
		"event: stop\ndata: {\"stop\":\"end_turn\",\"in\":3,\"out\":5}\n\n"
	fakeAStream = "event: start\ndata: {\"id\":\"r1\",\"model\":\"b-1\",\"p\":\"fake_a\"}\n\n" +
		"event: text\ndata: {\"p\":\"fake_a\",\"v\":\"Hel\"}\n\n" +
		"event: text\ndata: {\"p\":\"fake_a\",\"v\":\"lo\"}\n\n" +
		"event: stop\ndata: {\"in\":3,\"out\":5,\"p\":\"fake_a\",\"stop\":\"end_turn\"}\n\n"
	fakeBJSON = `{"id":"r1","model":"b-model","text":"Hello","stop":"end_turn","in":3,"out":5}`
	fakeAJSON = `{"p":"fake_a","id":"r1","model":"b-1","text":"Hello","stop":"end_turn","in":3,"out":5}`
)

// splitEvery cuts s into pieces of n bytes, so events and lines are split
// anywhere.
func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func TestStreamTranslatedWriteByWrite(t *testing.T) {
	rec := newFlushRecorder()
	events := strings.SplitAfter(fakeBStream, "\n\n")
	events = events[:len(events)-1]
	// Each event arrives in two writes split mid-line; the client must get
	// nothing after the first half and the translated event, flushed,
	// after the second.
	upstream := func(w http.ResponseWriter, r *http.Request) error {
		for k, v := range sseHeader() {
			w.Header()[k] = v
		}
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		for i, ev := range events {
			before := rec.Body.Len()
			half := len(ev) / 2
			w.Write([]byte(ev[:half]))
			rc.Flush()
			if rec.Body.Len() != before {
				t.Errorf("event %d: output before the event was complete: %q", i, rec.Body.String()[before:])
			}
			w.Write([]byte(ev[half:]))
			rc.Flush()
			if rec.Body.Len() == before {
				t.Errorf("event %d: no output after the event was complete", i)
			}
			if n := len(rec.flushedAt); n == 0 || rec.flushedAt[n-1] != rec.Body.Len() {
				t.Errorf("event %d: the output was not flushed (flushes at %v, body %d)", i, rec.flushedAt, rec.Body.Len())
			}
		}
		return nil
	}
	l := fakeLouter(t, upstream)
	err, p := serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
	if err != nil || p != nil {
		t.Fatalf("err %v, panic %v", err, p)
	}
	if rec.Body.String() != fakeAStream {
		t.Errorf("client stream:\n%s\nwant:\n%s", rec.Body, fakeAStream)
	}
	h := rec.Header()
	if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache, no-transform" ||
		h.Get("X-Accel-Buffering") != "no" || h.Get("Content-Length") != "" || rec.Code != 200 {
		t.Errorf("status %d, headers %v", rec.Code, h)
	}
}

func TestStreamTranslatedTinyWrites(t *testing.T) {
	for _, n := range []int{1, 3, 7, 64, 1 << 20} {
		rec := newFlushRecorder()
		l := fakeLouter(t, proxyLike(200, sseHeader(), splitEvery(fakeBStream, n)...))
		serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
		if rec.Body.String() != fakeAStream {
			t.Errorf("writes of %d bytes: client stream:\n%s", n, rec.Body)
		}
	}
}

func TestStreamCleanEOFWithoutStop(t *testing.T) {
	rec := newFlushRecorder()
	cut := fakeBStream[:strings.Index(fakeBStream, "event: stop")]
	l := fakeLouter(t, proxyLike(200, sseHeader(), cut))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
	body := rec.Body.String()
	if !strings.HasPrefix(body, fakeAStream[:strings.Index(fakeAStream, "event: stop")]) || !strings.HasSuffix(body, "\n\n") ||
		!strings.Contains(body, "event: error\n") || !strings.Contains(body, "ended before the response was complete") {
		t.Errorf("a stream cut at a clean EOF must end with an error event:\n%s", body)
	}
	if rec.flushedAt[len(rec.flushedAt)-1] != rec.Body.Len() {
		t.Error("the final error event was not flushed")
	}
}

func TestStreamPassthrough(t *testing.T) {
	rec := newFlushRecorder()
	chunks := splitEvery(fakeBStream, 5)
	l := fakeLouter(t, proxyLike(200, http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "Cache-Control": {"no-cache"}, "Request-Id": {"req_1"}}, chunks...))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"a-1","stream":true}`), nil)
	if rec.Body.String() != fakeBStream {
		t.Errorf("passthrough stream changed:\n%s", rec.Body)
	}
	if len(rec.flushedAt) < len(chunks) {
		t.Errorf("%d flushes for %d writes", len(rec.flushedAt), len(chunks))
	}
	h := rec.Header()
	if h.Get("Content-Type") != "text/event-stream; charset=utf-8" || h.Get("Request-Id") != "req_1" ||
		h.Get("Cache-Control") != "no-cache, no-transform" || h.Get("X-Accel-Buffering") != "no" {
		t.Errorf("headers %v", h)
	}
}

func TestJSONPassthrough(t *testing.T) {
	rec := newFlushRecorder()
	body := `{"id":"x",  "weird":  true}`
	hdr := jsonHeader(body)
	hdr.Set("Request-Id", "req_1")
	l := fakeLouter(t, proxyLike(200, hdr, splitEvery(body, 4)...))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"a-1"}`), nil)
	if rec.Body.String() != body || rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) ||
		rec.Header().Get("Etag") != `"abc"` || rec.Header().Get("Request-Id") != "req_1" {
		t.Errorf("passthrough JSON changed: %q %v", rec.Body, rec.Header())
	}
}

func TestErrorTranslation(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		status     int
		body       string
		wantStatus int
		wantBody   string // exact
	}{
		{"429 with Retry-After", "b-1", 429, `{"error":{"message":"slow down"}}`, 429, `{"error":{"kind":"rate_limit","message":"slow down"},"p":"fake_a"}`},
		{"500", "b-1", 500, `{"error":{"message":"oops"}}`, 500, `{"error":{"kind":"api_error","message":"oops"},"p":"fake_a"}`},
		{"the codec changes the status", "b-1", 400, `{"error":{"message":"bad key","status":401}}`, 401, `{"error":{"kind":"authentication","message":"bad key"},"p":"fake_a"}`},
		{"unparsable body", "b-1", 503, `<html>busy</html>`, 503, `{"error":{"kind":"overloaded","message":"\u003chtml\u003ebusy\u003c/html\u003e"},"p":"fake_a"}`},
		{"redirect", "b-1", 302, ``, 502, `{"error":{"kind":"api_error","message":"louter: the backend answered with status 302"},"p":"fake_a"}`},
		{"passthrough keeps the body", "a-1", 429, `{"error":{"message":"slow down"}}`, 429, `{"error":{"message":"slow down"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newFlushRecorder()
			hdr := jsonHeader(tt.body)
			hdr.Set("Retry-After", "7")
			hdr.Set("Location", "http://elsewhere/")
			l := fakeLouter(t, proxyLike(tt.status, hdr, splitEvery(tt.body, 5)...))
			serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"`+tt.model+`","stream":true}`), nil)
			if rec.Code != tt.wantStatus || rec.Body.String() != tt.wantBody {
				t.Errorf("got %d %s, want %d %s", rec.Code, rec.Body, tt.wantStatus, tt.wantBody)
			}
			h := rec.Header()
			if h.Get("Retry-After") != "7" || h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) || h.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", h)
			}
			if tt.status == 302 && h.Get("Location") != "" {
				t.Error("a translated redirect kept its Location")
			}
		})
	}
}

func TestErrorBodyCapped(t *testing.T) {
	rec := newFlushRecorder()
	huge := strings.Repeat("x", maxErrorBody+100)
	l := fakeLouter(t, proxyLike(500, http.Header{}, splitEvery(huge, 32<<10)...))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1"}`), nil)
	msg := gjson.Get(rec.Body.String(), "error.message").String()
	if rec.Code != 500 || len(msg) != maxErrorBody {
		t.Errorf("status %d, message of %d bytes, want %d", rec.Code, len(msg), maxErrorBody)
	}
}

func TestJSONTranslated(t *testing.T) {
	rec := newFlushRecorder()
	upstream := func(w http.ResponseWriter, r *http.Request) error {
		for k, v := range jsonHeader(fakeBJSON) {
			w.Header()[k] = v
		}
		w.Header().Set("Last-Modified", "yesterday")
		w.WriteHeader(200)
		for _, c := range splitEvery(fakeBJSON, 10) {
			w.Write([]byte(c))
			http.NewResponseController(w).Flush()
			if rec.Body.Len() != 0 || len(rec.flushedAt) != 0 {
				t.Error("a buffered response reached the client early")
			}
		}
		return nil
	}
	l := fakeLouter(t, upstream)
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1"}`), nil)
	h := rec.Header()
	if rec.Code != 200 || rec.Body.String() != fakeAJSON || h.Get("Content-Length") != strconv.Itoa(len(fakeAJSON)) ||
		h.Get("Etag") != "" || h.Get("Last-Modified") != "" || h.Get("Content-Type") != "application/json" {
		t.Errorf("got %d %s %v", rec.Code, rec.Body, h)
	}
}

func TestJSONTranslatedUndecodable(t *testing.T) {
	rec := newFlushRecorder()
	l := fakeLouter(t, proxyLike(200, jsonHeader(""), `{"not":"a response"}`))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1"}`), nil)
	if rec.Code != 502 || !strings.Contains(rec.Body.String(), "cannot be decoded") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

func TestJSONToStream(t *testing.T) {
	rec := newFlushRecorder()
	l := fakeLouter(t, proxyLike(200, jsonHeader(fakeBJSON), splitEvery(fakeBJSON, 9)...))
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
	want := "event: start\ndata: {\"id\":\"r1\",\"model\":\"b-1\",\"p\":\"fake_a\"}\n\n" +
		"event: text\ndata: {\"p\":\"fake_a\",\"v\":\"Hello\"}\n\n" +
		"event: stop\ndata: {\"in\":3,\"out\":5,\"p\":\"fake_a\",\"stop\":\"end_turn\"}\n\n"
	h := rec.Header()
	if rec.Code != 200 || rec.Body.String() != want || h.Get("Content-Type") != "text/event-stream" || h.Get("Content-Length") != "" {
		t.Errorf("got %d %v\n%s", rec.Code, h, rec.Body)
	}
}

func TestStreamToJSON(t *testing.T) {
	tests := []struct {
		name       string
		stream     string
		wantStatus int
		check      func(body string) bool
	}{
		{"complete", fakeBStream, 200, func(b string) bool { return b == fakeAJSON }},
		{"upstream error event", "event: start\ndata: {}\n\nevent: error\ndata: {\"status\":529,\"message\":\"overloaded\"}\n\n", 529,
			func(b string) bool { return gjson.Get(b, "error.message").String() == "overloaded" }},
		{"cut", fakeBStream[:40], 502, func(b string) bool { return strings.Contains(b, "ended before the response was complete") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newFlushRecorder()
			l := fakeLouter(t, proxyLike(200, sseHeader(), splitEvery(tt.stream, 6)...))
			serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1"}`), nil)
			if rec.Code != tt.wantStatus || !tt.check(rec.Body.String()) || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("got %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			if len(rec.flushedAt) != 0 {
				t.Error("flushes reached the client of a buffered response")
			}
		})
	}
}

func TestReadFromIsTranslated(t *testing.T) {
	rec := newFlushRecorder()
	upstream := func(w http.ResponseWriter, r *http.Request) error {
		for k, v := range sseHeader() {
			w.Header()[k] = v
		}
		w.WriteHeader(200)
		if _, ok := w.(io.ReaderFrom); !ok {
			t.Error("the writer is not an io.ReaderFrom")
		}
		_, err := io.Copy(w, io.MultiReader(strings.NewReader(fakeBStream[:30]), strings.NewReader(fakeBStream[30:])))
		return err
	}
	l := fakeLouter(t, upstream)
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
	if rec.Body.String() != fakeAStream {
		t.Errorf("io.Copy bypassed the translation:\n%s", rec.Body)
	}
}

func TestHeaderMapIsPrivateUntilCommit(t *testing.T) {
	rec := newFlushRecorder()
	rec.Header().Set("Server", "Caddy")
	upstream := func(w http.ResponseWriter, r *http.Request) error {
		if w.Header().Get("Server") != "Caddy" {
			t.Error("the upstream does not see the response's headers")
		}
		// as reverse_proxy does
		w.Header().Del("Server")
		w.Header().Add("Via", "1.1 Caddy")
		if rec.Header().Get("Server") != "Caddy" {
			t.Error("the upstream's header changes reached the client before the commit")
		}
		return proxyLike(200, jsonHeader(`{}`), `{}`)(w, r)
	}
	l := fakeLouter(t, upstream)
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"a-1"}`), nil)
	if rec.Header().Get("Server") != "" || rec.Header().Get("Via") != "1.1 Caddy" {
		t.Errorf("headers after the commit: %v", rec.Header())
	}
}

func TestInformationalStatusNotForwarded(t *testing.T) {
	rec := newFlushRecorder()
	l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusEarlyHints)
		return proxyLike(200, jsonHeader(`{}`), `{}`)(w, r)
	})
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"a-1"}`), nil)
	if rec.Code != 200 || rec.Body.String() != `{}` {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

// abortingUpstream writes part of a response, then fails the way
// reverse_proxy does when reading from the backend fails.
func abortingUpstream(status int, header http.Header, chunks ...string) upstreamFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := proxyLike(status, header, chunks...)(w, r); err != nil {
			// reverse_proxy aborts on client write errors too
			panic(http.ErrAbortHandler)
		}
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
}

func TestUpstreamCutMidStreamRecovers(t *testing.T) {
	half := fakeBStream[:strings.Index(fakeBStream, "event: text")+20]
	tests := []struct {
		name      string
		model     string
		stream    bool
		upstream  upstreamFunc
		status    int
		wantStart string // the client body starts with this
		wantEnd   string // and ends with this
	}{
		{
			"translated stream", "b-1", true, abortingUpstream(200, sseHeader(), splitEvery(half, 7)...), 200,
			"event: start\ndata: {\"id\":\"r1\",\"model\":\"b-1\",\"p\":\"fake_a\"}\n\n",
			"event: error\ndata: {\"message\":\"upstream connection failed mid-stream\",\"p\":\"fake_a\",\"status\":502}\n\n",
		},
		{
			// Only whole events pass: the half event the cut left is
			// dropped, so the error event is not spliced into it.
			"passthrough stream", "a-1", true, abortingUpstream(200, sseHeader(), splitEvery(half, 7)...), 200,
			half[:strings.Index(half, "event: text")] + "event: error",
			"event: error\ndata: {\"message\":\"upstream connection failed mid-stream\",\"p\":\"fake_a\",\"status\":502}\n\n",
		},
		{
			"passthrough stream that had already ended", "a-1", true, abortingUpstream(200, sseHeader(), fakeBStream), 200,
			fakeBStream, fakeBStream,
		},
		{
			"buffered JSON", "b-1", false, abortingUpstream(200, jsonHeader(""), fakeBJSON[:20]), 502,
			`{"error":{"kind":"api_error","message":"upstream connection failed before the response was complete"}`, `}`,
		},
		{
			"stream for a JSON client", "b-1", false, abortingUpstream(200, sseHeader(), half), 502,
			`{"error":{"kind":"api_error","message":"upstream connection failed mid-stream"}`, `}`,
		},
		{
			"JSON for a stream client", "b-1", true, abortingUpstream(200, jsonHeader(""), fakeBJSON[:20]), 502,
			`{"error":`, `}`,
		},
		{
			"error body", "b-1", false, abortingUpstream(429, jsonHeader(""), `{"error":{"mess`), 429,
			`{"error":{"kind":"rate_limit"`, `}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newFlushRecorder()
			l := fakeLouter(t, tt.upstream)
			body := `{"model":"` + tt.model + `","stream":` + strconv.FormatBool(tt.stream) + `}`
			err, p := serve(l, rec, newRequest("POST", "/fake_a/chat", body), nil)
			if err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}
			got := rec.Body.String()
			if rec.Code != tt.status || !strings.HasPrefix(got, tt.wantStart) || !strings.HasSuffix(got, tt.wantEnd) {
				t.Errorf("got %d:\n%s\nwant %d, starting with %q and ending with %q", rec.Code, got, tt.status, tt.wantStart, tt.wantEnd)
			}
			if tt.stream && tt.status == 200 && rec.flushedAt[len(rec.flushedAt)-1] != rec.Body.Len() {
				t.Error("the end of the stream was not flushed")
			}
		})
	}
}

func TestUpstreamCutPassthroughJSONAborts(t *testing.T) {
	l := fakeLouter(t, abortingUpstream(200, jsonHeader(fakeBJSON), fakeBJSON[:20]))
	_, p := serve(l, newFlushRecorder(), newRequest("POST", "/fake_a/chat", `{"model":"a-1"}`), nil)
	if p != http.ErrAbortHandler {
		t.Errorf("a passthrough body with a known length cannot be ended well; panic = %v, want ErrAbortHandler", p)
	}
}

// failingWriter is a client connection that breaks after some bytes.
type failingWriter struct {
	*flushRecorder
	room int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.flushRecorder.Write(p[:f.room])
		f.room = 0
		return n, errors.New("broken pipe")
	}
	f.room -= len(p)
	return f.flushRecorder.Write(p)
}

func TestClientWriteFailureAborts(t *testing.T) {
	for _, model := range []string{"a-1", "b-1"} {
		w := &failingWriter{flushRecorder: newFlushRecorder(), room: 30}
		l := fakeLouter(t, abortingUpstream(200, sseHeader(), splitEvery(fakeBStream, 10)...))
		_, p := serve(l, w, newRequest("POST", "/fake_a/chat", `{"model":"`+model+`","stream":true}`), nil)
		if p != http.ErrAbortHandler {
			t.Errorf("%s: panic = %v, want ErrAbortHandler to propagate", model, p)
		}
		if strings.Contains(w.Body.String(), "event: error") {
			t.Errorf("%s: an error event was written to a broken connection", model)
		}
	}
}

func TestClientDisconnect(t *testing.T) {
	for _, model := range []string{"a-1", "b-1"} {
		ctx, cancel := context.WithCancel(context.Background())
		var upstreamCtx context.Context
		upstream := func(w http.ResponseWriter, r *http.Request) error {
			upstreamCtx = r.Context()
			proxyLike(200, sseHeader(), fakeBStream[:50])(w, r)
			cancel() // the client goes away
			// reverse_proxy's read of the backend fails with the
			// cancelled context, and it aborts
			panic(http.ErrAbortHandler)
		}
		rec := newFlushRecorder()
		l := fakeLouter(t, upstream)
		r := newRequest("POST", "/fake_a/chat", `{"model":"`+model+`","stream":true}`).WithContext(ctx)
		_, p := serve(l, rec, r, nil)
		if p != http.ErrAbortHandler {
			t.Errorf("%s: panic = %v, want ErrAbortHandler to propagate", model, p)
		}
		if upstreamCtx == nil || upstreamCtx.Err() == nil {
			t.Errorf("%s: the upstream request's context was not the client's", model)
		}
		if strings.Contains(rec.Body.String(), "event: error") {
			t.Errorf("%s: an error event was written to a client that has gone", model)
		}
	}
}

func TestOtherPanicsPropagate(t *testing.T) {
	l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error {
		proxyLike(200, sseHeader(), fakeBStream[:50])(w, r)
		panic("a bug")
	})
	_, p := serve(l, newFlushRecorder(), newRequest("POST", "/fake_a/chat", `{"model":"b-1","stream":true}`), nil)
	if p != "a bug" {
		t.Errorf("panic = %v", p)
	}
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream":                true,
		"text/event-stream; charset=utf-8": true,
		"TEXT/Event-Stream":                true,
		"text/event-stream ;x=y":           true,
		"text/event-streams":               false,
		"application/json":                 false,
		"":                                 false,
		"text/event":                       false,
	} {
		if got := isEventStream(ct); got != want {
			t.Errorf("isEventStream(%q) = %v", ct, got)
		}
	}
}

func TestWriterFlushModes(t *testing.T) {
	// Before the header and in buffering modes a flush must not reach the
	// client: it would commit a status the translation has not decided.
	rec := newFlushRecorder()
	rec.Code = 0 // to see whether a status is written
	rw := newResponseWriter(rec)
	rw.client, rw.backend = fakeCodec{fakeA}, &Backend{codec: fakeCodec{fakeB}}
	if err := rw.FlushError(); err != nil || len(rec.flushedAt) != 0 {
		t.Errorf("flush before the header: %v, %d flushes", err, len(rec.flushedAt))
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(200)
	rw.Flush()
	if len(rec.flushedAt) != 0 || rec.Code != 0 || rec.Body.Len() != 0 {
		t.Error("a buffered response was flushed")
	}
	if _, ok := any(rw).(interface{ Unwrap() http.ResponseWriter }); !ok {
		t.Error("no Unwrap: ResponseController deadlines would not reach the connection")
	}
}

package caddymodule

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fakeLouter returns a handler with four fake backends:
//
//	model "a-*"      -> backend a (fake_a)
//	model "b-*"      -> backend b (fake_b), renamed to "b-model"
//	model "capped-*" -> backend capped (fake_b), max_tokens 100
//	model "acap-*"   -> backend acap (fake_a), max_tokens 100, renamed to "a-model"
//
// A fake_a client (POST /fake_a/chat) reaching backend a is passthrough;
// reaching b or capped it is translated.
func fakeLouter(t *testing.T, upstream upstreamFunc) *Louter {
	t.Helper()
	l := &Louter{
		Backends: map[string]*Backend{
			"a":      {Protocol: fakeA, APIKey: "a-key"},
			"b":      {Protocol: fakeB, APIKey: "b-key"},
			"capped": {Protocol: fakeB, MaxTokens: 100},
			"acap":   {Protocol: fakeA, MaxTokens: 100},
		},
		Models: []ModelRoute{
			{Match: "a-*", Backend: "a"},
			{Match: "b-*", Backend: "b", Rename: "b-model"},
			{Match: "capped-*", Backend: "capped"},
			{Match: "acap-*", Backend: "acap", Rename: "a-model"},
		},
	}
	ups := map[string]caddyhttp.MiddlewareHandler{}
	for name := range l.Backends {
		ups[name] = upstream
	}
	return newLouter(t, l, ups)
}

// serve runs the handler, catching a panic.
func serve(l *Louter, w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) (err error, panicked any) {
	defer func() { panicked = recover() }()
	if next == nil {
		next = &nextRecorder{}
	}
	return l.ServeHTTP(w, r, next), nil
}

func TestServeHTTPLeavesOtherRequestsAlone(t *testing.T) {
	called := false
	l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error { called = true; return nil })
	for _, tt := range []struct{ method, target string }{
		{"GET", "/fake_a/chat"},
		{"POST", "/fake_a/chat/count_tokens"},
		{"POST", "/v1/users"}, // not an LLM API resource (surface.go)
		{"POST", "/elsewhere"},
	} {
		next := &nextRecorder{}
		body := `{"model":"a-1"}`
		r := newRequest(tt.method, tt.target, body)
		rec := httptest.NewRecorder()
		if err, p := serve(l, rec, r, next); err != nil || p != nil {
			t.Fatalf("%s %s: err %v, panic %v", tt.method, tt.target, err, p)
		}
		if !next.called || called || rec.Code != http.StatusTeapot {
			t.Errorf("%s %s: next called %v, upstream called %v, status %d", tt.method, tt.target, next.called, called, rec.Code)
		}
		if got, _ := io.ReadAll(r.Body); string(got) != body || r.URL.Path != tt.target {
			t.Errorf("%s %s: the request was changed: body %q, path %q", tt.method, tt.target, got, r.URL.Path)
		}
	}
}

func TestServeHTTPRejectsInClientShape(t *testing.T) {
	l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error {
		t.Error("a rejected request reached the upstream")
		return nil
	})
	l.MaxRequestBody = 64
	tests := []struct {
		name    string
		body    string
		prepare func(r *http.Request)
		status  int
		kind    string
		message string
	}{
		{"invalid JSON", `{"model":`, nil, 400, "invalid_request", "not valid JSON"},
		{"empty body", ``, nil, 400, "invalid_request", "not valid JSON"},
		{"no model", `{"prompt":"hi"}`, nil, 400, "invalid_request", "no model"},
		{"model not a string", `{"model":5}`, nil, 400, "invalid_request", "no model"},
		{"no route", `{"model":"zzz"}`, nil, 404, "not_found", `no backend is configured for model "zzz"`},
		{"too large", `{"model":"a-1","prompt":"` + strings.Repeat("x", 100) + `"}`, nil, 413, "request_too_large", "exceeds 64 bytes"},
		{"too large, unknown length", `{"model":"a-1","prompt":"` + strings.Repeat("x", 100) + `"}`, func(r *http.Request) { r.ContentLength = -1 }, 413, "request_too_large", "exceeds"},
		{"request_body max_size", `{"model":"a-1"}`, func(r *http.Request) { r.Body = http.MaxBytesReader(nil, r.Body, 5); r.ContentLength = -1 }, 413, "request_too_large", "exceeds"},
		{"compressed", `{"model":"a-1"}`, func(r *http.Request) { r.Header.Set("Content-Encoding", "gzip") }, 415, "invalid_request", "Content-Encoding: gzip"},
		{"client codec refuses the request", `{"model":"b-1","prompt":5}`, nil, 400, "invalid_request", "prompt must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest("POST", "/fake_a/chat", tt.body)
			if tt.prepare != nil {
				tt.prepare(r)
			}
			rec := httptest.NewRecorder()
			if err, p := serve(l, rec, r, nil); err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}
			body := rec.Body.Bytes()
			if rec.Code != tt.status || gjson.GetBytes(body, "p").String() != "fake_a" ||
				gjson.GetBytes(body, "error.kind").String() != tt.kind || !strings.Contains(gjson.GetBytes(body, "error.message").String(), tt.message) {
				t.Errorf("got %d %s, want %d in fake_a shape, kind %s, message containing %q", rec.Code, body, tt.status, tt.kind, tt.message)
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
				t.Errorf("headers %v", rec.Header())
			}
		})
	}
}

func TestServeHTTPEncodeFailure(t *testing.T) {
	l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error { t.Error("reached the upstream"); return nil })
	l.Models = append([]ModelRoute{{Match: "x", Backend: "b", Rename: "unencodable", backend: l.Backends["b"]}}, l.Models...)
	rec := httptest.NewRecorder()
	serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"x"}`), nil)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "cannot encode") || gjson.Get(rec.Body.String(), "p").String() != "fake_a" {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

func TestServeHTTPPassthroughRequest(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"untouched", `{"model":"a-1", "stream":false,"max_tokens":5000,"odd":[1,2 ,3]}`, `{"model":"a-1", "stream":false,"max_tokens":5000,"odd":[1,2 ,3]}`},
		{"renamed and capped", `{"model":"acap-1", "max_tokens":5000,"odd":[1,2 ,3]}`, `{"model":"a-model", "max_tokens":100,"odd":[1,2 ,3]}`},
		{"under the cap", `{"model":"acap-1","max_tokens":50}`, `{"model":"a-model","max_tokens":50}`},
		{"no max_tokens: nothing added", `{"model":"acap-1"}`, `{"model":"a-model"}`},
		{"max_completion_tokens capped", `{"model":"acap-1","max_completion_tokens":101}`, `{"model":"a-model","max_completion_tokens":100}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sent
			var upstreamReq *http.Request
			l := fakeLouter(t, recordingUpstream(&got, func(w http.ResponseWriter, r *http.Request) error {
				upstreamReq = r
				return proxyLike(200, jsonHeader(`{}`), `{}`)(w, r)
			}))
			r := newRequest("POST", "/prefix/fake_a/chat?key=k&x=1", tt.body)
			r.Header.Set("Authorization", "Bearer client")
			rec := httptest.NewRecorder()
			serve(l, rec, r, nil)
			if got.body != tt.want || got.contentLength != int64(len(tt.want)) {
				t.Errorf("upstream got body %q (length %d), want %q", got.body, got.contentLength, tt.want)
			}
			if got.path != "/v1/chat" || got.query != "x=1" || got.header.Get("Authorization") != "" {
				t.Errorf("upstream got %s?%s, headers %v", got.path, got.query, got.header)
			}
			// The upstream gets Caddy's request, with a context the stream
			// timers can cancel that keeps Caddy's values.
			if upstreamReq == nil || upstreamReq.Context().Value(caddy.ReplacerCtxKey) != r.Context().Value(caddy.ReplacerCtxKey) ||
				upstreamReq.Context().Value(caddyhttp.ExtraLogFieldsCtxKey) != r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey) {
				t.Error("the upstream did not get Caddy's request context")
			}
			if rec.Code != 200 || rec.Body.String() != `{}` {
				t.Errorf("client got %d %q", rec.Code, rec.Body)
			}
		})
	}
}

func TestServeHTTPTranslatedRequest(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"renamed", `{"model":"b-1","prompt":"hi","max_tokens":7}`, `{"p":"fake_b","model":"b-model","stream":false,"max_tokens":7,"prompt":"hi"}`},
		{"capped", `{"model":"capped-1","prompt":"hi","max_tokens":5000,"stream":true}`, `{"p":"fake_b","model":"capped-1","stream":true,"max_tokens":100,"prompt":"hi"}`},
		{"defaulted to the cap", `{"model":"capped-1","prompt":"hi"}`, `{"p":"fake_b","model":"capped-1","stream":false,"max_tokens":100,"prompt":"hi"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sent
			l := fakeLouter(t, recordingUpstream(&got, proxyLike(200, jsonHeader(""), `{"id":"r1","model":"b-model","text":"yo","stop":"end_turn"}`)))
			rec := httptest.NewRecorder()
			serve(l, rec, newRequest("POST", "/fake_a/chat", tt.body), nil)
			if got.body != tt.want {
				t.Errorf("upstream got %s, want %s", got.body, tt.want)
			}
			if got.header.Get("X-Fake-Key") == "" && tt.name == "renamed" {
				t.Error("backend key not injected")
			}
			if got.header.Get("Fake-Version") != "1" {
				t.Error("the backend protocol's headers were not set")
			}
		})
	}
}

func TestServeHTTPLogsDroppedFields(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := fakeLouter(t, proxyLike(200, jsonHeader(""), `{"id":"r1","text":"yo"}`))
	l.logger = zap.New(core)
	serve(l, httptest.NewRecorder(), newRequest("POST", "/fake_a/chat", `{"model":"b-1","drop":1}`), nil)
	entries := logs.FilterMessage("not translated").All()
	if len(entries) != 1 || entries[0].ContextMap()["field"] != "drop: fake cannot carry it" {
		t.Errorf("dropped-field log entries: %+v", entries)
	}
	if logs.FilterMessage("routing request").Len() != 1 {
		t.Error("no debug log of the routing decision")
	}
}

func TestServeHTTPUpstreamFailsBeforeResponding(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		status  int
		message string
	}{
		{"dial error", caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp 10.1.2.3:9001: connect: connection refused")), 502, `backend "b" could not be reached`},
		{"timeout", caddyhttp.Error(http.StatusGatewayTimeout, errors.New("i/o timeout")), 504, "timed out"},
		{"plain error", errors.New("something"), 502, "could not be reached"},
		{"nothing at all", nil, 502, "could not be reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fakeLouter(t, func(w http.ResponseWriter, r *http.Request) error {
				// Headers of an attempt that was never committed must not leak.
				w.Header().Set("X-Leaked", "1")
				w.Header().Set("Content-Type", "text/html")
				return tt.err
			})
			rec := httptest.NewRecorder()
			err, p := serve(l, rec, newRequest("POST", "/fake_a/chat", `{"model":"b-1"}`), nil)
			if err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}
			msg := gjson.Get(rec.Body.String(), "error.message").String()
			if rec.Code != tt.status || !strings.Contains(msg, tt.message) || strings.Contains(msg, "10.1.2.3") {
				t.Errorf("got %d %s", rec.Code, rec.Body)
			}
			if rec.Header().Get("X-Leaked") != "" || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", rec.Header())
			}
		})
	}
}

func TestReadAll(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	for _, hint := range []int{1, 512, len(data), len(data) + 1, 2 * len(data)} {
		got, err := readAll(bytes.NewReader(data), hint)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("hint %d: %d bytes, %v", hint, len(got), err)
		}
	}
	if _, err := readAll(io.MultiReader(bytes.NewReader(data), errReader{}), 10); err == nil {
		t.Error("a read error was lost")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

package caddymodule_test

// The toy protocol (toy_protocol_test.go) exists only in this package's
// tests: a codec and a protocol row registered from a test file. These
// tests serve it through a real Caddy, as a client protocol (against
// louter_mock's Anthropic API) and as a backend protocol (a toy server
// below, asked by an Anthropic client, and by a toy client untranslated):
// a request, a stream, errors, model lists, token counts and keep-alives.
// Everything they exercise is read from the toy row, so a failure here
// means a production file still knows the protocols by name.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/testcaddy"
)

const toyCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Stall
		keepalive_interval 50ms
		backend toy {
			protocol toy
			api_key toy-backend-key
			list_models passthrough
			reverse_proxy {TOY}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model toy-* toy
		model claude-* anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name toy-mock
	}
}
`

// toyKeepalive is the toy row's keep-alive frame.
const toyKeepalive = "event: keepalive\ndata: {}\n\n"

// toyCall is a request the toy backend received.
type toyCall struct {
	method, path, query string
	header              http.Header
	body                string
}

// toyBackend is a server speaking the toy protocol as a backend: it
// answers "hello toy" (a stream when the body asks for one), counts 42
// tokens, lists two models, and by the prompt: "fail" gets a 429, "slow"
// a stream that falls silent for 300 ms after its start, sending one toy
// keep-alive of its own.
type toyBackend struct {
	mu    sync.Mutex
	calls []toyCall
}

func (tb *toyBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tb.mu.Lock()
	tb.calls = append(tb.calls, toyCall{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
	tb.mu.Unlock()
	req := gjson.ParseBytes(body)
	writeJSON := func(status int, v string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, v)
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/toy/v1/models":
		writeJSON(http.StatusOK, `{"toy_models":[{"name":"toy-large"},{"name":"toy-small"}]}`)
	case r.Method == http.MethodPost && r.URL.Path == "/toy/v1/count":
		writeJSON(http.StatusOK, `{"tokens":42}`)
	case r.Method != http.MethodPost || r.URL.Path != "/toy/v1/chat":
		writeJSON(http.StatusNotFound, `{"error":{"message":"toy: no such endpoint"}}`)
	case req.Get("prompt").String() == "fail":
		writeJSON(http.StatusTooManyRequests, `{"error":{"message":"toy backend is busy"}}`)
	case !req.Get("stream").Bool():
		writeJSON(http.StatusOK, `{"id":"toy-1","model":`+req.Get("model").Raw+`,"text":"hello toy","stop":"end_turn","in":7,"out":2}`)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		frame := func(name, data string) {
			_, _ = io.WriteString(w, "event: "+name+"\ndata: "+data+"\n\n")
			_ = rc.Flush()
		}
		frame("start", `{"id":"toy-1","model":`+req.Get("model").Raw+`}`)
		if req.Get("prompt").String() == "slow" {
			time.Sleep(150 * time.Millisecond)
			frame("keepalive", `{"backend":true}`)
			time.Sleep(150 * time.Millisecond)
		}
		frame("text", `{"v":"hello "}`)
		frame("text", `{"v":"toy"}`)
		frame("stop", `{"stop":"end_turn","in":7,"out":2}`)
	}
}

// takeCalls returns the calls received since the last take.
func (tb *toyBackend) takeCalls() []toyCall {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	calls := tb.calls
	tb.calls = nil
	return calls
}

type toyEnv struct {
	t       *testing.T
	louter  string
	backend *toyBackend
}

func startToyEnv(t *testing.T) *toyEnv {
	t.Helper()
	tb := &toyBackend{}
	srv := httptest.NewServer(tb)
	t.Cleanup(srv.Close)
	ports := testcaddy.Start(t, strings.ReplaceAll(toyCaddyfile, "{TOY}", strings.TrimPrefix(srv.URL, "http://")))
	testcaddy.WaitListening(t, ports[1])
	return &toyEnv{t: t, louter: testcaddy.URL(ports[0]), backend: tb}
}

// do sends a request to louter and returns the status, headers and body.
func (e *toyEnv) do(method, path, body string, header ...string) (int, http.Header, string) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.louter+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// toyEvent is one event of a toy stream.
type toyEvent struct {
	name string
	data gjson.Result
}

// toyEvents splits an SSE body into its events.
func toyEvents(body string) []toyEvent {
	var out []toyEvent
	for block := range strings.SplitSeq(body, "\n\n") {
		var ev toyEvent
		for line := range strings.SplitSeq(block, "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				ev.name = name
			} else if data, ok := strings.CutPrefix(line, "data: "); ok {
				ev.data = gjson.Parse(data)
			}
		}
		if ev.name != "" {
			out = append(out, ev)
		}
	}
	return out
}

// toyStreamText checks that a toy stream has its start, text and stop
// events, each written by the toy encoder unless passed (untouched from a
// toy backend), and returns its text.
func toyStreamText(t *testing.T, body string, passed bool) string {
	t.Helper()
	var text strings.Builder
	var names []string
	for _, ev := range toyEvents(body) {
		if ev.name == "keepalive" {
			continue
		}
		names = append(names, ev.name)
		if p := ev.data.Get("p").String(); p != "toy" && !passed {
			t.Errorf("event %s written by %q, want toy:\n%s", ev.name, p, body)
		}
		text.WriteString(ev.data.Get("v").String())
	}
	if len(names) < 3 || names[0] != "start" || names[len(names)-1] != "stop" {
		t.Errorf("events %v, want start, text..., stop:\n%s", names, body)
	}
	return text.String()
}

func TestToyProtocolAsClient(t *testing.T) {
	e := startToyEnv(t)

	t.Run("request", func(t *testing.T) {
		status, h, body := e.do("POST", "/toy/v1/chat", `{"model":"claude-x","prompt":"hi","max_tokens":64}`)
		r := gjson.Parse(body)
		if status != http.StatusOK || r.Get("p").String() != "toy" || r.Get("text").String() == "" || r.Get("model").String() != "claude-x" {
			t.Fatalf("%d %s, want a toy answer from the Anthropic backend", status, body)
		}
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
	})

	t.Run("stream", func(t *testing.T) {
		status, h, body := e.do("POST", "/toy/v1/chat", `{"model":"claude-x","prompt":"hi","max_tokens":64,"stream":true}`)
		if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%d %s %s", status, h.Get("Content-Type"), body)
		}
		if toyStreamText(t, body, false) == "" {
			t.Errorf("no text:\n%s", body)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, tt := range []struct {
			name, method, path, body string
			header                   []string
			status                   int
		}{
			{"backend error", "POST", "/toy/v1/chat", `{"model":"claude-x","prompt":"hi","max_tokens":64}`, []string{mock.ScenarioHeader, "error_429"}, http.StatusTooManyRequests},
			{"unknown model", "POST", "/toy/v1/chat", `{"model":"nobody","prompt":"hi"}`, nil, http.StatusNotFound},
			{"invalid body", "POST", "/toy/v1/chat", `{"model":"claude-x","prompt":7}`, nil, http.StatusBadRequest},
			{"wrong method", "GET", "/toy/v1/chat", "", nil, http.StatusMethodNotAllowed},
			{"unserved path", "POST", "/toy/v1/embeddings", `{}`, nil, http.StatusNotFound},
		} {
			status, _, body := e.do(tt.method, tt.path, tt.body, tt.header...)
			r := gjson.Parse(body)
			if status != tt.status || r.Get("p").String() != "toy" || r.Get("error.message").String() == "" {
				t.Errorf("%s: %d %s, want %d in the toy shape", tt.name, status, body, tt.status)
			}
		}
		// An error mid-stream is the toy encoder's error event.
		_, _, body := e.do("POST", "/toy/v1/chat", `{"model":"claude-x","prompt":"hi","max_tokens":64,"stream":true}`, mock.ScenarioHeader, "stream_error")
		evs := toyEvents(body)
		if len(evs) == 0 || evs[len(evs)-1].name != "error" || evs[len(evs)-1].data.Get("p").String() != "toy" {
			t.Errorf("stream_error: want a toy error event last:\n%s", body)
		}
	})

	t.Run("model list", func(t *testing.T) {
		status, _, body := e.do("GET", "/toy/v1/models", "")
		var got []string
		for _, m := range gjson.Get(body, "toy_models").Array() {
			got = append(got, m.Get("name").String()+"@"+m.Get("backend").String())
		}
		if status != http.StatusOK || gjson.Get(body, "p").String() != "toy" || strings.Join(got, ",") != "toy-large@toy,toy-small@toy" {
			t.Errorf("%d %s: models %v, want the toy backend's two", status, body, got)
		}
		status, _, body = e.do("GET", "/toy/v1/models/toys%2Ftoy-large", "")
		if status != http.StatusOK || gjson.Get(body, "name").String() != "toy-large" || gjson.Get(body, "p").String() != "toy" {
			t.Errorf("one model: %d %s", status, body)
		}
		status, _, body = e.do("GET", "/toy/v1/models/gpt-5", "")
		if status != http.StatusNotFound || gjson.Get(body, "p").String() != "toy" {
			t.Errorf("unknown model: %d %s, want a toy 404", status, body)
		}
	})

	t.Run("count", func(t *testing.T) {
		status, _, body := e.do("POST", "/toy/v1/count", `{"model":"claude-x","prompt":"count me"}`)
		if status != http.StatusOK || gjson.Get(body, "p").String() != "toy" || gjson.Get(body, "tokens").Int() < mock.CountBase {
			t.Errorf("%d %s, want the Anthropic backend's count (at least %d) in the toy shape", status, body, mock.CountBase)
		}
	})

	t.Run("keep-alive", func(t *testing.T) {
		status, _, body := e.do("POST", "/toy/v1/chat", `{"model":"claude-x","prompt":"hi","max_tokens":64,"stream":true}`, mock.StallHeader, "300ms")
		if status != http.StatusOK || !strings.Contains(body, toyKeepalive) {
			t.Fatalf("%d: no toy keep-alive in a stream silent for 300 ms:\n%s", status, body)
		}
		toyStreamText(t, body, false)
	})
}

func TestToyProtocolAsBackend(t *testing.T) {
	e := startToyEnv(t)
	anthHeader := []string{"Anthropic-Version", "2023-06-01"}

	// checkCall checks what the toy backend received of a translated
	// request: the endpoint below its default base path, the key and the
	// version header from the row, and a body the toy encoder wrote.
	checkCall := func(t *testing.T, path string) toyCall {
		t.Helper()
		calls := e.backend.takeCalls()
		if len(calls) != 1 {
			t.Fatalf("the toy backend received %d requests, want 1", len(calls))
		}
		c := calls[0]
		if c.path != path || c.header.Get("X-Toy-Key") != "toy-backend-key" || c.header.Get("Toy-Version") != "1" {
			t.Errorf("backend got %s %s key %q version %q", c.method, c.path, c.header.Get("X-Toy-Key"), c.header.Get("Toy-Version"))
		}
		if c.header.Get("Anthropic-Version") != "" || c.header.Get("X-Api-Key") != "" {
			t.Errorf("the Anthropic client's headers reached the toy backend: %v", c.header)
		}
		return c
	}
	e.backend.takeCalls() // the model lists asked while starting, if any

	t.Run("request", func(t *testing.T) {
		status, _, body := e.do("POST", "/v1/messages", `{"model":"toy-large","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, anthHeader...)
		if status != http.StatusOK || gjson.Get(body, "type").String() != "message" || gjson.Get(body, "content.0.text").String() != "hello toy" ||
			gjson.Get(body, "usage.input_tokens").Int() != 7 {
			t.Fatalf("%d %s, want an Anthropic message saying hello toy", status, body)
		}
		c := checkCall(t, "/toy/v1/chat")
		if gjson.Get(c.body, "p").String() != "toy" || gjson.Get(c.body, "prompt").String() != "hi" || gjson.Get(c.body, "model").String() != "toy-large" {
			t.Errorf("backend body %s, want the toy encoding", c.body)
		}
	})

	t.Run("stream", func(t *testing.T) {
		status, _, body := e.do("POST", "/v1/messages", `{"model":"toy-large","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthHeader...)
		if status != http.StatusOK || !strings.Contains(body, "event: message_stop") || !strings.Contains(body, `"text":"hello "`) || !strings.Contains(body, `"text":"toy"`) {
			t.Fatalf("%d: want an Anthropic stream of hello toy:\n%s", status, body)
		}
		c := checkCall(t, "/toy/v1/chat")
		if !gjson.Get(c.body, "stream").Bool() {
			t.Errorf("backend body %s does not ask for a stream", c.body)
		}
	})

	t.Run("error", func(t *testing.T) {
		status, _, body := e.do("POST", "/v1/messages", `{"model":"toy-large","max_tokens":64,"messages":[{"role":"user","content":"fail"}]}`, anthHeader...)
		if status != http.StatusTooManyRequests || gjson.Get(body, "type").String() != "error" || gjson.Get(body, "error.type").String() != "rate_limit_error" ||
			!strings.Contains(gjson.Get(body, "error.message").String(), "toy backend is busy") {
			t.Errorf("%d %s, want the toy backend's 429 as Anthropic's rate_limit_error", status, body)
		}
		checkCall(t, "/toy/v1/chat")
	})

	t.Run("model list", func(t *testing.T) {
		status, _, body := e.do("GET", "/v1/models", "", anthHeader...)
		var got []string
		for _, m := range gjson.Get(body, "data").Array() {
			got = append(got, m.Get("id").String())
		}
		if status != http.StatusOK || strings.Join(got, ",") != "toy-large,toy-small" {
			t.Errorf("%d %s: models %v, want the toy backend's two in Anthropic's list", status, body, got)
		}
		// The list may come from the cache of an earlier test's request.
		for _, c := range e.backend.takeCalls() {
			if c.method != http.MethodGet || c.path != "/toy/v1/models" || c.query != "all=1" || c.header.Get("X-Toy-Key") != "toy-backend-key" || c.header.Get("Toy-Version") != "1" {
				t.Errorf("list request %s %s?%s key %q version %q", c.method, c.path, c.query, c.header.Get("X-Toy-Key"), c.header.Get("Toy-Version"))
			}
		}
	})

	t.Run("count", func(t *testing.T) {
		status, _, body := e.do("POST", "/v1/messages/count_tokens", `{"model":"toy-large","messages":[{"role":"user","content":"count me"}]}`, anthHeader...)
		if status != http.StatusOK || body != `{"input_tokens":42}` {
			t.Errorf("%d %s, want the toy backend's count in Anthropic's shape", status, body)
		}
		c := checkCall(t, "/toy/v1/count")
		if gjson.Get(c.body, "p").String() != "toy" || gjson.Get(c.body, "prompt").String() != "count me" {
			t.Errorf("count body %s, want the toy encoding", c.body)
		}
	})

	t.Run("keep-alive", func(t *testing.T) {
		// The toy backend falls silent (but for its own keep-alive, which
		// the toy decoder skips): the Anthropic client gets its pings.
		status, _, body := e.do("POST", "/v1/messages", `{"model":"toy-large","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"slow"}]}`, anthHeader...)
		if status != http.StatusOK || !strings.Contains(body, "event: ping") || !strings.Contains(body, "event: message_stop") {
			t.Errorf("%d: want pings and a whole stream:\n%s", status, body)
		}
		e.backend.takeCalls()
	})

	t.Run("passthrough", func(t *testing.T) {
		// A toy client of a toy backend: its body and the backend's answer
		// pass untouched, its own header goes along, and the toy client's
		// keep-alive fills the silence.
		status, _, body := e.do("POST", "/toy/v1/chat", `{"model":"toy-large","prompt":"slow","stream":true,"client":"mine"}`, "Toy-Beta", "b1")
		if status != http.StatusOK || toyStreamText(t, body, true) != "hello toy" {
			t.Errorf("%d:\n%s", status, body)
		}
		if !strings.Contains(body, toyKeepalive) || !strings.Contains(body, `{"backend":true}`) {
			t.Errorf("want louter's keep-alives and the backend's own:\n%s", body)
		}
		calls := e.backend.takeCalls()
		if len(calls) != 1 || calls[0].body != `{"model":"toy-large","prompt":"slow","stream":true,"client":"mine"}` || calls[0].header.Get("Toy-Beta") != "b1" {
			t.Errorf("backend got %+v, want the client's body and Toy-Beta", calls)
		}
		status, _, body = e.do("POST", "/toy/v1/count", `{"model":"toy-small","prompt":"count me"}`)
		if status != http.StatusOK || body != `{"tokens":42}` {
			t.Errorf("count: %d %s, want the backend's answer as it is", status, body)
		}
		e.backend.takeCalls()
		status, _, body = e.do("POST", "/toy/v1/chat", `{"model":"toy-large","prompt":"fail"}`)
		if status != http.StatusTooManyRequests || !strings.Contains(body, "toy backend is busy") {
			t.Errorf("error: %d %s, want the backend's 429", status, body)
		}
	})
}

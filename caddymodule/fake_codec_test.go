package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

// Two fake protocols with the same small wire format, so the handler and the
// writer can be tested before (and independently of) the real codecs. What a
// fake encoder writes carries its protocol name ("p"), so a test sees which
// side produced a body.
//
//	request:  {"model":M,"stream":B,"max_tokens":N,"prompt":S}
//	response: {"id":I,"model":M,"text":S,"stop":R,"in":N,"out":N}
//	stream:   event: start {"id","model"} | text {"v"} | stop {"stop","in","out"} | error {"status","message"}
//	error:    {"error":{"message":S,"status":N}}   (status, when present, overrides the HTTP status)
const (
	fakeA translate.Protocol = "fake_a"
	fakeB translate.Protocol = "fake_b"
)

func init() {
	for _, p := range []translate.Protocol{fakeA, fakeB} {
		translate.Register(fakeCodec{p})
		registerProtocol(&protocolRow{
			protocol: p,
			match:    pathSuffix("/" + string(p) + "/chat"),
			endpoint: func(string, bool) (string, string) { return "/chat", "" },
			setKey:   func(h http.Header, key string) { h.Set("X-Fake-Key", key) },
			prepare:  func(h http.Header) { h.Set("Fake-Version", "1") },
		})
	}
}

type fakeCodec struct{ p translate.Protocol }

func (c fakeCodec) Protocol() translate.Protocol { return c.p }

func (c fakeCodec) DecodeRequest(body []byte) (*translate.Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, translate.BadRequest("fake: invalid JSON")
	}
	prompt := gjson.GetBytes(body, "prompt")
	if prompt.Exists() && prompt.Type != gjson.String {
		return nil, translate.BadRequest("fake: prompt must be a string")
	}
	req := &translate.Request{
		Model:     gjson.GetBytes(body, "model").String(),
		Stream:    gjson.GetBytes(body, "stream").Bool(),
		MaxTokens: int(gjson.GetBytes(body, "max_tokens").Int()),
		Messages:  []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: prompt.String()}}}},
	}
	if gjson.GetBytes(body, "drop").Exists() {
		req.Drop("drop", "fake cannot carry it")
	}
	return req, nil
}

func (c fakeCodec) EncodeRequest(req *translate.Request) ([]byte, error) {
	if req.Model == "unencodable" {
		return nil, errors.New("fake: cannot encode this model")
	}
	var prompt string
	if len(req.Messages) > 0 && len(req.Messages[0].Parts) > 0 {
		prompt = req.Messages[0].Parts[0].Text
	}
	return json.Marshal(struct {
		P         translate.Protocol `json:"p"`
		Model     string             `json:"model"`
		Stream    bool               `json:"stream"`
		MaxTokens int                `json:"max_tokens"`
		Prompt    string             `json:"prompt"`
	}{c.p, req.Model, req.Stream, req.MaxTokens, prompt})
}

func (c fakeCodec) DecodeResponse(body []byte) (*translate.Response, error) {
	if !gjson.ValidBytes(body) || !gjson.GetBytes(body, "id").Exists() {
		return nil, errors.New("fake: not a response")
	}
	r := gjson.ParseBytes(body)
	resp := &translate.Response{
		ID:         r.Get("id").String(),
		Model:      r.Get("model").String(),
		StopReason: translate.StopReason(r.Get("stop").String()),
		Usage:      translate.Usage{InputTokens: int(r.Get("in").Int()), OutputTokens: int(r.Get("out").Int())},
	}
	if t := r.Get("text").String(); t != "" {
		resp.Parts = []translate.Part{{Type: translate.PartText, Text: t}}
	}
	return resp, nil
}

func (c fakeCodec) EncodeResponse(resp *translate.Response, req *translate.Request) ([]byte, error) {
	var text strings.Builder
	for _, p := range resp.Parts {
		text.WriteString(p.Text)
	}
	return json.Marshal(struct {
		P     translate.Protocol `json:"p"`
		ID    string             `json:"id"`
		Model string             `json:"model"`
		Text  string             `json:"text"`
		Stop  string             `json:"stop"`
		In    int                `json:"in"`
		Out   int                `json:"out"`
	}{c.p, resp.ID, req.Model, text.String(), string(resp.StopReason), resp.Usage.InputTokens, resp.Usage.OutputTokens})
}

func (c fakeCodec) NewStreamDecoder() translate.StreamDecoder { return &fakeDecoder{} }

func (c fakeCodec) NewStreamEncoder(req *translate.Request) translate.StreamEncoder {
	return &fakeEncoder{p: c.p, model: req.Model}
}

func (c fakeCodec) DecodeError(status int, body []byte) *translate.Error {
	msg := gjson.GetBytes(body, "error.message")
	if !msg.Exists() {
		return translate.NewError(status, string(body))
	}
	e := translate.NewError(status, msg.String())
	if s := gjson.GetBytes(body, "error.status"); s.Exists() {
		e.Status = int(s.Int())
		e.Kind = translate.KindForStatus(e.Status)
	}
	return e
}

func (c fakeCodec) EncodeError(e *translate.Error) []byte {
	b, _ := json.Marshal(map[string]any{"p": c.p, "error": map[string]any{"kind": e.Kind, "message": e.Message}})
	return b
}

type fakeDecoder struct{ e translate.Emitter }

func (d *fakeDecoder) Decode(dst []translate.Event, name string, data []byte) []translate.Event {
	v := gjson.ParseBytes(data)
	switch name {
	case "start":
		return d.e.Start(dst, v.Get("id").String(), v.Get("model").String(), nil)
	case "text":
		return d.e.Text(dst, v.Get("v").String())
	case "stop":
		return d.e.Stop(dst, translate.StopReason(v.Get("stop").String()), "", &translate.Usage{InputTokens: int(v.Get("in").Int()), OutputTokens: int(v.Get("out").Int())})
	case "error":
		status := int(v.Get("status").Int())
		return d.e.Fail(dst, translate.NewError(status, v.Get("message").String()))
	}
	return dst
}

func (d *fakeDecoder) End(dst []translate.Event) []translate.Event { return d.e.End(dst) }

type fakeEncoder struct {
	p     translate.Protocol
	model string
}

func (e *fakeEncoder) Encode(w translate.FrameWriter, ev *translate.Event) {
	var name string
	m := map[string]any{"p": e.p}
	switch ev.Type {
	case translate.EventMessageStart:
		name, m["id"], m["model"] = "start", ev.ID, e.model
	case translate.EventBlockDelta:
		name, m["v"] = "text", ev.Text
	case translate.EventMessageStop:
		name, m["stop"] = "stop", ev.Stop
		if ev.Usage != nil {
			m["in"], m["out"] = ev.Usage.InputTokens, ev.Usage.OutputTokens
		}
	case translate.EventError:
		name, m["status"], m["message"] = "error", ev.Err.Status, ev.Err.Message
	default:
		return
	}
	b, _ := json.Marshal(m)
	w.WriteFrame(name, b)
}

// upstreamFunc stands in for the stock reverse_proxy as a backend's
// upstream handler.
type upstreamFunc func(w http.ResponseWriter, r *http.Request) error

func (f upstreamFunc) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	return f(w, r)
}

// sent records the request an upstream received.
type sent struct {
	method, path, query string
	header              http.Header
	body                string
	contentLength       int64
}

// recordingUpstream records the request, then behaves like reverse_proxy
// answering with respond.
func recordingUpstream(got *sent, respond upstreamFunc) upstreamFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		b, err := readAll(r.Body, 512)
		if err != nil {
			return err
		}
		*got = sent{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b), r.ContentLength}
		if r.RequestURI != r.URL.RequestURI() {
			return errors.New("RequestURI " + r.RequestURI + " does not match the URL " + r.URL.RequestURI())
		}
		return respond(w, r)
	}
}

// proxyLike answers the way reverse_proxy does: headers into w.Header(),
// WriteHeader, then one Write per chunk, each followed by a flush through a
// ResponseController.
func proxyLike(status int, header http.Header, chunks ...string) upstreamFunc {
	// Converted once, so benchmarks count the handler's allocations, not
	// the fake upstream's.
	bufs := make([][]byte, len(chunks))
	for i, c := range chunks {
		bufs[i] = []byte(c)
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		rc := http.NewResponseController(w)
		for _, c := range bufs {
			if _, err := w.Write(c); err != nil {
				return err
			}
			_ = rc.Flush()
		}
		return nil
	}
}

func sseHeader() http.Header {
	return http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "Content-Length": {"999"}}
}

func jsonHeader(body string) http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}, "Etag": {`"abc"`}}
}

// newLouter returns a provisioned handler whose backends use the given
// upstream handlers (set directly, in place of a loaded reverse_proxy).
func newLouter(t testing.TB, l *Louter, upstreams map[string]caddyhttp.MiddlewareHandler) *Louter {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := l.Provision(ctx); err != nil {
		t.Fatalf("provision: %v", err)
	}
	t.Cleanup(func() { _ = l.Cleanup() }) // as Caddy does when the config is unloaded
	for name, u := range upstreams {
		l.Backends[name].upstream = u
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	l.logger = zap.NewNop()
	return l
}

// flushRecorder is a ResponseRecorder that remembers how much body had been
// written at each flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushedAt []int
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
}

func (f *flushRecorder) Flush() {
	f.flushedAt = append(f.flushedAt, f.Body.Len())
	f.ResponseRecorder.Flush()
}

// newRequest builds a request as Caddy's server would hand it over.
func newRequest(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), nil, nil)
}

// nextRecorder is a next handler that records whether it was called.
type nextRecorder struct{ called bool }

func (n *nextRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	n.called = true
	w.WriteHeader(http.StatusTeapot)
	return nil
}

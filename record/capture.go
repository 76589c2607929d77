package record

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/louter/louter/stream"
)

// DefaultMaxExchangeSize is the default cap on what one exchange keeps in
// memory until it ends (Capture's limit).
const DefaultMaxExchangeSize = 8 << 20

// Capture gathers one exchange while it runs, in the order louter sees
// it: the client's request, the request sent to the backend (again for
// each attempt of a fallback chain), the backend's response as it arrives
// and the client's as it is written. It keeps the exchange in memory until
// Finish, at most limit bytes of bodies and events: past that, events are
// counted rather than kept and the record says truncated. Bodies are kept
// by reference, not copied: the caller must not change them afterwards
// (louter never does).
//
// Capturing costs a copy of each event and a clock read; the JSON work
// (validation, encoding, redaction) happens on the Writer's goroutine.
type Capture struct {
	mu    sync.Mutex
	x     Exchange
	start time.Time
	limit int
	size  int
	// keep says which headers are recorded; nil records none.
	keep func(name string) bool
	// finished is set by Finish: the exchange belongs to the writer then,
	// and a late write is not recorded.
	finished bool

	backend, client responseTap
}

// NewCapture starts the capture of an exchange that began at start. limit
// caps the bytes kept (<= 0: DefaultMaxExchangeSize); keep chooses the
// headers recorded.
func NewCapture(start time.Time, id string, client Endpoint, limit int, keep func(name string) bool) *Capture {
	if limit <= 0 {
		limit = DefaultMaxExchangeSize
	}
	c := &Capture{start: start, limit: limit, keep: keep}
	c.x = Exchange{Version: Version, Time: start.UTC(), ID: id, Client: client}
	c.backend.c, c.client.c = c, c
	return c
}

// Scrub adds secrets to redact from the record when it is written.
func (c *Capture) Scrub(secrets ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.x.secrets = append(c.x.secrets, secrets...)
	c.mu.Unlock()
}

// ClientRequest records the client's request.
func (c *Capture) ClientRequest(method, path, query string, h http.Header, body []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.x.ClientRequest = c.request(method, path, query, h, body)
}

// BackendRequest records the request sent to backend b. A later attempt
// of a fallback chain replaces the earlier one's request and response.
func (c *Capture) BackendRequest(b *Backend, method, path, query string, h http.Header, body []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x.BackendRequest != nil {
		c.size -= len(c.x.BackendRequest.raw)
	}
	if c.backend.resp != nil {
		c.size -= c.backend.kept
	}
	c.x.Attempts++
	c.x.Backend = b
	c.x.BackendRequest = c.request(method, path, query, h, body)
	c.backend = responseTap{c: c}
	c.x.Error = ""
}

func (c *Capture) request(method, path, query string, h http.Header, body []byte) *Request {
	r := &Request{Method: method, Path: path, Query: query, Header: c.headers(h)}
	if c.size+len(body) > c.limit {
		c.x.Truncated = true
		r.BodyText = "" // left out: see Truncated
		return r
	}
	c.size += len(body)
	r.raw = body
	return r
}

// headers copies the recorded headers of h.
func (c *Capture) headers(h http.Header) map[string][]string {
	if c.keep == nil || len(h) == 0 {
		return nil
	}
	var out map[string][]string
	for k, v := range h {
		if !c.keep(k) {
			continue
		}
		if out == nil {
			out = make(map[string][]string, len(h))
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

// BackendHeader records the backend's status and headers.
func (c *Capture) BackendHeader(status int, h http.Header) {
	if c != nil {
		c.backend.header(status, h)
	}
}

// BackendWrite records a chunk of the backend's body.
func (c *Capture) BackendWrite(p []byte) {
	if c != nil {
		c.backend.write(p)
	}
}

// ClientHeader records the status and headers written to the client.
func (c *Capture) ClientHeader(status int, h http.Header) {
	if c != nil {
		c.client.header(status, h)
	}
}

// ClientWrite records a chunk of the body written to the client.
func (c *Capture) ClientWrite(p []byte) {
	if c != nil {
		c.client.write(p)
	}
}

// A nil *Capture records nothing: louter's hooks cost a nil check when
// recording is off.

// Finish ends the capture and returns the exchange. stream is whether the
// client asked for a stream, dropped what the translation left out, errMsg
// why the exchange failed on louter's side ("" if it did not).
func (c *Capture) Finish(stream bool, dropped []string, errMsg string) *Exchange {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	c.backend.close()
	c.client.close()
	c.x.BackendResponse, c.x.ClientResponse = c.backend.resp, c.client.resp
	c.x.Stream, c.x.Dropped = stream, dropped
	if errMsg != "" {
		c.x.Error = errMsg
	}
	return &c.x
}

// responseTap records one side's response: the events of a stream, or a
// body.
type responseTap struct {
	c      *Capture
	resp   *Response
	framer stream.Framer // nil: the body is kept whole
	body   []byte
	kept   int // bytes counted against the capture's limit
	// emit is the framer's callback, made once.
	emit func(name string, data []byte)
}

func (t *responseTap) header(status int, h http.Header) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.headerLocked(status, h)
}

func (t *responseTap) headerLocked(status int, h http.Header) {
	if t.resp != nil || status < 200 || t.c.finished {
		return // the first final status counts
	}
	t.resp = &Response{Status: status, Header: t.c.headers(h)}
	if status < 300 && isEventStream(h.Get("Content-Type")) {
		t.framer = &stream.SSEParser{}
		t.emit = t.event
	}
}

func (t *responseTap) write(p []byte) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.resp == nil {
		t.headerLocked(http.StatusOK, nil)
	}
	if t.c.finished {
		return
	}
	if t.framer != nil {
		_ = t.framer.Feed(p, t.emit) // a malformed stream is what it is: the events so far are kept
		return
	}
	if !t.room(len(p)) {
		t.resp.BodyDropped += len(p)
		return
	}
	t.body = append(t.body, p...)
}

// event keeps one stream event, or counts it past the limit; c.mu is held.
func (t *responseTap) event(name string, data []byte) {
	if !t.room(len(name) + len(data)) {
		t.resp.EventsDropped++
		return
	}
	ms := time.Since(t.c.start).Milliseconds()
	t.resp.Events = append(t.resp.Events, Event{T: ms, Name: name, raw: append([]byte(nil), data...)})
}

// room reserves n bytes of the capture's limit, or marks it truncated.
func (t *responseTap) room(n int) bool {
	if t.c.size+n > t.c.limit {
		t.c.x.Truncated = true
		return false
	}
	t.c.size += n
	t.kept += n
	return true
}

// close flushes a final event without its blank line and keeps the body;
// c.mu is held.
func (t *responseTap) close() {
	if t.resp == nil {
		return
	}
	if t.framer != nil {
		_ = t.framer.Close(t.emit)
		t.framer = nil
		return
	}
	t.resp.raw = t.body
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

package caddymodule

import (
	"bytes"
	"context"
	"errors"
	"net/http"
)

// Besides chat calls, louter asks backends small questions of its own — a
// token count, a model list — whose answers it reads whole before it
// answers the client. This file holds what those calls share.

// backendQuestion is r, cloned with ctx (Caddy's context: the replacer and
// vars reverse_proxy needs), made into a bodiless method request for path
// below b's base_path with query: none of the client's headers, the row's
// own and an Accept for JSON. The caller adds the credential through the
// credential transport (attachCredential) and sends it with callBackend.
func backendQuestion(ctx context.Context, r *http.Request, b *Backend, method, path, query string) *http.Request {
	req := r.Clone(ctx)
	req.Method = method
	req.Body, req.GetBody, req.ContentLength, req.TransferEncoding = http.NoBody, nil, 0, nil
	req.Header = http.Header{"Accept": {"application/json"}}
	rowOf(b.Protocol).prepareRequest(req.Header)
	setBackendPath(req.URL, b.basePath, path)
	req.URL.RawQuery = query
	req.RequestURI = req.URL.RequestURI()
	return req
}

// errBackendAborted is the error of a backend call whose response could not
// be read to its end.
var errBackendAborted = errors.New("the backend connection failed")

// callBackend sends r through the backend's upstream handler and returns
// its answer, read up to limit bytes. It fails when nothing was answered,
// and turns the panic reverse_proxy raises when copying a response fails
// into an error.
func callBackend(b *Backend, r *http.Request, limit int) (rec *bodyRecorder, err error) {
	rec = &bodyRecorder{header: http.Header{}, limit: limit}
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			rec, err = nil, errBackendAborted
		}
	}()
	err = b.upstream.ServeHTTP(rec, r, nopNext)
	switch {
	case rec.status != 0:
		return rec, nil // answered; an error after the answer changes nothing
	case err == nil:
		err = errors.New("the upstream handler wrote no response")
	}
	return nil, err
}

// bodyRecorder keeps a backend's answer in memory, up to limit bytes; past
// it the rest is read and dropped, and overflow is set.
type bodyRecorder struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	limit    int
	overflow bool
}

func (c *bodyRecorder) Header() http.Header { return c.header }

func (c *bodyRecorder) WriteHeader(status int) {
	if c.status == 0 && status >= 200 { // 1xx interim answers do not count
		c.status = status
	}
}

func (c *bodyRecorder) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	if room := c.limit - c.body.Len(); len(p) > room {
		c.body.Write(p[:max(room, 0)])
		c.overflow = true
		return len(p), nil // read on; the answer is refused as a whole
	}
	return c.body.Write(p)
}

// Flush lets reverse_proxy flush; the answer is kept whole anyway.
func (c *bodyRecorder) Flush() {}

// Interface guards
var (
	_ http.ResponseWriter = (*bodyRecorder)(nil)
	_ http.Flusher        = (*bodyRecorder)(nil)
)

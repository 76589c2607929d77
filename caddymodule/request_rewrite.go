package caddymodule

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/louter/louter/caddymodule/internal/redact"
)

// backendRequest describes the request to send to a backend.
type backendRequest struct {
	backend     *Backend
	body        []byte
	model       string // the model the backend is asked for
	stream      bool   // whether the client asked for a stream
	passthrough bool   // client and backend speak the same protocol
}

// rewriteRequest turns the client's request into the backend's: body, path,
// query, headers and protocol headers. It modifies r in place, because
// reverse_proxy needs Caddy's own request (its context carries the replacer
// and the vars). The client's headers are filtered by allowlist
// (header_allowlist.go).
//
// It returns the credential headers the backend is to get — its api_key,
// or with pass_client_auth the client's own — without setting them on r:
// Backend.attachCredential hands them to the transport, so reverse_proxy's
// logs never see them.
//
// dropped lists what the backend's configuration left out of the headers
// (anthropic-beta values), as Request.Dropped entries.
func rewriteRequest(r *http.Request, br backendRequest) (cred http.Header, dropped []string) {
	b := br.backend
	proto := rowOf(b.Protocol) // protocols.go
	h := r.Header

	body := br.body
	var betas []string
	if proto.betas != nil && !br.passthrough {
		betas = clientBetas(h) // before the allowlist removes them (anthropic_betas.go)
	}
	if len(betas) > 0 && proto.betas.inBody {
		body, dropped = translatedBetas(b, proto.betas, betas, h, body)
	}
	setBody(r, body)

	endpoint := proto.endpoint
	if b.endpoint != nil {
		endpoint = b.endpoint // the row's configure
	}
	path, query := endpoint(br.model, br.stream)
	setBackendPath(r.URL, b.basePath, path) // model_name.go: the endpoint is escaped

	queryKey := redact.QueryCredential(r.URL.RawQuery)
	if b.PassClientAuth {
		if br.passthrough {
			// The client speaks the backend's protocol: its credential goes
			// on as it sent it (an OAuth bearer token stays a bearer token).
			cred = takeClientCredentials(h, b.Protocol, queryKey)
		} else if key := redact.ClientKey(h, r.URL.RawQuery); key != "" {
			cred = make(http.Header, 1)
			proto.setKey(cred, key)
		}
	}
	if !redact.HasKeyHeader(cred) && b.apiKey != "" {
		cred = make(http.Header, 1)
		proto.setKey(cred, b.apiKey)
	}

	filterHeaders(h, b.Protocol, br.passthrough, b.forwardHeaders)
	if br.passthrough {
		// Keep the client's query (Anthropic's ?beta=true, Gemini's
		// ?alt=sse), except credentials.
		r.URL.RawQuery = removeCredentialParams(r.URL.RawQuery)
	} else {
		// A translated request: nothing of the client's protocol reaches
		// the backend, neither its query nor its headers.
		r.URL.RawQuery = query
		proto.prepareRequest(h)
		h.Set("Content-Type", "application/json")
		if br.stream && proto.streamAccept != "" {
			h.Set("Accept", proto.streamAccept)
		} else if br.stream {
			h.Set("Accept", "text/event-stream")
		} else {
			h.Set("Accept", "application/json")
		}
	}
	if adapt := proto.backendHeaders; adapt != nil {
		dropped = adapt(b, h, cred) // the version the backend speaks, its betas (a nil cred is only read)
	}
	if len(betas) > 0 && !proto.betas.inBody {
		_, dropped = translatedBetas(b, proto.betas, betas, h, nil)
	}
	if need := proto.requestBetas; need != nil && !br.passthrough {
		for _, v := range need(body) { // anthropic_betas.go
			h.Add("Anthropic-Beta", v)
		}
	}
	r.RequestURI = r.URL.RequestURI()

	// Without the client's Accept-Encoding, Go's transport asks for gzip
	// itself and decompresses the answer, so the translator always reads
	// plain text.
	h.Del("Accept-Encoding")
	// RFC 10036 incremental requests conflict with reverse_proxy's
	// request_buffers (a 501), which retries need; louter has the whole
	// body anyway.
	h.Del("Incremental")
	// The body is already read: there is nothing left to wait for.
	h.Del("Expect")
	return cred, dropped
}

// attachCredential gives the backend request its credential headers: to
// the credential transport through the request's context when the upstream
// is a reverse_proxy, else (another upstream handler, which louter cannot
// reach below) on the request itself.
func (b *Backend) attachCredential(r *http.Request, cred http.Header) *http.Request {
	if b.credentialTransport {
		return withFraming(withAuth(withCredential(r, cred), b.auth), rowOf(b.Protocol).responseFraming)
	}
	// An auth module needs the transport (Provision refuses it otherwise).
	for k, v := range cred {
		r.Header[k] = v
	}
	return r
}

// setBody replaces the request body, keeping every length field consistent
// so the backend receives a Content-Length, never a stale chunked encoding.
//
// reverse_proxy keeps the request it sent (and its GetBody, for retries)
// until the response has been copied, which for a stream is its whole
// length. So the body is held where it can be let go of: each reader drops
// it once read to its end, and GetBody reads it from an upstreamBody that
// releaseUpstreamBody empties when no retry can need it any more.
func setBody(r *http.Request, body []byte) {
	ub := &upstreamBody{b: body}
	r.Body = &upstreamBodyReader{b: body, ub: ub}
	r.GetBody = ub.open
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body))) // for logs and other handlers; the transport uses ContentLength
	r.TransferEncoding = nil
	r.Header.Del("Content-Encoding") // only identity bodies get here
}

// upstreamBody is the body of a backend request, for GetBody.
type upstreamBody struct {
	mu sync.Mutex
	b  []byte // nil once released
}

// errBodyReleased is GetBody's error once the body is released: the
// response's content was on its way to the client, so nothing can retry.
var errBodyReleased = errors.New("louter: the request body was released after the response began")

func (u *upstreamBody) open() (io.ReadCloser, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.b == nil {
		return nil, errBodyReleased
	}
	return &upstreamBodyReader{b: u.b, ub: u}, nil
}

// releaseUpstreamBody lets go of the body setBody gave r, once the
// response has begun and no retry can need it. Readers still reading keep
// it until they reach its end.
func releaseUpstreamBody(r *http.Request) {
	if rd, ok := r.Body.(*upstreamBodyReader); ok && rd.ub != nil {
		rd.ub.mu.Lock()
		rd.ub.b = nil
		rd.ub.mu.Unlock()
	}
}

// upstreamBodyReader reads a backend request's body, letting go of it at
// its end. Close does nothing: the transport may call it from another
// goroutine than the one reading.
type upstreamBodyReader struct {
	b  []byte
	ub *upstreamBody // for releaseUpstreamBody; never read from here
}

func (rd *upstreamBodyReader) Read(p []byte) (int, error) {
	if len(rd.b) == 0 {
		rd.b = nil
		return 0, io.EOF
	}
	n := copy(p, rd.b)
	rd.b = rd.b[n:]
	if len(rd.b) == 0 {
		rd.b = nil // read to its end: the bytes are not needed here any more
	}
	return n, nil
}

// WriteTo writes the rest of the body in one call.
func (rd *upstreamBodyReader) WriteTo(w io.Writer) (int64, error) {
	b := rd.b
	rd.b = nil
	n, err := w.Write(b)
	return int64(n), err
}

func (rd *upstreamBodyReader) Close() error { return nil }

package caddymodule

import (
	"context"
	"net/http"
	"net/url"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// Why a transport: reverse_proxy logs the request it sends upstream — every
// request at debug level ("upstream roundtrip"), and at warn level when a
// stream breaks ("aborting with incomplete response") — with its headers,
// of which it redacts only Authorization and Cookie. A backend key set on
// Caddy's request would be written in clear (X-Api-Key, X-Goog-Api-Key).
// So louter does not set it there: it puts the credential into the
// request's context, and the credentialTransport, wrapped around
// reverse_proxy's own transport, adds it to a copy of the request inside
// RoundTrip, below every log line reverse_proxy writes.

// credentialCtxKey is the context key of the credential headers a backend
// request is to carry.
type credentialCtxKey struct{}

// withCredential returns r carrying the credential headers cred for the
// credentialTransport. The request keeps everything else of r's context
// (Caddy's replacer, vars, the access log's extra fields).
func withCredential(r *http.Request, cred http.Header) *http.Request {
	if len(cred) == 0 {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), credentialCtxKey{}, cred))
}

// credentialTransport sets the credential headers found in a request's
// context on a copy of the request, then hands the copy to the transport it
// wraps. A header the request already carries is left alone: it was set by
// the operator's header_up, which wins over louter's key as it always has.
type credentialTransport struct {
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper. The caller's request is not
// modified (http.RoundTripper's contract), so reverse_proxy, which logs it,
// never holds the key.
func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	cred, _ := req.Context().Value(credentialCtxKey{}).(http.Header)
	auth := authOf(req) // backend_auth.go
	_, conv := req.Header[ConversationHeader]
	if len(cred) == 0 && !conv && auth == nil {
		return reframe(req)(t.next.RoundTrip(req))
	}
	out := new(http.Request)
	*out = *req
	out.Header = req.Header.Clone()
	if out.Header == nil {
		out.Header = make(http.Header, len(cred))
	}
	// The conversation key was for reverse_proxy's load balancing
	// (conversation_key.go); the backend has no use for it.
	delete(out.Header, ConversationHeader)
	for k, v := range cred {
		if _, set := out.Header[k]; !set {
			out.Header[k] = v
		}
	}
	if auth != nil {
		// Last, so a signature covers every header set above.
		if err := auth.Authorize(out); err != nil {
			return nil, err
		}
		addAuthSecrets(out, auth) // for the scrubbers (auth_secrets.go)
	}
	return reframe(req)(t.next.RoundTrip(out))
}

// framingCtxKey is the context key of the backend protocol's
// responseFraming (protocols.go).
type framingCtxKey struct{}

// withFraming returns r carrying the backend protocol's response framing
// for the credential transport, which applies it to the response before
// reverse_proxy reads it.
func withFraming(r *http.Request, f func(*http.Response)) *http.Request {
	if f == nil {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), framingCtxKey{}, f))
}

// reframe returns what finishes a round trip of req: the response framing
// req carries, applied to a response.
func reframe(req *http.Request) func(*http.Response, error) (*http.Response, error) {
	f, _ := req.Context().Value(framingCtxKey{}).(func(*http.Response))
	return func(resp *http.Response, err error) (*http.Response, error) {
		if err == nil && resp != nil && f != nil {
			f(resp)
		}
		return resp, err
	}
}

// wrapTransport installs the credentialTransport in a provisioned
// reverse_proxy and reports whether it could. Any other upstream handler
// (a subroute, a static response) gets the credential on the request itself.
func wrapTransport(upstream any) bool {
	h, ok := upstream.(*reverseproxy.Handler)
	if !ok || h.Transport == nil {
		return false
	}
	if _, done := h.Transport.(*credentialTransport); !done {
		h.Transport = &credentialTransport{next: h.Transport}
	}
	return true
}

// The optional interfaces reverse_proxy asserts on its transport while it
// serves requests or runs health checks are passed on to the wrapped
// transport, with the answer reverse_proxy assumes when the wrapped
// transport lacks one. (BufferedTransport and RequestHeaderOpsTransport are
// asserted only in reverse_proxy's Provision, before the wrapping; the
// wrapped transport is a module Caddy cleans up itself.)

// ProxyProtocolEnabled implements reverseproxy.ProxyProtocolTransport.
func (t *credentialTransport) ProxyProtocolEnabled() bool {
	p, ok := t.next.(reverseproxy.ProxyProtocolTransport)
	return ok && p.ProxyProtocolEnabled()
}

// RequiresContentLength implements
// reverseproxy.ContentLengthRequiredTransport.
func (t *credentialTransport) RequiresContentLength() bool {
	c, ok := t.next.(reverseproxy.ContentLengthRequiredTransport)
	return ok && c.RequiresContentLength()
}

// OverrideHealthCheckScheme implements
// reverseproxy.HealthCheckSchemeOverriderTransport.
func (t *credentialTransport) OverrideHealthCheckScheme(base *url.URL, port string) {
	if o, ok := t.next.(reverseproxy.HealthCheckSchemeOverriderTransport); ok {
		o.OverrideHealthCheckScheme(base, port)
	}
}

// TLSEnabled implements reverseproxy.TLSTransport.
func (t *credentialTransport) TLSEnabled() bool {
	tt, ok := t.next.(reverseproxy.TLSTransport)
	return ok && tt.TLSEnabled()
}

// EnableTLS implements reverseproxy.TLSTransport.
func (t *credentialTransport) EnableTLS(base *reverseproxy.TLSConfig) error {
	if tt, ok := t.next.(reverseproxy.TLSTransport); ok {
		return tt.EnableTLS(base)
	}
	return nil
}

// EnableH2C implements reverseproxy.H2CTransport.
func (t *credentialTransport) EnableH2C() error {
	if h, ok := t.next.(reverseproxy.H2CTransport); ok {
		return h.EnableH2C()
	}
	return nil
}

// CloseIdleConnections closes the wrapped transport's idle connections.
func (t *credentialTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Interface guards
var (
	_ http.RoundTripper                                = (*credentialTransport)(nil)
	_ reverseproxy.ProxyProtocolTransport              = (*credentialTransport)(nil)
	_ reverseproxy.ContentLengthRequiredTransport      = (*credentialTransport)(nil)
	_ reverseproxy.HealthCheckSchemeOverriderTransport = (*credentialTransport)(nil)
	_ reverseproxy.TLSTransport                        = (*credentialTransport)(nil)
	_ reverseproxy.H2CTransport                        = (*credentialTransport)(nil)
)

package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// recordingTransport records the request it was asked to send.
type recordingTransport struct {
	got           *http.Request
	contentLength bool
	overridden    bool
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.got = r
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
}

func (rt *recordingTransport) RequiresContentLength() bool { return rt.contentLength }

func (rt *recordingTransport) OverrideHealthCheckScheme(*url.URL, string) { rt.overridden = true }

func TestCredentialTransport(t *testing.T) {
	tests := []struct {
		name      string
		cred      http.Header
		preset    http.Header // on the request before RoundTrip (header_up)
		wantKey   string
		wantSame  bool // the request goes on unchanged
		wantOther string
	}{
		{name: "the key goes on a copy", cred: http.Header{"X-Api-Key": {"backend-key"}}, wantKey: "backend-key"},
		{name: "header_up wins", cred: http.Header{"X-Api-Key": {"backend-key"}}, preset: http.Header{"X-Api-Key": {"from-header-up"}}, wantKey: "from-header-up"},
		{name: "no credential: the request as it is", wantSame: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recordingTransport{}
			ct := &credentialTransport{next: next}
			r := httptest.NewRequest(http.MethodPost, "http://backend/v1/messages", nil)
			for k, v := range tt.preset {
				r.Header[k] = v
			}
			r = withCredential(r, tt.cred)
			before := r.Header.Clone()
			if _, err := ct.RoundTrip(r); err != nil {
				t.Fatal(err)
			}
			if tt.wantSame != (next.got == r) {
				t.Errorf("same request: %v, want %v", next.got == r, tt.wantSame)
			}
			if got := next.got.Header.Get("X-Api-Key"); got != tt.wantKey {
				t.Errorf("sent X-Api-Key %q, want %q", got, tt.wantKey)
			}
			// reverse_proxy logs r: it must not have changed.
			if len(r.Header) != len(before) || r.Header.Get("X-Api-Key") != before.Get("X-Api-Key") {
				t.Errorf("the caller's request changed: %v -> %v", before, r.Header)
			}
		})
	}
}

func TestCredentialTransportDelegates(t *testing.T) {
	next := &recordingTransport{contentLength: true}
	ct := &credentialTransport{next: next}
	if !ct.RequiresContentLength() {
		t.Error("RequiresContentLength not passed on")
	}
	ct.OverrideHealthCheckScheme(&url.URL{}, "443")
	if !next.overridden {
		t.Error("OverrideHealthCheckScheme not passed on")
	}
	if ct.ProxyProtocolEnabled() || ct.TLSEnabled() {
		t.Error("a transport without PROXY protocol or TLS reported them")
	}
	// Around Caddy's own transport, its answers come through.
	ht := &reverseproxy.HTTPTransport{TLS: &reverseproxy.TLSConfig{}, ProxyProtocol: "v2"}
	ct = &credentialTransport{next: ht}
	if !ct.TLSEnabled() || !ct.ProxyProtocolEnabled() {
		t.Error("HTTPTransport's TLS or PROXY protocol lost in the wrapper")
	}
}

func TestWrapTransport(t *testing.T) {
	h := &reverseproxy.Handler{Transport: &recordingTransport{}}
	if !wrapTransport(h) || !wrapTransport(h) {
		t.Fatal("a reverse_proxy was not wrapped")
	}
	ct, ok := h.Transport.(*credentialTransport)
	if !ok {
		t.Fatalf("transport %T", h.Transport)
	}
	if _, twice := ct.next.(*credentialTransport); twice {
		t.Error("wrapped twice")
	}
	if wrapTransport(&Louter{}) {
		t.Error("a handler that is not a reverse_proxy reported wrapped")
	}
}

// TestAttachCredential checks both ways a credential reaches a backend:
// through the request's context to the credential transport, or, for an
// upstream that is not a reverse_proxy, on the request itself.
func TestAttachCredential(t *testing.T) {
	cred := http.Header{"X-Api-Key": {"backend-key"}}
	for _, viaTransport := range []bool{true, false} {
		b := &Backend{credentialTransport: viaTransport}
		r := b.attachCredential(httptest.NewRequest(http.MethodPost, "/", nil), cred)
		inCtx, _ := r.Context().Value(credentialCtxKey{}).(http.Header)
		onRequest := r.Header.Get("X-Api-Key") == "backend-key"
		if viaTransport != (inCtx != nil) || viaTransport == onRequest {
			t.Errorf("via transport %v: in context %v, on the request %v", viaTransport, inCtx, onRequest)
		}
	}
}

func TestProvisionFallsBackWithoutReverseProxy(t *testing.T) {
	l, err := provisionJSON(t, `{"backends": {"x": {"protocol": "fake_a", "api_key": "k", "upstream": {"handler": "static_response"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if l.Backends["x"].credentialTransport {
		t.Error("a static_response upstream reported a credential transport")
	}
}

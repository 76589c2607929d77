package caddymodule

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// headerAuth is a BackendAuth that signs with a header over what it sees.
type headerAuth struct{ err error }

func (a headerAuth) Authorize(r *http.Request) error {
	if a.err != nil {
		return a.err
	}
	r.Header.Set("X-Signed", r.Header.Get("X-Api-Key")+"|"+r.URL.Path)
	return nil
}

// TestBackendAuthInTransport: the auth module runs on the transport's copy,
// after the static credential headers, and its error fails the round trip
// without reaching the backend.
func TestBackendAuthInTransport(t *testing.T) {
	for _, tc := range []struct {
		name    string
		auth    BackendAuth
		wantErr bool
		want    string
	}{
		{"signs after the credential", headerAuth{}, false, "k|/v1/x"},
		{"error stops the request", headerAuth{err: errors.New("no credentials")}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			reached := false
			tr := &credentialTransport{next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				reached = true
				got = r.Header.Get("X-Signed")
				return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
			})}
			b := &Backend{credentialTransport: true, auth: tc.auth}
			req := b.attachCredential(httptest.NewRequest(http.MethodPost, "/v1/x", nil), http.Header{"X-Api-Key": {"k"}})
			_, err := tr.RoundTrip(req)
			if (err != nil) != tc.wantErr || reached == tc.wantErr {
				t.Fatalf("err = %v, reached = %v", err, reached)
			}
			if got != tc.want {
				t.Fatalf("X-Signed = %q, want %q", got, tc.want)
			}
			if req.Header.Get("X-Signed") != "" {
				t.Fatal("the caller's request was modified")
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

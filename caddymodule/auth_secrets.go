package caddymodule

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/louter/louter/caddymodule/auth"
	"github.com/louter/louter/record"
)

// An auth module's secrets (a fetched token, the session token signed
// with) exist only inside the credential transport, after the secret
// writer and the recording were told what to scrub. So the attempt hands
// the transport a sink through the request's context, and the transport
// adds to it what the module's SecretSource names, before the backend's
// answer is read.

// authSecretsCtxKey is the context key of a request's *authSecrets.
type authSecretsCtxKey struct{}

// authSecrets collects the secrets an auth module put on an attempt's
// requests (reverse_proxy may retry one), for the attempt's secret writer
// and the exchange's recording.
type authSecrets struct {
	mu   sync.Mutex
	list []string
	rec  *record.Capture // nil when the exchange is not recorded
}

// add records secrets for the scrubbers.
func (s *authSecrets) add(secrets []string) {
	secrets = slices.DeleteFunc(secrets, func(v string) bool { return v == "" })
	if len(secrets) == 0 {
		return
	}
	s.mu.Lock()
	for _, v := range secrets {
		if !slices.Contains(s.list, v) {
			s.list = append(s.list, v)
		}
	}
	s.mu.Unlock()
	s.rec.Scrub(secrets...)
}

// all returns the secrets added so far.
func (s *authSecrets) all() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

// collectAuthSecrets returns r carrying a sink for the secrets b's auth
// module puts on it, which sw's scrubbing and rec (when not nil) take in;
// r itself when the module names none.
func (sw *secretWriter) collectAuthSecrets(r *http.Request, b *Backend, rec *record.Capture) *http.Request {
	if _, ok := b.auth.(auth.SecretSource); !ok {
		return r
	}
	sw.fetched = &authSecrets{rec: rec}
	return r.WithContext(context.WithValue(r.Context(), authSecretsCtxKey{}, sw.fetched))
}

// addAuthSecrets hands the secrets a authorized req with to the sink req
// carries, if any. The credential transport calls it after Authorize.
func addAuthSecrets(req *http.Request, a BackendAuth) {
	src, ok := a.(auth.SecretSource)
	if !ok {
		return
	}
	if sink, _ := req.Context().Value(authSecretsCtxKey{}).(*authSecrets); sink != nil {
		sink.add(src.Secrets(req))
	}
}

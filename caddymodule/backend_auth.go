package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/auth"
)

// BackendAuth is the contract of the modules in the
// "http.handlers.louter.auth" namespace; see package auth.
type BackendAuth = auth.BackendAuth

// authCtxKey is the context key of the BackendAuth a backend request is to
// be authorized with.
type authCtxKey struct{}

// withAuth returns r carrying a for the credential transport.
func withAuth(r *http.Request, a BackendAuth) *http.Request {
	if a == nil {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), authCtxKey{}, a))
}

// authOf returns the BackendAuth r carries, or nil.
func authOf(r *http.Request) BackendAuth {
	a, _ := r.Context().Value(authCtxKey{}).(BackendAuth)
	return a
}

// provisionAuth loads the backend's auth module. It needs the credential
// transport: on any other upstream handler there is no point below the
// handler's logs at which a signature or token could be added.
func (b *Backend) provisionAuth(ctx caddy.Context) error {
	if b.APIKey != "" || b.PassClientAuth {
		return fmt.Errorf("auth cannot be combined with api_key or pass_client_auth")
	}
	if !b.credentialTransport {
		return fmt.Errorf("auth needs a reverse_proxy upstream, whose transport louter signs in")
	}
	mod, err := ctx.LoadModule(b, "AuthRaw")
	if err != nil {
		return fmt.Errorf("loading auth module: %w", err)
	}
	a, ok := mod.(BackendAuth)
	if !ok {
		return fmt.Errorf("auth module %T does not implement BackendAuth", mod)
	}
	b.auth = a
	return nil
}

// unmarshalBackendAuth parses a backend's "auth <method> { ... }" segment
// with the named module's own Caddyfile unmarshaler; the dispenser is on
// "auth".
func unmarshalBackendAuth(d *caddyfile.Dispenser) (json.RawMessage, error) {
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	method := d.Val()
	mod, err := caddyfile.UnmarshalModule(d, "http.handlers.louter.auth."+method)
	if err != nil {
		return nil, err
	}
	return caddyconfig.JSONModuleObject(mod, "method", method, nil), nil
}

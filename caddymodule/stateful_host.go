package caddymodule

import (
	"context"
	"net/http"
	"net/url"

	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/caddymodule/internal/stateful"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// This file is the handler's side of the seam to the stateful layer
// (internal/stateful, whose host.go writes down the contract): the host the
// handler gives it, and its backends as the layer sees them.

// StoredResponses configures stored responses, the Responses WebSocket and
// compaction: the stored_responses block, which the stateful layer owns
// (its Config, and the block's Caddyfile in its caddyfile.go).
type StoredResponses = stateful.Config

// newStateHost is the handler's side of the seam.
func (l *Louter) newStateHost() stateful.Host {
	return stateful.Host{
		Chat:     l.chatTurn,
		Reject:   l.reject,
		ReadBody: l.readBody,
		Route: func(model string) (stateful.Backend, bool) {
			route, ok := l.route(model)
			if !ok {
				return nil, false
			}
			return backendState{route.backend}, true
		},
		Backend: func(name string) (stateful.Backend, bool) {
			b := l.Backends[name]
			if b == nil {
				return nil, false
			}
			return backendState{b}, true
		},
		API:            func(p translate.Protocol) *stateful.API { return rowOf(p).stateful },
		Reauthenticate: l.reauthenticateSocket,
		Client: func(r *http.Request) (string, bool) {
			if c := clientOf(r); c != nil {
				return c.name, true
			}
			return "", false
		},
		MaxBody: l.MaxRequestBody,
		Logger:  l.logger,
	}
}

// provisionState sets up the stateful layer; its store is the redis
// server when a redis block is configured (internal/stateful).
func (l *Louter) provisionState() error {
	rs, guard := l.sharedRedis()
	sl, err := stateful.New(l.State, rs, guard, l.newStateHost())
	if err != nil {
		return err
	}
	l.stateful = sl
	return nil
}

// sharedRedis returns the redis block's store and its circuit breaker
// (the limits', made by provisionAccess whether or not anything is
// limited), or nil when there is no redis block.
func (l *Louter) sharedRedis() (*limits.RedisStore, func(context.Context, func() error) error) {
	if l.access == nil || l.access.limiter == nil {
		return nil, nil
	}
	switch st := l.access.limiter.Store.(type) {
	case *limits.BreakerStore:
		if rs, ok := st.Store.(*limits.RedisStore); ok {
			return rs, st.Breaker.Do
		}
	case *limits.RedisStore:
		return st, nil
	}
	return nil, nil
}

// reauthenticateSocket is the host's reauthenticate: the key table's
// lookup, as authenticate does for every HTTP request (client_keys.go).
func (l *Louter) reauthenticateSocket(ctx context.Context, r *http.Request, p translate.Protocol) (context.Context, bool) {
	a, was := l.access, clientOf(r)
	if a == nil || !a.keys || was == nil {
		return ctx, true
	}
	c, why := a.identify(r) // client_keys.go
	if why == authOK && c.name == was.name {
		if c != was {
			ctx = context.WithValue(ctx, clientCtxKey{}, c)
		}
		return ctx, true
	}
	l.countAuthRefusal(p, authInvalid)
	l.logger.Info("closing a WebSocket session whose client key is no longer valid", zap.String("client_name", was.name))
	return nil, false
}

// chatTurn serves r on the chat path: the host's chat, which the handler's
// own summary turns use too (compact_edit.go).
func (l *Louter) chatTurn(w http.ResponseWriter, r *http.Request) error {
	return l.serveChat(w, r, classifyRequest(r), nopNext)
}

// backendState is a backend as the stateful layer sees it: its
// stateful.Backend, kept off *Backend so that the layer's interface adds no
// method to the exported Backend. Holding one pointer, it goes into the
// interface without an allocation.
type backendState struct{ b *Backend }

func (s backendState) StateName() string { return s.b.name }

func (s backendState) PassesThrough(client translate.Protocol) bool {
	return s.b.passesThrough(client) // scan_deferred.go
}

func (s backendState) StatefulAPI() *stateful.API { return rowOf(s.b.Protocol).stateful }

// AuthenticatesClient reports whether the backend authenticates the client of r
// itself: pass_client_auth, and a credential of the client's that goes to
// the backend in place of its api_key (as rewriteRequest sends it to a
// backend of the client's protocol).
func (s backendState) AuthenticatesClient(r *http.Request) bool {
	return redact.HasKeyHeader(s.clientCredential(r))
}

// clientCredential is the credential of the client of r that goes to the
// backend as the client sent it, under pass_client_auth; nil without it.
func (s backendState) clientCredential(r *http.Request) http.Header {
	if !s.b.PassClientAuth {
		return nil
	}
	return takeClientCredentials(r.Header.Clone(), s.b.Protocol, redact.QueryCredential(r.URL.RawQuery))
}

// maxBackendDeleteBytes bounds the backend's answer to a DELETE.
const maxBackendDeleteBytes = 64 << 10

// DeleteStored sends DELETE {base_path}/responses/{id} to the backend through its
// upstream handler, built afresh as fetchBackendModels builds its request:
// none of the client's headers but its credential when the backend takes
// the client's own (pass_client_auth), the backend's key otherwise.
func (s backendState) DeleteStored(ctx context.Context, r *http.Request, id string) (int, error) {
	b := s.b
	proto := rowOf(b.Protocol)
	endpoint := proto.endpoint
	if b.endpoint != nil {
		endpoint = b.endpoint
	}
	path, query := endpoint("", false)
	req := backendQuestion(ctx, r, b, http.MethodDelete, path+"/"+url.PathEscape(id), query) // backend_call.go
	cred := s.clientCredential(r)
	if !redact.HasKeyHeader(cred) && b.apiKey != "" {
		cred = make(http.Header, 1)
		proto.setKey(cred, b.apiKey)
	}

	rec, err := callBackend(b, b.attachCredential(req, cred), maxBackendDeleteBytes)
	if err != nil {
		return 0, err
	}
	return rec.status, nil
}

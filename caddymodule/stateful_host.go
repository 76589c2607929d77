package caddymodule

import (
	"context"
	"net/http"
	"net/url"

	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// The stateful layer (stateful*.go, stored_endpoints.go,
// interactions_state.go, responses_ws*.go) is a stateLayer, which never
// touches the handler: what it needs of the rest is a stateHost, which the
// handler fills in at Provision (newStateHost, below). This file is the
// handler's side of that seam; the layer's own files use only the host.
//
// The contract, for every function of the host:
//
//   - Errors: a *translate.Error is the client's answer, which the layer
//     writes with reject; an error is the handler's (the connection is
//     gone, an upstream handler failed) and is returned as ServeHTTP
//     returns it, or logged where nobody waits (a background turn, a
//     WebSocket frame).
//   - Aliasing: the layer may keep nothing a host function returns past
//     the request it was given, but the body readBody returns, which is
//     the layer's; the host keeps nothing the layer passes it.
//   - Concurrency: every function is safe for concurrent use, and may be
//     called after the request that opened a WebSocket session or a
//     background turn is answered, until the layer's close (the handler's
//     Cleanup); chat may be called after close too, by a session that
//     outlived its config, and serves it as the handler still can.

// stateHost is what the stateful layer is given of the handler.
type stateHost struct {
	// chat serves r on the chat path, as ServeHTTP serves an
	// authenticated request (routing, limits, fallbacks, translation, the
	// exchange record), writing the answer to w: a WebSocket frame's
	// turn, a background turn, a summary turn. It re-enters the layer
	// (continueTurn), as any request of a stateful protocol does.
	chat func(w http.ResponseWriter, r *http.Request) error
	// reject writes e to w in codec's shape.
	reject func(w http.ResponseWriter, codec translate.Codec, e *translate.Error) error
	// readBody reads r's body within max_request_body, decoded.
	readBody func(r *http.Request) ([]byte, *translate.Error)
	// route is the backend a model is served by first, false when none
	// is configured for it.
	route func(model string) (stateBackend, bool)
	// backend is the backend configured under name, false when none is
	// (the configuration changed since a turn was stored).
	backend func(name string) (stateBackend, bool)
	// api is the stateful API of protocol p's row, nil when it has none.
	api func(p translate.Protocol) *statefulAPI
	// reauthenticate resolves the client of a WebSocket session's
	// upgrade r again, before each frame (responses_ws_recheck.go): the
	// context the frame is served in, carrying the client as the key
	// table knows it now, or false when its key is no longer valid (the
	// refusal counted and logged).
	reauthenticate func(ctx context.Context, r *http.Request, p translate.Protocol) (context.Context, bool)
	// maxBody is max_request_body: the largest WebSocket frame read.
	maxBody int64
	logger  *zap.Logger
}

// stateBackend is what the stateful layer needs of a backend.
type stateBackend interface {
	// stateName is the backend's name, which a stored turn records.
	stateName() string
	// passesThrough reports whether a request of client's protocol goes
	// to the backend untranslated, as the handler decides it
	// (scan_deferred.go).
	passesThrough(client translate.Protocol) bool
	// statefulAPI is the stateful API of the backend's protocol row, nil
	// when it has none.
	statefulAPI() *statefulAPI
	// authenticatesClient reports whether the backend authenticates the
	// client of r itself (stateful_delete.go).
	authenticatesClient(r *http.Request) bool
	// deleteStored sends DELETE of the stored turn id to the backend, in
	// ctx, with r's credential as the backend takes it, and returns the
	// status it answered.
	deleteStored(ctx context.Context, r *http.Request, id string) (status int, err error)
}

// newStateHost is the handler's side of the seam.
func (l *Louter) newStateHost() stateHost {
	return stateHost{
		chat:     l.chatTurn,
		reject:   l.reject,
		readBody: l.readBody,
		route: func(model string) (stateBackend, bool) {
			route, ok := l.route(model)
			if !ok {
				return nil, false
			}
			return route.backend, true
		},
		backend: func(name string) (stateBackend, bool) {
			b := l.Backends[name]
			return b, b != nil
		},
		api:            func(p translate.Protocol) *statefulAPI { return rowOf(p).stateful },
		reauthenticate: l.reauthenticateSocket,
		maxBody:        l.MaxRequestBody,
		logger:         l.logger,
	}
}

// provisionState sets up the stateful layer; its store is the limits'
// redis server when they use one (stateful.go).
func (l *Louter) provisionState() error {
	rs, guard := l.sharedRedis()
	sl, err := newStateLayer(l.State, rs, guard, l.newStateHost())
	if err != nil {
		return err
	}
	l.stateful = sl
	return nil
}

// sharedRedis returns the limits' redis store and its circuit breaker, or
// nil when the limits count in memory.
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

func (b *Backend) stateName() string { return b.name }

func (b *Backend) statefulAPI() *statefulAPI { return rowOf(b.Protocol).stateful }

// authenticatesClient reports whether b authenticates the client of r
// itself: pass_client_auth, and a credential of the client's that goes to
// the backend in place of its api_key (as rewriteRequest sends it to a
// backend of the client's protocol).
func (b *Backend) authenticatesClient(r *http.Request) bool {
	if !b.PassClientAuth {
		return false
	}
	return redact.HasKeyHeader(takeClientCredentials(r.Header.Clone(), b.Protocol, redact.QueryCredential(r.URL.RawQuery)))
}

// maxBackendDeleteBytes bounds the backend's answer to a DELETE.
const maxBackendDeleteBytes = 64 << 10

// deleteStored sends DELETE {base_path}/responses/{id} to b through its
// upstream handler, built afresh as fetchBackendModels builds its request:
// none of the client's headers but its credential when the backend takes
// the client's own (pass_client_auth), the backend's key otherwise.
func (b *Backend) deleteStored(ctx context.Context, r *http.Request, id string) (int, error) {
	proto := rowOf(b.Protocol)
	req := r.Clone(ctx) // Caddy's context: the replacer and vars reverse_proxy needs
	req.Method = http.MethodDelete
	req.Body, req.GetBody, req.ContentLength, req.TransferEncoding = http.NoBody, nil, 0, nil
	req.Header = http.Header{"Accept": {"application/json"}}
	var cred http.Header
	if b.PassClientAuth {
		cred = takeClientCredentials(r.Header.Clone(), b.Protocol, redact.QueryCredential(r.URL.RawQuery))
	}
	if !redact.HasKeyHeader(cred) && b.apiKey != "" {
		cred = make(http.Header, 1)
		proto.setKey(cred, b.apiKey)
	}
	proto.prepareRequest(req.Header)
	endpoint := proto.endpoint
	if b.endpoint != nil {
		endpoint = b.endpoint
	}
	path, query := endpoint("", false)
	setBackendPath(req.URL, b.basePath, path+"/"+url.PathEscape(id))
	req.URL.RawQuery = query
	req.RequestURI = req.URL.RequestURI()

	rec, err := callBackend(b, b.attachCredential(req, cred), maxBackendDeleteBytes)
	if err != nil {
		return 0, err
	}
	return rec.status, nil
}

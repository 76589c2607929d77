package stateful

import (
	"context"
	"net/http"

	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

// The stateful layer is a Layer, which never touches the handler: what it
// needs of the rest is a Host, which the handler fills in at Provision
// (caddymodule's stateful_host.go). This file writes down that seam.
//
// The contract, for every function of the host:
//
//   - Errors: a *translate.Error is the client's answer, which the layer
//     writes with Reject; an error is the handler's (the connection is
//     gone, an upstream handler failed) and is returned as ServeHTTP
//     returns it, or logged where nobody waits (a background turn, a
//     WebSocket frame).
//   - Aliasing: the layer may keep nothing a host function returns past
//     the request it was given, but the body ReadBody returns, which is
//     the layer's; the host keeps nothing the layer passes it.
//   - Concurrency: every function is safe for concurrent use, and may be
//     called after the request that opened a WebSocket session or a
//     background turn is answered, until the layer's Close (the handler's
//     Cleanup); Chat may be called after Close too, by a session that
//     outlived its config, and serves it as the handler still can.

// Host is what the stateful layer is given of the handler.
type Host struct {
	// Chat serves r on the chat path, as ServeHTTP serves an
	// authenticated request (routing, limits, fallbacks, translation, the
	// exchange record), writing the answer to w: a WebSocket frame's
	// turn, a background turn, a summary turn. It re-enters the layer
	// (continueTurn), as any request of a stateful protocol does.
	Chat func(w http.ResponseWriter, r *http.Request) error
	// Reject writes e to w in codec's shape.
	Reject func(w http.ResponseWriter, codec translate.Codec, e *translate.Error) error
	// ReadBody reads r's body within max_request_body, decoded.
	ReadBody func(r *http.Request) ([]byte, *translate.Error)
	// Route is the backend a model is served by first, false when none
	// is configured for it.
	Route func(model string) (Backend, bool)
	// Backend is the backend configured under name, false when none is
	// (the configuration changed since a turn was stored).
	Backend func(name string) (Backend, bool)
	// API is the stateful API of protocol p's row, nil when it has none.
	API func(p translate.Protocol) *API
	// Reauthenticate resolves the client of a WebSocket session's
	// upgrade r again, before each frame (responses_ws_recheck.go): the
	// context the frame is served in, carrying the client as the key
	// table knows it now, or false when its key is no longer valid (the
	// refusal counted and logged).
	Reauthenticate func(ctx context.Context, r *http.Request, p translate.Protocol) (context.Context, bool)
	// Client is the name of the client a key table identified for r, false
	// when none did (no key table, or a key-less caller let through).
	Client func(r *http.Request) (name string, ok bool)
	// MaxBody is max_request_body: the largest WebSocket frame read.
	MaxBody int64
	// Logger is the handler's logger.
	Logger *zap.Logger
}

// Backend is what the stateful layer needs of a backend.
type Backend interface {
	// StateName is the backend's name, which a stored turn records.
	StateName() string
	// PassesThrough reports whether a request of client's protocol goes
	// to the backend untranslated, as the handler decides it
	// (caddymodule's scan_deferred.go).
	PassesThrough(client translate.Protocol) bool
	// StatefulAPI is the stateful API of the backend's protocol row, nil
	// when it has none.
	StatefulAPI() *API
	// AuthenticatesClient reports whether the backend authenticates the
	// client of r itself (delete.go).
	AuthenticatesClient(r *http.Request) bool
	// DeleteStored sends DELETE of the stored turn id to the backend, in
	// ctx, with r's credential as the backend takes it, and returns the
	// status it answered.
	DeleteStored(ctx context.Context, r *http.Request, id string) (status int, err error)
}

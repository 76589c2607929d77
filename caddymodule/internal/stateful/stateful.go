// Package stateful is louter's stateful layer: stored responses and their
// endpoints, compaction, background turns, the Interactions API's stored
// interactions and the Responses WebSocket. The handler (caddymodule) gives
// it a Host at Provision and calls it from ServeHTTP; the layer never
// imports the handler.
package stateful

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// This file gives a stateful protocol (the row's stateful: the Responses
// API, and the Interactions API as interactions_state.go describes) its
// server-side state on every backend:
//
//   - A request with store true (the API's default) has its answer kept:
//     one record per turn in package state, holding this turn's input
//     items and the response object, and naming the turn it continues.
//   - previous_response_id and conversation continue a kept chain: louter
//     puts the chain's input and output items back in front of the
//     request's input (turn.go), so a stateless backend gets the
//     whole history. A Responses backend that kept the previous turn
//     itself (passthrough, store true, the same backend) gets the id
//     untouched, and uses its own state; an id louter does not hold goes
//     to it only when it authenticates the client itself, and DELETE
//     reaches it too (delete.go).
//   - GET and DELETE /v1/responses/{id}, GET .../input_items, POST
//     /v1/responses/compact (stored_endpoints.go, compact.go),
//     and the Responses WebSocket (responses_ws.go).
//
// Every record belongs to the client that made it (stateOwner): another
// client's id is not found, whatever its key.

// Config configures stored responses, the Responses WebSocket and
// compaction: caddymodule's StoredResponses, the handler's
// stored_responses.
type Config struct {
	// Disabled turns stored responses off: every request is served
	// statelessly, store is ignored, and previous_response_id,
	// conversation and GET /v1/responses/{id} are refused.
	Disabled bool `json:"disabled,omitempty"`

	// The most bytes the in-memory store holds (the turns' JSON plus
	// about 200 bytes each); past it the least recently used turns are
	// evicted. Default: 256 MiB. Not used with redis, which is bounded
	// by the server's maxmemory.
	MaxStoredBytes int64 `json:"max_stored_bytes,omitempty"`

	// How long a stored turn lives after it was last stored, read or
	// continued; an expired id gets the API's 404 (or 400
	// previous_response_not_found). Default: 24h.
	TTL caddy.Duration `json:"ttl,omitempty"`

	// WebSocket is "on" (the default) or "off". Off, an upgrade on
	// /v1/responses is refused with 426 Upgrade Required, which makes
	// Codex fall back to HTTP at once.
	WebSocket string `json:"websocket,omitempty"`

	// The longest a WebSocket session may stay open; at its end louter
	// sends a websocket_connection_limit_reached error and closes, and
	// Codex reconnects. Default: 60m.
	WebSocketMaxAge caddy.Duration `json:"websocket_max_age,omitempty"`

	// How often louter pings an open WebSocket session (a ping control
	// frame, which every WebSocket client answers with a pong by itself).
	// A ping not answered within the same interval ends the session: the
	// connection is closed and the turn it was running cancelled, so a
	// client that vanished (a laptop closed, a NAT entry expired) does
	// not hold a session until websocket_max_age. Pings also keep idle
	// connections open through proxies and load balancers that drop
	// silent ones. Default: 30s. A negative value (Caddyfile: off) sends
	// no pings.
	WebSocketPingInterval caddy.Duration `json:"websocket_ping_interval,omitempty"`

	// The most bytes one WebSocket session keeps of its own turns (those
	// sent with store false, which previous_response_id may still name
	// on the same socket). Default: 32 MiB.
	WebSocketMaxBytes int64 `json:"websocket_max_bytes,omitempty"`

	// The most bytes all WebSocket sessions of the process keep of their
	// turns together, every louter handler and the sessions still open
	// from configs since reloaded included. Past it, the turns of the
	// least recently used sessions are dropped (whole: a continuation
	// needs its chain), so the sessions in use keep theirs; a session
	// whose turns were dropped stays open, and continuing one of them
	// gets previous_response_not_found, on which Codex resends the whole
	// conversation. A session keeps at most this much, whatever
	// websocket_max_bytes says. Default: 512 MiB.
	WebSocketTotalBytes int64 `json:"websocket_total_bytes,omitempty"`

	// The most WebSocket sessions one client has open at once, in the
	// process (without a key table every credential is a client of its
	// own, and callers presenting none are one client); past it, the
	// upgrade is refused with 429 naming websocket_max_per_client.
	// Default: 16.
	WebSocketMaxPerClient int `json:"websocket_max_per_client,omitempty"`

	// The most background responses (background: true) one client runs
	// at once; past it, 429. Default: 4.
	BackgroundMaxPerClient int `json:"background_max_per_client,omitempty"`

	// The most background responses this instance runs at once, all
	// clients together (without a key table every credential is a client
	// of its own); past it, 429. Default: 64.
	BackgroundMax int `json:"background_max,omitempty"`

	// The longest a background response may run; past it, it is stored
	// "failed". Default: 10m.
	BackgroundTimeout caddy.Duration `json:"background_timeout,omitempty"`
}

// stateStore is the provisioned configuration.
type stateStore struct {
	store     state.Store
	ttl       time.Duration
	websocket bool
	wsMaxAge  time.Duration
	wsPing    time.Duration // 0: no pings
	wsBytes   int64
	wsTotal   int64          // websocket_total_bytes
	wsMaxOpen int            // websocket_max_per_client
	bg        backgroundRuns // background.go
	bgMax     int            // per client
	bgTotal   int
	bgTimeout time.Duration
	release   func()
	logger    *zap.Logger
	// retired is done once the handler is cleaned up (a config reload):
	// its WebSocket sessions, which outlive it, then end (responses_ws.go).
	retired context.Context
	retire  context.CancelFunc
	// dropWarned: websocket_total_bytes has dropped sessions' turns, and
	// that was logged as a warning; later drops are logged at debug.
	dropWarned atomic.Bool
}

// statePool shares the in-memory store across config reloads, keyed by its
// bounds.
var statePool = caddy.NewUsagePool()

type pooledMemory struct{ *state.Memory }

func (pooledMemory) Destruct() error { return nil }

// Layer is the stateful layer: the store and its bounds, and what it is
// given of the handler (host.go). Its methods serve the stateful endpoints
// and a stateful protocol's turns; the handler calls them, and they reach
// the handler only through the host.
type Layer struct {
	Host
	// s is nil when stored responses are off.
	s *stateStore
}

// New sets up the stateful layer of config c (nil: the
// defaults) on host. The store is rs when it is set (the limits' redis
// server: the same client and circuit breaker guard, keys under the
// prefix's "state:"), memory otherwise.
func New(c *Config, rs *limits.RedisStore, guard func(context.Context, func() error) error, host Host) (*Layer, error) {
	sl := &Layer{Host: host}
	if c == nil {
		c = &Config{}
	}
	if c.Disabled {
		return sl, nil
	}
	if c.WebSocket != "" && c.WebSocket != "on" && c.WebSocket != "off" {
		return nil, fmt.Errorf("stored_responses: websocket must be on or off, not %q", c.WebSocket)
	}
	if c.MaxStoredBytes < 0 || c.TTL < 0 || c.WebSocketMaxAge < 0 || c.WebSocketMaxBytes < 0 || c.WebSocketTotalBytes < 0 || c.WebSocketMaxPerClient < 0 || c.BackgroundMaxPerClient < 0 || c.BackgroundMax < 0 || c.BackgroundTimeout < 0 {
		return nil, errors.New("stored_responses: limits must not be negative")
	}
	s := &stateStore{
		ttl:       time.Duration(c.TTL),
		websocket: c.WebSocket != "off",
		wsMaxAge:  time.Duration(c.WebSocketMaxAge),
		wsPing:    max(time.Duration(c.WebSocketPingInterval), 0),
		wsBytes:   c.WebSocketMaxBytes,
		wsTotal:   c.WebSocketTotalBytes,
		wsMaxOpen: c.WebSocketMaxPerClient,
		bgMax:     c.BackgroundMaxPerClient,
		bgTotal:   c.BackgroundMax,
		bgTimeout: time.Duration(c.BackgroundTimeout),
		logger:    sl.Logger,
	}
	s.retired, s.retire = context.WithCancel(context.Background())
	if s.bgMax == 0 {
		s.bgMax = 4
	}
	if s.bgTotal == 0 {
		s.bgTotal = 64
	}
	if s.bgTimeout == 0 {
		s.bgTimeout = 10 * time.Minute
	}
	if s.ttl == 0 {
		s.ttl = state.DefaultTTL
	}
	if s.wsMaxAge == 0 {
		s.wsMaxAge = time.Hour
	}
	if c.WebSocketPingInterval == 0 {
		s.wsPing = defaultPingInterval
	}
	if s.wsBytes == 0 {
		s.wsBytes = 32 << 20
	}
	if s.wsTotal == 0 {
		s.wsTotal = 512 << 20
	}
	if s.wsMaxOpen == 0 {
		s.wsMaxOpen = 16
	}
	if rs != nil {
		s.store = &state.Redis{Client: rs.Client, Prefix: rs.Prefix + "state:", TTL: s.ttl, Guard: guard}
	} else {
		key := fmt.Sprintf("louter.state:%d:%d", c.MaxStoredBytes, s.ttl)
		v, _, _ := statePool.LoadOrNew(key, func() (caddy.Destructor, error) {
			return pooledMemory{&state.Memory{MaxBytes: c.MaxStoredBytes, TTL: s.ttl}}, nil
		})
		s.store = v.(pooledMemory).Memory
		s.release = func() { _, _ = statePool.Delete(key) }
	}
	sl.s = s
	return sl, nil
}

// Close ends the layer: its WebSocket sessions end, its store is
// released. A nil layer (a handler not provisioned) has nothing to Close.
func (sl *Layer) Close() {
	if sl == nil || sl.s == nil {
		return
	}
	s := sl.s
	s.retire()
	if s.release != nil {
		s.release()
	}
}

// stateOwner is the identity a request's records belong to: the client's
// name when a key table identified it, else a hash of the key it presented
// (so two callers with different keys never share records). The key is
// read as the key table reads it, from whichever header or query parameter
// carried it: an Interactions client sending its key as x-goog-api-key,
// then as ?key=, is one owner. A caller with no key (none at all, or an
// Authorization that is not Bearer, such as Basic) is a hash of its raw
// credential headers, so different Basic credentials never share either; a
// gateway with no keys at all, whose callers present none, has one owner.
func (sl *Layer) stateOwner(r *http.Request) string {
	if name, ok := sl.Client(r); ok {
		return "c:" + name
	}
	if key := redact.ClientKey(r.Header, r.URL.RawQuery); key != "" {
		sum := sha256.Sum256([]byte(key))
		return "key:" + hex.EncodeToString(sum[:16]) // not "k:": no key hash is a header hash
	}
	h := sha256.New()
	for _, k := range redact.KeyHeaders {
		h.Write([]byte(r.Header.Get(k)))
		h.Write([]byte{0})
	}
	h.Write([]byte(r.URL.Query().Get("key")))
	return "k:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// API is how a stateful protocol's API names its server-side
// state: what louter needs to keep its turns and to put them back. A row's
// stateful points at one.
type API struct {
	// path is the API's collection after the prefix: a POST to it creates
	// a turn, path/{id} names a stored one.
	path string
	// object is the "object" member of the API's stored object; a record
	// holding another API's object is not found through this one.
	object string
	// prev is the request member naming the turn a request continues.
	prev string
	// output is the stored object's member listing its output items.
	output string
	// private is the type of the output items that go back only to the
	// backend that made them: reasoning, whose signature or encrypted
	// content is that provider's.
	private string
	// items is a request's input as a JSON array of the API's items.
	items func(in gjson.Result) []byte
	// notFound is the answer to a continuation of an id the client has
	// not stored (unknown, expired, deleted, another client's).
	notFound func(id string) *translate.Error
	// serveStored answers a request for path/{rest} (rest is what
	// follows the slash); api is this.
	serveStored func(sl *Layer, w http.ResponseWriter, r *http.Request, codec translate.Codec, api *API, rest string) error
	// assembler, when set, makes the object of a stream from its data
	// lines; nil: the stream's terminal event carries it whole.
	assembler func() streamAssembler
	// What only the Responses API has: conversations (the conversation
	// member), compaction items, its WebSocket, and background turns.
	conversations, compaction, websocket, background bool
}

// Path is the API's collection after the prefix ("/v1/responses"), which
// a turn is POSTed to.
func (api *API) Path() string { return api.path }

// Compacts reports whether the API has compaction items, which the
// handler's summary turns are made with (caddymodule's compact_edit.go).
func (api *API) Compacts() bool { return api.compaction }

// Responses is the Responses API's (the row's stateful).
var Responses = API{
	path:          "/v1/responses",
	object:        "response",
	prev:          "previous_response_id",
	output:        "output",
	private:       "reasoning",
	items:         inputItems,
	notFound:      previousNotFound,
	serveStored:   (*Layer).serveStoredResponse, // stored_endpoints.go
	conversations: true,
	compaction:    true,
	websocket:     true,
	background:    true,
}

// ServeState answers the stateful endpoints of a stateful protocol: the
// stored turns, compaction, and the WebSocket upgrade, for a request the
// handler classified as protocol p's (whose shape answers) at API path path
// (after the prefix: "/v1/responses/resp_1"). It reports whether it
// answered.
func (sl *Layer) ServeState(w http.ResponseWriter, r *http.Request, p translate.Protocol, path string) (bool, error) {
	if sl == nil {
		return false, nil // a handler not provisioned
	}
	api := sl.API(p)
	if api == nil || !strings.HasPrefix(path, api.path) {
		return false, nil
	}
	codec, ok := translate.Lookup(p)
	if !ok {
		return false, nil
	}
	rest := strings.TrimPrefix(path, api.path)
	if rest == "" {
		if !api.websocket || r.Method != http.MethodGet || !isWebSocketUpgrade(r) {
			return false, nil
		}
		return true, sl.serveWebSocket(w, r, p, codec) // responses_ws.go
	}
	if rest[0] != '/' {
		return false, nil
	}
	if sl.s == nil {
		return true, sl.Reject(w, codec, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: %s: stored turns are disabled on this gateway (stored_responses disabled)", path)))
	}
	rest = rest[1:]
	if rest == "compact" && api.compaction {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			return true, sl.Reject(w, codec, &translate.Error{Status: http.StatusMethodNotAllowed, Kind: translate.ErrInvalidRequest, Message: "louter: /v1/responses/compact takes POST"})
		}
		return true, sl.serveCompact(w, r, codec) // compact.go
	}
	return true, api.serveStored(sl, w, r, codec, api, rest)
}

// isWebSocketUpgrade reports whether r asks for a WebSocket.
func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") && headerHasToken(r.Header, "Connection", "upgrade")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// storeUnavailable is the answer when the store fails (Redis down).
func storeUnavailable(err error) *translate.Error {
	return &translate.Error{Status: http.StatusServiceUnavailable, Kind: translate.ErrOverloaded,
		Message: "louter: the response store is unavailable; retry, or send the whole conversation with store false"}
}

// saveContext is the context a turn is saved in: the request's values,
// not its cancellation (a client that has gone still gets its turn
// kept), with a bound.
func saveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

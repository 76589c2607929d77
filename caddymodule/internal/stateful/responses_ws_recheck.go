package stateful

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/translate"
)

// A WebSocket session is authenticated at its upgrade, but it lives up to
// websocket_max_age, and what HTTP checks on every request may change
// meanwhile. So each frame is served as an HTTP request would be now:
//
//   - the client is resolved again from the upgrade's key before each
//     frame (the key table's lookup, as authenticate does for every HTTP
//     request): a key revoked or rotated through the keys API since gets
//     the frame a 401 error frame, and the session closes (1008, policy
//     violation); a key whose models or limits changed is served under
//     the new ones (the limits themselves are applied per turn, by the
//     chat path);
//   - a session whose handler was cleaned up (its config reloaded or
//     stopped; the hijacked connection outlived it) is ended at once when
//     idle, else as soon as its running turn is done, with a
//     websocket_connection_limit_reached error frame (1012, service
//     restart): Codex reconnects, and the new socket is authenticated by
//     the config now in force, which may no longer know its key.

// reloadedFrame is the error frame of a session whose handler was cleaned
// up.
const reloadedFrame = `{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"websocket_connection_limit_reached","message":"louter: the gateway's configuration was reloaded; reconnect to continue"}}`

// wsEnd is how louter ends a session early: the close frame's code and
// reason, sent after the session's last error frame.
type wsEnd struct {
	code   websocket.StatusCode
	reason string
}

// serveFrames serves the session's frames, in order, until the client
// closes (nil) or louter ends the session (why, its error frame sent).
func (sl *Layer) serveFrames(ctx context.Context, r *http.Request, p translate.Protocol, codec translate.Codec, sess *wsSession, out *wsEventWriter, msgs <-chan []byte) *wsEnd {
	retired := sl.s.retired.Done()
	for {
		select {
		case <-retired:
			return sl.endReloaded(out)
		case data, ok := <-msgs:
			if !ok {
				return nil
			}
			select {
			case <-retired: // both were ready: the reload wins
				return sl.endReloaded(out)
			default:
			}
			fctx, end := sl.recheckClient(ctx, r, p, codec, out)
			if end != nil {
				return end
			}
			sl.serveFrame(fctx, r, sess, out, data)
		}
	}
}

func (sl *Layer) endReloaded(out *wsEventWriter) *wsEnd {
	out.frame([]byte(reloadedFrame))
	return &wsEnd{code: websocket.StatusServiceRestart, reason: "configuration reloaded"}
}

// recheckClient resolves the session's client again (the host's
// reauthenticate). It returns the context the next frame is served in, or,
// the key being no longer valid, the end of the session, its 401 error
// frame sent.
func (sl *Layer) recheckClient(ctx context.Context, r *http.Request, p translate.Protocol, codec translate.Codec, out *wsEventWriter) (context.Context, *wsEnd) {
	if fctx, ok := sl.Reauthenticate(ctx, r, p); ok {
		return fctx, nil
	}
	out.begin()
	_ = httpx.WriteError(out, codec, &translate.Error{Status: http.StatusUnauthorized, Kind: translate.ErrAuthentication, Code: "invalid_api_key",
		Message: "louter: the API key this WebSocket session was opened with is no longer valid (revoked or rotated); reconnect with a valid key"})
	out.end()
	return nil, &wsEnd{code: websocket.StatusPolicyViolation, reason: "the API key is no longer valid"}
}

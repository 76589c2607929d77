package stateful

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// The Responses API over a WebSocket, as Codex speaks it on the path of
// POST /v1/responses (GET with Upgrade: websocket):
//
//   - The client sends response.create frames: a POST body plus
//     "type". Each is served by the ordinary chat path (serveChat), so
//     routing, limits, translation and the store apply as over HTTP;
//     stream is implied (a stream false is ignored, as OpenAI does), and
//     generate false is a prewarm, answered with an empty completed
//     response whose id the next request may continue.
//   - louter answers with the SSE stream's events, one JSON text frame
//     each, no event lines and no [DONE]; an error the HTTP path would
//     answer with a status is a frame {"type":"error","status":N,
//     "error":{...}}.
//   - previous_response_id names a turn of this socket (kept in the
//     session's memory even with store false, bounded by
//     websocket_max_bytes, and all sockets' by websocket_total_bytes:
//     responses_ws_budget.go) or a stored one of the same client.
//   - A client has at most websocket_max_per_client sockets open; one
//     more upgrade gets 429. Each frame is authenticated again: a key
//     revoked since ends the session (responses_ws_recheck.go).
//   - Turns run one at a time, in order; frames that arrive meanwhile
//     wait. louter pings every websocket_ping_interval (30s) and closes
//     a socket whose pong does not come within it; it ends a session at
//     websocket_max_age with a websocket_connection_limit_reached error,
//     which Codex answers by reconnecting. A socket that closes cancels
//     its turn's backend request.
//
// With websocket off (or stored responses disabled), the upgrade gets 426
// Upgrade Required: the one status that makes Codex use HTTP at once
// instead of retrying the socket.

// wsSession is one socket's state.
type wsSession struct {
	mem *socketMemory // the socket's own turns (responses_ws_budget.go)
}

type socketCtxKey struct{}

// socketOf returns the session a request came on, or nil.
func socketOf(r *http.Request) *wsSession {
	s, _ := r.Context().Value(socketCtxKey{}).(*wsSession)
	return s
}

// defaultPingInterval is websocket_ping_interval's default.
const defaultPingInterval = 30 * time.Second

// wsRefusal is the 426's body.
const wsRefusal = `{"error":{"type":"invalid_request_error","code":"websocket_disabled","message":"Responses WebSocket is disabled on this gateway; use HTTP POST /v1/responses"}}`

// serveWebSocket serves a Responses WebSocket session, or refuses it.
func (sl *Layer) serveWebSocket(w http.ResponseWriter, r *http.Request, p translate.Protocol, codec translate.Codec) error {
	s := sl.s
	if s == nil || !s.websocket {
		w.Header().Set("Connection", "close")
		return httpx.WriteJSON(w, http.StatusUpgradeRequired, []byte(wsRefusal))
	}
	mem, open := wsSockets.open(sl.stateOwner(r), s.wsMaxOpen, s.wsBytes, s.wsTotal, s.wsMaxAge) // responses_ws_budget.go
	if mem == nil {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusTooManyRequests, Kind: translate.ErrRateLimit, Code: "websocket_connection_limit_reached",
			Message: fmt.Sprintf("louter: this client has %d Responses WebSocket sessions open, the most websocket_max_per_client allows; close one, or use HTTP POST /v1/responses", open)})
	}
	defer mem.close()
	mem.onDrop = s.droppedSocketTurns
	// The server's read and write timeouts are for requests, not for a
	// session that lasts up to websocket_max_age: the deadlines they set
	// on the connection would outlive the hijack.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil // Accept answered the client
	}
	c.SetReadLimit(sl.MaxBody)
	sess := &wsSession{mem: mem}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), socketCtxKey{}, sess), s.wsMaxAge)
	defer cancel()

	// The reader: frames to msgs, in order; it also reads the pongs.
	msgs := make(chan []byte, 4)
	go func() {
		defer close(msgs)
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				cancel() // the client went away: its turn's backend request too
				return
			}
			if typ != websocket.MessageText {
				data = nil // answered as an error below
			}
			select {
			case msgs <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	if s.wsPing > 0 {
		go sl.keepAlive(ctx, cancel, c, s.wsPing)
	}

	out := &wsEventWriter{send: func(p []byte) error { return c.Write(ctx, websocket.MessageText, p) }}
	if end := sl.serveFrames(ctx, r, p, codec, sess, out, msgs); end != nil { // responses_ws_recheck.go
		_ = c.Close(end.code, end.reason)
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
		// The session's age is up: say so, so the client reconnects.
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.Write(wctx, websocket.MessageText, []byte(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"websocket_connection_limit_reached","message":"louter: the WebSocket session reached its maximum age (websocket_max_age); reconnect to continue"}}`))
		wcancel()
		_ = c.Close(websocket.StatusNormalClosure, "session age limit")
		return nil
	}
	_ = c.CloseNow()
	return nil
}

// keepAlive pings the socket every interval until ctx is done. A ping
// whose pong does not come within the interval (the reader reads the
// pongs) ends the session: cancel stops its turn and closes the socket.
func (sl *Layer) keepAlive(ctx context.Context, cancel context.CancelFunc, c *websocket.Conn, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, pcancel := context.WithTimeout(ctx, interval)
			err := c.Ping(pctx)
			pcancel()
			if err != nil {
				if ctx.Err() == nil {
					sl.Logger.Debug("closing a WebSocket whose client stopped answering pings", zap.Duration("websocket_ping_interval", interval), zap.Error(err))
				}
				cancel()
				return
			}
		}
	}
}

// serveFrame serves one client frame.
func (sl *Layer) serveFrame(ctx context.Context, r *http.Request, sess *wsSession, out *wsEventWriter, data []byte) {
	if data == nil || !gjson.ValidBytes(data) {
		out.errorFrame(http.StatusBadRequest, "invalid_request_error", "louter: a frame must be a JSON text message")
		return
	}
	switch typ := gjson.GetBytes(data, "type").Str; typ {
	case "response.create":
	case "response.processed":
		return // an acknowledgement some Codex builds send
	default:
		out.errorFrame(http.StatusBadRequest, "invalid_request_error", "louter: unsupported message type "+strconv.Quote(typ)+"; send response.create")
		return
	}
	if sid := gjson.GetBytes(data, "stream_id"); sid.Exists() && sid.Type != gjson.Null && sid.Str != "" {
		// Lanes are not served: a frame's lane would run in turn with
		// the others. Codex 0.169 sends no stream_id (its frames are
		// recorded by e2e's TestCodexWebSocketFrames). The refusal echoes
		// the lane, as every event of a lane does, so a client waiting on
		// that lane gets it.
		b := errorFrameJSON(http.StatusBadRequest, "invalid_request_error", "louter: stream_id: lanes are not supported; this socket runs one response at a time, in order; send response.create without stream_id, or open another socket")
		b, _ = sjson.SetBytes(b, "stream_id", sid.Str)
		out.frame(b)
		return
	}
	body, _ := sjson.DeleteBytes(data, "type")
	body, _ = sjson.DeleteBytes(body, "client_metadata")
	if gjson.GetBytes(body, "generate").Type == gjson.False {
		sl.prewarm(ctx, r, sess, out, body)
		return
	}
	body, _ = sjson.DeleteBytes(body, "generate")
	body, _ = sjson.SetBytes(body, "stream", true)

	r2 := r.Clone(ctx)
	r2.Method = http.MethodPost
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	for _, h := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Content-Encoding"} {
		r2.Header.Del(h)
	}
	r2.Header.Set("Content-Type", "application/json")
	out.begin()
	if err := sl.Chat(out, r2); err != nil {
		sl.Logger.Debug("websocket turn failed", zap.Error(err))
	}
	out.end()
}

// prewarm answers a response.create with generate false: an empty
// completed response, kept on the socket so the next turn may continue it.
func (sl *Layer) prewarm(ctx context.Context, r *http.Request, sess *wsSession, out *wsEventWriter, body []byte) {
	id := state.NewID("resp_")
	model := gjson.GetBytes(body, "model").Str
	prev := gjson.GetBytes(body, "previous_response_id").Str
	echo := []byte("null")
	if prev != "" {
		echo, _ = json.Marshal(prev)
	}
	obj := []byte(`{"id":` + strconv.Quote(id) + `,"object":"response","created_at":` + strconv.FormatInt(time.Now().Unix(), 10) +
		`,"status":"completed","model":` + strconv.Quote(model) + `,"output":[],"previous_response_id":` + string(echo) +
		`,"store":` + strconv.FormatBool(gjson.GetBytes(body, "store").Type != gjson.False) + `,"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`)
	data, _ := jsonTurn("", inputItems(gjson.GetBytes(body, "input")), obj)
	_ = sess.mem.Put(ctx, state.Record{ID: id, Owner: sl.stateOwner(r), Previous: prev, Created: time.Now(), Data: data})
	inProgress, _ := sjson.SetBytes(obj, "status", "in_progress")
	out.frame(append(append([]byte(`{"type":"response.created","sequence_number":0,"response":`), inProgress...), '}'))
	out.frame(append(append([]byte(`{"type":"response.completed","sequence_number":1,"response":`), obj...), '}'))
}

// wsEventWriter is the http.ResponseWriter a socket's turns are served
// into: each SSE data line goes out as one text frame; an answer that is
// not a stream (an error) goes out as an error frame. It keeps one line at
// a time, reused from turn to turn, so a session's memory does not grow
// with its events.
type wsEventWriter struct {
	send   func(p []byte) error // writes one text frame
	header http.Header
	status int
	sse    bool
	line   []byte
	body   []byte // a non-stream answer, bounded
	failed bool   // a write to the socket failed
}

func (w *wsEventWriter) begin() {
	w.header, w.status, w.sse = http.Header{}, 0, false
	w.line, w.body = w.line[:0], w.body[:0]
}

func (w *wsEventWriter) Header() http.Header { return w.header }

func (w *wsEventWriter) WriteHeader(status int) {
	if w.status != 0 || status < 200 {
		return
	}
	w.status = status
	w.sse = status == http.StatusOK && bytes.HasPrefix([]byte(w.header.Get("Content-Type")), []byte("text/event-stream"))
}

func (w *wsEventWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sse {
		if len(w.body)+len(p) <= 1<<20 {
			w.body = append(w.body, p...)
		}
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			break
		}
		w.line = append(w.line, p[:i]...)
		w.endLine()
		p = p[i+1:]
	}
	if w.failed {
		return n, errors.New("louter: the WebSocket is closed")
	}
	return n, nil
}

func (w *wsEventWriter) endLine() {
	line := bytes.TrimSuffix(w.line, []byte("\r"))
	if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		data = bytes.TrimSpace(data)
		if len(data) > 0 && !bytes.Equal(data, []byte("[DONE]")) {
			w.frame(data)
		}
	}
	if cap(w.line) > 64<<10 {
		w.line = nil
	} else {
		w.line = w.line[:0]
	}
}

// Flush implements http.Flusher: every frame is sent as it is complete.
func (w *wsEventWriter) Flush() {}

// end sends what a turn that was not a stream answered: an error frame.
func (w *wsEventWriter) end() {
	if w.sse {
		return
	}
	status := w.status
	if status == 0 {
		status = http.StatusBadGateway
	}
	errObj := gjson.GetBytes(w.body, "error")
	if !errObj.IsObject() {
		w.errorFrame(status, "server_error", "louter: the turn got no stream")
		return
	}
	b := []byte(`{"type":"error","status":`)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"error":`...)
	b = append(b, errObj.Raw...)
	w.frame(append(b, '}'))
}

func (w *wsEventWriter) errorFrame(status int, typ, msg string) {
	w.frame(errorFrameJSON(status, typ, msg))
}

// errorFrameJSON is an error frame: {"type":"error","status":N,"error":{…}}.
func errorFrameJSON(status int, typ, msg string) []byte {
	b := []byte(`{"type":"error","status":`)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"error":{"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, msg)
	return append(b, "}}"...)
}

func (w *wsEventWriter) frame(p []byte) {
	if w.failed {
		return
	}
	if err := w.send(p); err != nil {
		w.failed = true
	}
}

// jsonTurn encodes a stored turn.
func jsonTurn(backend string, input, response []byte) ([]byte, error) {
	return json.Marshal(storedTurn{Backend: backend, Input: input, Response: response})
}

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
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// Background responses (background: true on POST /v1/responses), on every
// backend:
//
//   - the request is checked as any other, then answered at once with the
//     response object in status "queued", stored under a new id;
//   - the turn runs detached from the client's connection: the same
//     request without background, through serveChat (routing, limits,
//     fallbacks, translation, the store) in a fresh request context of its
//     own (Caddy's replacer and variables are not the finished request's),
//     bounded by background_timeout. Its answer is stored under the id the
//     client got, in place of the placeholder; a turn that fails is stored
//     "failed" with its error;
//   - GET /v1/responses/{id} polls it; POST /v1/responses/{id}/cancel
//     cancels the backend request (on the instance running it) and stores
//     the response "cancelled"; a result that arrives after that is
//     dropped;
//   - a client runs at most background_max_per_client turns at once, and
//     the instance at most background_max; past them, 429.
//
// A Responses backend gets the turn as an ordinary request (louter runs it
// in the background, not the backend). stream with background (a stream
// one may resume) and background over the WebSocket are refused.

// bgIDKey carries a background turn's id into its detached request.
type bgIDKey struct{}

// backgroundRuns is what one process runs in the background: the cancel
// function of each running turn and the count per owner.
type backgroundRuns struct {
	mu      sync.Mutex
	cancels map[string]context.CancelFunc // owner + "\x00" + id
	running map[string]int                // per owner
}

// start registers a turn, unless owner already runs max or the process
// total.
func (b *backgroundRuns) start(owner, id string, max, total int, cancel context.CancelFunc) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[owner] >= max || len(b.cancels) >= total {
		return false
	}
	if b.cancels == nil {
		b.cancels, b.running = map[string]context.CancelFunc{}, map[string]int{}
	}
	b.cancels[owner+"\x00"+id] = cancel
	b.running[owner]++
	return true
}

func (b *backgroundRuns) done(owner, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.cancels, owner+"\x00"+id)
	if b.running[owner]--; b.running[owner] <= 0 {
		delete(b.running, owner)
	}
}

// cancel cancels a running turn; false when this process runs none of
// that id for owner.
func (b *backgroundRuns) cancel(owner, id string) bool {
	b.mu.Lock()
	c, ok := b.cancels[owner+"\x00"+id]
	b.mu.Unlock()
	if ok {
		c()
	}
	return ok
}

// backgroundCheck refuses what background cannot be combined with; nil
// when the request may run in the background.
func (sl *Layer) backgroundCheck(r *http.Request, body []byte) *translate.Error {
	bad := func(param, msg string) *translate.Error {
		return &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: param, Message: msg}
	}
	switch {
	case sl.s == nil:
		return bad("background", "background: background responses need stored responses, which are disabled on this gateway")
	case socketOf(r) != nil:
		return bad("background", "background is not supported over the WebSocket; send it with POST /v1/responses")
	case gjson.GetBytes(body, "store").Type == gjson.False:
		return bad("store", "background responses must be stored: send store true (or leave it out) with background true")
	case gjson.GetBytes(body, "stream").Type == gjson.True:
		return bad("stream", "louter: background with stream is not supported; send stream false and poll GET /v1/responses/{id}")
	}
	return nil
}

// RunBackground answers a background request with its queued response and
// runs the turn detached. body is the client's, checked by backgroundCheck.
func (sl *Layer) RunBackground(w http.ResponseWriter, r *http.Request, protocol translate.Protocol, codec translate.Codec, body []byte) error {
	s, api := sl.s, sl.API(protocol)
	owner := sl.stateOwner(r)
	id := state.NewID("resp_")
	// What the detached turn would fail on at once is the client's answer
	// now: a malformed body, an unknown model, an unknown predecessor.
	if _, te := translate.ScanTopLevel(protocol, body); te != nil {
		return sl.Reject(w, codec, te)
	}
	res := gjson.GetManyBytes(body, "model", api.prev, "input", "conversation")
	b, ok := sl.Route(res[0].Str)
	if !ok {
		return sl.Reject(w, codec, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: no backend is configured for model %q", res[0].Str)))
	}
	if res[3].Exists() {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "conversation",
			Message: "louter: background with conversation is not supported; continue with previous_response_id"})
	}
	prev := res[1].Str
	passthrough := b.PassesThrough(protocol)
	if prev != "" {
		if _, err := s.turn(r.Context(), owner, prev, api); err != nil {
			if !errors.Is(err, state.ErrNotFound) {
				return sl.Reject(w, codec, storeUnavailable(err))
			}
			// A Responses backend may know ids louter does not, when it
			// knows the client (delete.go).
			fwd := false
			if passthrough {
				if fwd, err = s.forwardsUnknown(r.Context(), r, owner, prev, b); err != nil {
					return sl.Reject(w, codec, storeUnavailable(err))
				}
			}
			if !fwd {
				return sl.Reject(w, codec, api.notFound(prev))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(r.Context()), bgIDKey{}, id), s.bgTimeout)
	if !s.bg.start(owner, id, s.bgMax, s.bgTotal, cancel) {
		cancel()
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusTooManyRequests, Kind: translate.ErrRateLimit, Param: "background",
			Message: fmt.Sprintf("louter: too many background responses run at once (at most %d per client, background_max_per_client, and %d in all, background_max); wait for one to end", s.bgMax, s.bgTotal)})
	}
	queued := []byte(`{"id":` + strconv.Quote(id) + `,"object":"response","created_at":` + strconv.FormatInt(time.Now().Unix(), 10) +
		`,"status":"queued","background":true,"error":null,"incomplete_details":null,"model":` + strconv.Quote(res[0].Str) +
		`,"output":[],"previous_response_id":null,"store":true,"usage":null}`)
	if prev != "" {
		queued, _ = sjson.SetBytes(queued, "previous_response_id", prev)
	}
	input := inputItems(res[2])
	put := func(ctx context.Context, obj []byte) error {
		data, err := json.Marshal(storedTurn{Input: input, Response: obj})
		if err != nil {
			return err
		}
		sctx, scancel := saveContext(ctx)
		defer scancel()
		return s.store.Put(sctx, state.Record{ID: id, Owner: owner, Previous: prev, Created: time.Now(), Data: data})
	}
	if err := put(r.Context(), queued); err != nil {
		s.bg.done(owner, id)
		cancel()
		return sl.Reject(w, codec, storeUnavailable(err))
	}

	detached, _ := sjson.DeleteBytes(append([]byte(nil), body...), "background")
	r2 := r.Clone(ctx)
	r2.Body = io.NopCloser(bytes.NewReader(detached))
	r2.ContentLength = int64(len(detached))
	r2.Header.Del("Content-Encoding")
	r2.Header.Set("Content-Length", strconv.Itoa(len(detached)))
	out := &backgroundWriter{header: http.Header{}}
	if srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok {
		// Caddy's per-request state (the replacer, the variables
		// reverse_proxy writes, the log fields) is the finished
		// request's: the detached turn gets its own.
		r2 = caddyhttp.PrepareRequest(r2, caddy.NewReplacer(), out, srv)
	}
	go func() {
		defer s.bg.done(owner, id)
		defer cancel()
		if ctx.Err() == nil && !s.cancelledBackground(ctx, owner, id, api) {
			inProgress, _ := sjson.SetBytes(queued, "status", "in_progress")
			_ = put(ctx, inProgress)
		}
		if err := sl.Chat(out, r2); err != nil {
			sl.Logger.Debug("background response failed", zap.String("id", id), zap.Error(err))
		}
		// The turn's answer was stored under id (Turn.Save); if it
		// was not, the turn failed or was cancelled.
		st, err := s.turn(context.WithoutCancel(ctx), owner, id, api)
		if err != nil {
			return
		}
		switch gjson.GetBytes(st.Response, "status").Str {
		case "queued", "in_progress":
		default:
			return
		}
		var end []byte
		if errors.Is(ctx.Err(), context.Canceled) || s.cancelledBackground(context.WithoutCancel(ctx), owner, id, api) {
			// Only a cancel cancels ctx before this point, or leaves its
			// marker (from another instance): its status was overwritten
			// by the in_progress one above, in a race.
			end, _ = sjson.SetBytes(st.Response, "status", "cancelled")
		} else {
			end, _ = sjson.SetBytes(st.Response, "status", "failed")
			end, _ = sjson.SetRawBytes(end, "error", out.errorObject(ctx.Err()))
		}
		_ = put(context.WithoutCancel(ctx), end)
	}()
	return httpx.WriteJSON(w, http.StatusOK, queued)
}

// cancelBackground answers POST /v1/responses/{id}/cancel.
func (sl *Layer) cancelBackground(w http.ResponseWriter, r *http.Request, codec translate.Codec, api *API, id string) error {
	s, owner, ctx := sl.s, sl.stateOwner(r), r.Context()
	rec, st, err := s.record(ctx, owner, id, api)
	if err != nil {
		return sl.Reject(w, codec, storedError(err, id))
	}
	if gjson.GetBytes(st.Response, "background").Type != gjson.True {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest,
			Message: fmt.Sprintf("Only background responses can be cancelled; response '%s' was not created with background true.", id)})
	}
	switch gjson.GetBytes(st.Response, "status").Str {
	case "queued", "in_progress":
	default:
		return httpx.WriteJSON(w, http.StatusOK, st.Response) // ended: cancelling again changes nothing
	}
	// The marker first: the running turn may overwrite the status below
	// (its in_progress races this write, on another instance), never the
	// marker, which it reads before it stores its result and at its end.
	if err := s.store.Put(ctx, state.Record{ID: cancelledPrefix + id, Owner: owner, Created: time.Now()}); err != nil {
		return sl.Reject(w, codec, storeUnavailable(err))
	}
	obj, _ := sjson.SetBytes(st.Response, "status", "cancelled")
	data, _ := json.Marshal(storedTurn{Input: st.Input, Response: obj})
	rec.Data, rec.Created = data, time.Now()
	if err := s.store.Put(ctx, rec); err != nil {
		return sl.Reject(w, codec, storeUnavailable(err))
	}
	s.bg.cancel(owner, id) // on the instance running it; elsewhere its result is dropped
	return httpx.WriteJSON(w, http.StatusOK, obj)
}

// cancelledPrefix starts the id of a cancelled background turn's marker:
// no data, the owner's, with the store's TTL.
const cancelledPrefix = "cancelled:"

// backgroundID is the id of the background turn r runs, or "".
func backgroundID(r *http.Request) string {
	id, _ := r.Context().Value(bgIDKey{}).(string)
	return id
}

// cancelledBackground reports whether the background turn id of owner has
// been cancelled or deleted (its result is then not stored: it would bring
// a deleted turn back).
func (s *stateStore) cancelledBackground(ctx context.Context, owner, id string, api *API) bool {
	if _, err := s.store.Get(ctx, owner, cancelledPrefix+id); err == nil {
		return true
	}
	st, err := s.turn(ctx, owner, id, api)
	if errors.Is(err, state.ErrNotFound) {
		return s.deletedTurn(ctx, owner, id)
	}
	return err == nil && gjson.GetBytes(st.Response, "status").Str == "cancelled"
}

// backgroundWriter is the ResponseWriter of a detached turn: the answer
// goes to the store (through the turn's capture); this keeps the status
// and the start of a body that is an error.
type backgroundWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *backgroundWriter) Header() http.Header { return w.header }

func (w *backgroundWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
}

func (w *backgroundWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && len(w.body) < 16<<10 {
		w.body = append(w.body, p[:min(len(p), 16<<10-len(w.body))]...)
	}
	return len(p), nil
}

func (w *backgroundWriter) Flush() {}

// errorObject is the stored response's error: background_timeout's when
// the turn ran past it, else the turn's own, else one saying how it ended.
func (w *backgroundWriter) errorObject(ctxErr error) []byte {
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return []byte(`{"code":"timeout","message":"louter: the background turn ran past background_timeout"}`)
	}
	if e := gjson.GetBytes(w.body, "error"); e.IsObject() {
		code := e.Get("code").Str
		if code == "" {
			code = e.Get("type").Str
		}
		b, _ := json.Marshal(map[string]string{"code": code, "message": e.Get("message").Str})
		return b
	}
	msg := fmt.Sprintf("louter: the background turn ended with status %d and no response", w.status)
	b, _ := json.Marshal(map[string]string{"code": "server_error", "message": msg})
	return b
}

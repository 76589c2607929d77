package stateful

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// storedTurn is what a record's Data holds: one turn, stored once.
type storedTurn struct {
	// Backend is the backend that answered; its reasoning items go back
	// to it only.
	Backend string `json:"backend"`
	// Kept: the backend kept the turn itself (a Responses backend,
	// passthrough, store true), so a continuation on the same backend
	// may pass previous_response_id to it.
	Kept bool `json:"kept,omitempty"`
	// Held: the backend was sent the turn with store true and answered
	// it under this id (a Responses backend, passthrough, not in the
	// background), so it holds a copy, Kept or not: DELETE deletes it
	// there too (delete.go).
	Held bool `json:"held,omitempty"`
	// Input is this turn's own input items, as the client sent them (the
	// chain's earlier items are in the earlier records).
	Input json.RawMessage `json:"input"`
	// Response is the response object the client got.
	Response json.RawMessage `json:"response"`
}

// convPrefix starts the id of a conversation's record: no data, and the
// conversation's latest response as its predecessor.
const convPrefix = "conv:"

// Turn is one request of a stateful protocol on its way: the body
// with its history put back, and what to keep of its answer.
type Turn struct {
	s       *stateStore
	api     *API
	sock    *wsSession // the WebSocket session the turn came on, or nil
	owner   string
	Body    []byte // the body to serve
	Keep    bool   // store true: keep the answer in the store
	prev    string // the turn it continues, or ""
	conv    string // the conversation it belongs to, or ""
	input   []byte // this turn's items, as the client sent them (a JSON array)
	backend string
	kept    bool // the backend keeps the turn itself
	// passthrough: the backend speaks the client's protocol, and gets
	// store as the client sent it.
	passthrough bool
	// passPrev: previous_response_id goes to the backend, which keeps
	// the chain (a Responses backend, passthrough).
	passPrev bool
	cw       *captureWriter
	// Detach: the request asked for background; RunBackground serves
	// it (background.go), and nothing else of the turn is set.
	Detach bool
	// bgID is the id of the background turn this request runs, or "":
	// its answer is stored under it.
	bgID string
	// echoPass: the answer passes through from a backend that was not
	// given previous_response_id, and says null there (echo.go).
	echoPass bool
	echo     *echoWriter
	// compaction is the item of an inline compaction louter made, which
	// the answer carries first (inline_compact.go).
	compaction []byte
	// Trigger: the input ends with a compaction_trigger, which louter
	// answers with a compaction (compact.go).
	Trigger bool
}

// Continue prepares a request of a stateful protocol: nil when there
// is nothing to do (stored responses off, a stateless request), else the
// turn with the body to serve; an error is the client's answer.
func (sl *Layer) Continue(r *http.Request, p translate.Protocol, api *API, body []byte) (*Turn, *translate.Error) {
	if sl == nil || api == nil {
		return nil, nil // a handler not provisioned; a stateless protocol
	}
	s := sl.s
	if gjson.GetBytes(body, "background").Type == gjson.True {
		if !api.background {
			return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "background",
				Message: "background: louter answers requests while they are open; background turns of this API are not supported"}
		}
		// louter runs the turn itself, detached, on every backend
		// (background.go).
		if te := sl.backgroundCheck(r, body); te != nil {
			return nil, te
		}
		return &Turn{Detach: true}, nil
	}
	if s == nil {
		return nil, nil
	}
	res := gjson.GetManyBytes(body, "model", "store", api.prev, "conversation", "input", "context_management")
	sock := socketOf(r)
	keep := res[1].Type != gjson.False
	prev := ""
	if res[2].Type == gjson.String {
		prev = res[2].Str
	}
	conv := ""
	if api.conversations {
		conv = res[3].Str
		if res[3].IsObject() {
			conv = res[3].Get("id").Str
		}
	}
	compacted := api.compaction && bytes.Contains(body, []byte(`"compaction"`))
	trigger := api.compaction && bytes.Contains(body, []byte(`"`+compactionTriggerType+`"`)) && endsWithCompactionTrigger(res[4])
	if !keep && prev == "" && conv == "" && sock == nil && !compacted && !trigger && !res[5].Exists() {
		return nil, nil // stateless, as Codex over HTTP
	}
	if in := res[4]; in.Exists() && !in.IsArray() && in.Type != gjson.String || !gjson.ValidBytes(body) {
		return nil, nil // the chat path names what is wrong
	}
	b, ok := sl.Route(res[0].Str)
	if !ok {
		return nil, nil // the chat path answers the unknown model
	}
	passthrough := b.PassesThrough(p) // as the handler decides it (caddymodule's scan_deferred.go)
	threshold := 0
	if api.compaction && !passthrough { // a Responses backend compacts itself
		var te *translate.Error
		if threshold, te = compactThreshold(res[5]); te != nil {
			return nil, te
		}
	}
	if prev != "" && conv != "" {
		return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "conversation",
			Message: "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'."}
	}
	t := &Turn{s: s, api: api, sock: sock, owner: sl.stateOwner(r), Keep: keep, prev: prev, backend: b.StateName(), passthrough: passthrough, Body: body, bgID: backgroundID(r),
		Trigger: trigger && !passthrough} // a Responses backend compacts itself
	t.input = api.items(res[4])
	ctx := r.Context()

	var history []byte
	rewrite := !passthrough
	switch {
	case prev != "":
		chain, err := t.chain(ctx, prev)
		switch {
		case errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrChainTooLong):
			if passthrough {
				// The backend's own id, perhaps: it decides, if it
				// knows the client (delete.go).
				fwd, err := s.forwardsUnknown(ctx, r, t.owner, prev, b)
				if err != nil {
					return nil, storeUnavailable(err)
				}
				if fwd {
					t.kept, t.passPrev = keep, true
					break
				}
			}
			if c := s.logger.Check(zap.DebugLevel, "previous response not found"); c != nil {
				c.Write(zap.Bool("websocket", sock != nil))
			}
			if sock != nil && sock.mem.wasDropped() {
				// The same answer, so the client resends as for any
				// unknown id, but saying why.
				e := api.notFound(prev)
				e.Message += " This WebSocket session's turns were dropped when the sessions' turns reached websocket_total_bytes; send the whole conversation."
				return nil, e
			}
			return nil, api.notFound(prev)
		case err != nil:
			return nil, storeUnavailable(err)
		default:
			last := decodeTurn(chain[len(chain)-1].Data)
			if gjson.GetBytes(last.Response, "object").Str != api.object {
				return nil, api.notFound(prev) // another API's turn
			}
			if passthrough && last.Kept && last.Backend == b.StateName() {
				t.kept, t.passPrev = keep, true // the backend has the chain: it continues it
				break
			}
			history = rebuildHistory(chain, b.StateName(), api)
			rewrite = true
			if c := s.logger.Check(zap.DebugLevel, "continuing a stored response"); c != nil {
				c.Write(zap.Int("turns", len(chain)), zap.Bool("websocket", sock != nil), zap.String("backend", b.StateName()))
			}
		}
	case conv != "" && (!passthrough || !b.AuthenticatesClient(r)):
		// louter keeps the conversation, but on a Responses backend that
		// authenticates the client itself, which owns its conversations:
		// under the backend's one key, a conversation there would be
		// every client's (delete.go).
		t.conv, rewrite = conv, true
		ptr, err := t.s.store.Get(ctx, t.owner, convPrefix+conv)
		switch {
		case errors.Is(err, state.ErrNotFound):
			// A new conversation.
		case err != nil:
			return nil, storeUnavailable(err)
		case ptr.Previous != "":
			chain, err := t.chain(ctx, ptr.Previous)
			if err != nil && !errors.Is(err, state.ErrNotFound) {
				return nil, storeUnavailable(err)
			}
			t.prev = ptr.Previous
			history = rebuildHistory(chain, b.StateName(), api)
		}
	default:
		t.kept = passthrough && keep
		rewrite = false
		if !passthrough {
			// Nothing to put back; store is served here, not dropped.
			t.Body, _ = sjson.DeleteBytes(append([]byte(nil), body...), "store")
		}
	}
	t.echoPass = passthrough && !t.passPrev && t.EchoPrevious() != ""
	if rewrite || compacted || threshold > 0 {
		var te *translate.Error
		if t.Body, te = t.rewriteBody(ctx, body, history, passthrough); te != nil {
			return nil, te
		}
	}
	if threshold > 0 && !t.Trigger { // a trigger compacts the whole history anyway
		if te := sl.compactInline(r, t, threshold); te != nil { // inline_compact.go
			return nil, te
		}
	}
	return t, nil
}

// EchoPrevious is the previous_response_id the client's answer echoes: the
// one the request named, not a conversation's latest turn.
func (t *Turn) EchoPrevious() string {
	if t.conv != "" {
		return ""
	}
	return t.prev
}

// chain reads the chain ending at id: the socket's own turns first, then
// the store.
func (t *Turn) chain(ctx context.Context, id string) ([]state.Record, error) {
	if t.sock != nil {
		if c, err := t.sock.mem.Chain(ctx, t.owner, id, 0); err == nil {
			// A stored turn the socket remembers may have been deleted
			// since, through another connection.
			if gjson.GetBytes(c[len(c)-1].Data, "response.store").Type == gjson.True && t.s.deletedTurn(ctx, t.owner, id) {
				return nil, state.ErrNotFound
			}
			return c, nil
		}
	}
	c, err := t.s.store.Chain(ctx, t.owner, id, 0)
	if err == nil && len(c) > 0 && bytes.HasPrefix([]byte(c[len(c)-1].ID), []byte(convPrefix)) {
		c = c[:len(c)-1]
	}
	return c, err
}

// previousNotFound is the API's answer to an unknown, expired or foreign
// previous_response_id.
func previousNotFound(id string) *translate.Error {
	return &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "previous_response_id", Code: "previous_response_not_found",
		Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
}

// inputItems is a request's input as an array of items: a string input
// is one user message.
func inputItems(in gjson.Result) []byte {
	switch {
	case in.IsArray():
		return []byte(in.Raw)
	case in.Type == gjson.String:
		// The string as it came (its bytes are the decoder's to check).
		return []byte(`[{"type":"message","role":"user","content":` + in.Raw + `}]`)
	}
	return []byte("[]")
}

// turn reads the stored turn id of owner made through api: a record of
// another API's (an interaction asked for as a response), or one with no
// answer (a compaction's summary, a conversation's pointer), is not found.
func (s *stateStore) turn(ctx context.Context, owner, id string, api *API) (storedTurn, error) {
	_, st, err := s.record(ctx, owner, id, api)
	return st, err
}

// record is turn with the record it was read from, for a caller that
// stores it again changed.
func (s *stateStore) record(ctx context.Context, owner, id string, api *API) (state.Record, storedTurn, error) {
	rec, err := s.store.Get(ctx, owner, id)
	if err != nil {
		return state.Record{}, storedTurn{}, err
	}
	st := decodeTurn(rec.Data)
	if len(st.Response) == 0 || gjson.GetBytes(st.Response, "object").Str != api.object {
		return state.Record{}, storedTurn{}, state.ErrNotFound
	}
	return rec, st, nil
}

// deleteTurn deletes the stored turn id of owner made through api.
func (s *stateStore) deleteTurn(ctx context.Context, owner, id string, api *API) error {
	if _, err := s.turn(ctx, owner, id, api); err != nil {
		return err
	}
	return s.store.Delete(ctx, owner, id)
}

func decodeTurn(data []byte) storedTurn {
	var st storedTurn
	_ = json.Unmarshal(data, &st)
	return st
}

// rebuildHistory is the items of a chain, oldest first: each turn's input
// items, then its output items. A reasoning item (api.private) goes back
// only to the backend that made it: its encrypted content or signature is
// that provider's.
func rebuildHistory(chain []state.Record, backend string, api *API) []byte {
	out := []byte{}
	add := func(raw string) {
		if len(out) > 0 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	for _, rec := range chain {
		if len(rec.Data) == 0 {
			continue
		}
		st := decodeTurn(rec.Data)
		for _, it := range gjson.ParseBytes(st.Input).Array() {
			add(it.Raw)
		}
		for _, it := range gjson.GetBytes(st.Response, api.output).Array() {
			if it.Get("type").Str == api.private && st.Backend != backend {
				continue
			}
			add(it.Raw)
		}
	}
	return out
}

// rewriteBody puts history in front of the body's input, turns louter's
// compaction items back into their summaries, and takes out the members
// louter has served (previous_response_id, conversation, and for a
// translated backend store).
func (t *Turn) rewriteBody(ctx context.Context, body, history []byte, passthrough bool) ([]byte, *translate.Error) {
	items := make([]byte, 0, len(history)+len(t.input)+2)
	items = append(items, '[')
	items = append(items, history...)
	if cur := bytes.TrimSpace(t.input); len(cur) > 2 {
		if len(history) > 0 {
			items = append(items, ',')
		}
		items = append(items, cur[1:len(cur)-1]...)
	}
	items = append(items, ']')
	if t.api.compaction {
		var te *translate.Error
		if items, te = t.expandCompactions(ctx, items, passthrough); te != nil { // compact.go
			return nil, te
		}
	}
	out, err := sjson.SetRawBytes(append([]byte(nil), body...), "input", items)
	if err != nil {
		return nil, translate.NewError(http.StatusBadRequest, "louter: the request body could not be rewritten: "+err.Error())
	}
	if !t.passPrev {
		out, _ = sjson.DeleteBytes(out, t.api.prev)
	}
	if t.api.conversations && (!passthrough || t.conv != "") { // louter keeps the conversation
		out, _ = sjson.DeleteBytes(out, "conversation")
	}
	if !passthrough {
		out, _ = sjson.DeleteBytes(out, "store")
	}
	return out, nil
}

// Capture wraps the client's writer to see the response object it gets;
// the turn is saved as soon as it is whole, before the client has all of
// it (and can continue it), else when the request ends (save).
func (t *Turn) Capture(ctx context.Context, w http.ResponseWriter) http.ResponseWriter {
	t.cw = &captureWriter{ResponseWriter: w, flusher: httpx.NewFlusher(w), object: t.api.object, complete: func() { t.Save(ctx) }}
	if t.api.assembler != nil {
		t.cw.asm = t.api.assembler()
	}
	var w2 http.ResponseWriter = t.cw
	if t.compaction != nil {
		w2 = &compactionWriter{ResponseWriter: w2, flusher: httpx.NewFlusher(w2), item: t.compaction}
	}
	if t.echoPass {
		t.echo = newEchoWriter(w2, t.api.prev, t.prev)
		w2 = t.echo
	}
	return w2
}

// Finish ends the answer: what a writer of the turn held back goes out.
func (t *Turn) Finish() {
	if t.echo != nil {
		t.echo.finish()
	}
}

// Save keeps the answered turn: in the store when store was true, in the
// WebSocket session's own memory when it came on one.
func (t *Turn) Save(ctx context.Context) {
	if t.cw == nil {
		return
	}
	obj := t.cw.response()
	t.cw.release()
	t.cw = nil
	if obj == nil {
		return
	}
	id := gjson.GetBytes(obj, "id").Str
	switch gjson.GetBytes(obj, "status").Str {
	case "completed", "incomplete", "requires_action":
	default:
		return // a failed response continues nothing
	}
	if id == "" {
		return
	}
	ctx, cancel := saveContext(ctx)
	defer cancel()
	if t.bgID != "" {
		// A background turn's answer takes the id its client got, unless
		// the client has cancelled it meanwhile.
		if t.s.cancelledBackground(ctx, t.owner, t.bgID, t.api) {
			return
		}
		id = t.bgID
		t.kept = false // the backend knows the turn by its own id, not this one
		obj, _ = sjson.SetBytes(obj, "id", id)
		obj, _ = sjson.SetBytes(obj, "background", true)
	}
	if t.prev != "" {
		obj, _ = sjson.SetBytes(obj, t.api.prev, t.prev)
	}
	obj, _ = sjson.SetBytes(obj, "store", t.Keep)
	held := t.passthrough && t.Keep && t.bgID == ""
	data, err := json.Marshal(storedTurn{Backend: t.backend, Kept: t.kept, Held: held, Input: t.input, Response: obj})
	if err != nil {
		return
	}
	rec := state.Record{ID: id, Owner: t.owner, Previous: t.prev, Created: time.Now(), Data: data}
	if t.sock != nil {
		_ = t.sock.mem.Put(ctx, rec)
	}
	if !t.Keep {
		return
	}
	if err := t.s.store.Put(ctx, rec); err != nil {
		if errors.Is(err, limits.ErrStoreDown) {
			return // the circuit breaker logged the outage once
		}
		t.s.logger.Warn("storing a response failed: it cannot be continued by previous_response_id", zap.Error(err))
		return
	}
	if t.conv != "" {
		if err := t.s.store.Put(ctx, state.Record{ID: convPrefix + t.conv, Owner: t.owner, Previous: id, Created: time.Now()}); err != nil {
			t.s.logger.Warn("storing a conversation failed", zap.Error(err))
		}
	}
}

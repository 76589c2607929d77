package stateful

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// Which response ids a Responses backend (passthrough) may be handed, and
// what DELETE does to a turn the backend holds too.
//
//   - A Responses backend keeps turns of its own, under the credential it
//     was called with. With the backend's one api_key that is every
//     client's: an id louter does not hold for this client goes to the
//     backend only when the backend authenticates the client itself
//     (pass_client_auth, the client presenting a credential), so that the
//     backend's own isolation answers for it. Otherwise it is the API's
//     not-found, as an id that never existed.
//   - DELETE leaves a tombstone, a record of the same owner under
//     deletedPrefix+id with the store's TTL and bounds, before the turn
//     goes: an id louter no longer holds is then not mistaken for one of
//     the backend's, on this instance or on another sharing the store.
//   - A conversation likewise: under the backend's own key louter keeps
//     it, as on any other backend (turn.go).
//   - A turn the backend holds (storedTurn.Held or Kept) is deleted there
//     too, through the backend's upstream with its credentials, as louter
//     calls it for a chat request. The local deletion holds whatever the
//     backend answers; a failure is logged.

// deletedPrefix starts the id of a deleted turn's tombstone: no data, the
// owner's, for as long as a record lives.
const deletedPrefix = "deleted:"

// backendDeleteTimeout bounds the DELETE sent to a backend.
const backendDeleteTimeout = 10 * time.Second

// deleteStoredResponse answers DELETE /v1/responses/{id}.
func (sl *Layer) deleteStoredResponse(w http.ResponseWriter, r *http.Request, codec translate.Codec, api *API, id string) error {
	s, owner, ctx := sl.s, sl.stateOwner(r), r.Context()
	st, err := s.turn(ctx, owner, id, api)
	if err != nil {
		return sl.Reject(w, codec, storedError(err, id))
	}
	// The tombstone first: there is no moment at which the id is neither
	// held nor known to be deleted.
	if err := s.store.Put(ctx, state.Record{ID: deletedPrefix + id, Owner: owner, Created: time.Now()}); err != nil {
		return sl.Reject(w, codec, storeUnavailable(err))
	}
	if err := s.store.Delete(ctx, owner, id); err != nil {
		return sl.Reject(w, codec, storedError(err, id))
	}
	s.bg.cancel(owner, id) // a background turn still running here: its result has nowhere to go
	if st.Held || st.Kept {
		sl.deleteAtBackend(r, api, st.Backend, id)
	}
	return httpx.WriteJSON(w, http.StatusOK, fmt.Appendf(nil, `{"id":%s,"object":"response","deleted":true}`, strconv.Quote(id)))
}

// deleteAtBackend sends DELETE {base_path}/responses/{id} to the backend
// that holds the turn (Backend.DeleteStored). It waits for the answer
// (bounded), so that a continuation sent after the client's DELETE was
// answered finds the backend's copy gone too. api is the turn's API: a
// backend whose row serves another (the configuration changed since) is
// not asked.
func (sl *Layer) deleteAtBackend(r *http.Request, api *API, backend, id string) {
	b, ok := sl.Backend(backend)
	if !ok || b.StatefulAPI() != api {
		return // the configuration changed since: nothing to address
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), backendDeleteTimeout)
	defer cancel()
	status, err := b.DeleteStored(ctx, r, id) // the host's (caddymodule's stateful_host.go)
	switch {
	case err != nil:
		sl.Logger.Warn("deleting a response at its backend failed; louter's copy is deleted", zap.String("backend", backend), zap.String("id", id), zap.Error(err))
	case status == http.StatusNotFound:
		// Gone there already (expired, or deleted by another path).
		sl.Logger.Debug("the backend no longer held the deleted response", zap.String("backend", backend), zap.String("id", id))
	case status/100 != 2:
		// The body is not logged: an error body may echo the key.
		sl.Logger.Warn("deleting a response at its backend failed; louter's copy is deleted", zap.String("backend", backend), zap.String("id", id), zap.Int("status", status))
	}
}

// forwardsUnknown reports whether a continuation of id, which louter does
// not hold as a whole chain for owner, may go to the Responses backend b
// as one of the backend's own ids: only when b authenticates the client
// itself, and id is neither a turn of owner's (whose chain broke: a turn
// of it deleted, expired or evicted) nor one owner deleted.
func (s *stateStore) forwardsUnknown(ctx context.Context, r *http.Request, owner, id string, b Backend) (bool, error) {
	if !b.AuthenticatesClient(r) {
		return false, nil
	}
	for _, k := range []string{id, deletedPrefix + id} {
		_, err := s.store.Get(ctx, owner, k)
		switch {
		case err == nil:
			return false, nil
		case !errors.Is(err, state.ErrNotFound):
			return false, err
		}
	}
	return true, nil
}

// deletedTurn reports whether owner deleted the turn id (its tombstone is
// still held).
func (s *stateStore) deletedTurn(ctx context.Context, owner, id string) bool {
	_, err := s.store.Get(ctx, owner, deletedPrefix+id)
	return err == nil
}

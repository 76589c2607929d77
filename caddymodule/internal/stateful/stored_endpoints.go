package stateful

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// serveStoredResponse answers GET and DELETE /v1/responses/{id} and GET
// /v1/responses/{id}/input_items from the store, for the client that
// stored the response only.
func (sl *Layer) serveStoredResponse(w http.ResponseWriter, r *http.Request, codec translate.Codec, api *API, rest string) error {
	id, sub, _ := strings.Cut(rest, "/")
	want := http.MethodGet
	switch {
	case sub == "" && r.Method == http.MethodDelete:
		want = http.MethodDelete
	case sub == "" || sub == "input_items":
	case sub == "cancel" && api.background:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			return sl.Reject(w, codec, &translate.Error{Status: http.StatusMethodNotAllowed, Kind: translate.ErrInvalidRequest,
				Message: fmt.Sprintf("louter: %s is not allowed on /v1/responses/{id}/cancel; use POST", r.Method)})
		}
		return sl.cancelBackground(w, r, codec, api, id) // background.go
	default:
		return sl.Reject(w, codec, translate.NewError(http.StatusNotFound, fmt.Sprintf("louter: /v1/responses/%s/%s is not an endpoint louter serves", id, sub)))
	}
	if !httpx.MethodAllowed(r.Method, want) {
		allow := "GET, HEAD, DELETE"
		if sub != "" {
			allow = "GET, HEAD"
		}
		w.Header().Set("Allow", allow)
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusMethodNotAllowed, Kind: translate.ErrInvalidRequest,
			Message: fmt.Sprintf("louter: %s is not allowed on /v1/responses/{id}", r.Method)})
	}
	owner, ctx := sl.stateOwner(r), r.Context()
	if want == http.MethodDelete {
		return sl.deleteStoredResponse(w, r, codec, api, id) // delete.go
	}
	st, err := sl.s.turn(ctx, owner, id, api)
	if err != nil {
		return sl.Reject(w, codec, storedError(err, id))
	}
	if sub == "" {
		if r.URL.Query().Get("stream") == "true" {
			return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "stream",
				Message: "louter: stream: replaying a background response as a stream is not supported; poll GET /v1/responses/{id}"})
		}
		return httpx.WriteJSON(w, http.StatusOK, st.Response)
	}
	page, te := inputItemsPage(id, st.Input, r)
	if te != nil {
		return sl.Reject(w, codec, te)
	}
	return httpx.WriteJSON(w, http.StatusOK, page)
}

// storedError is the answer to a failed read or deletion: the API's 404,
// or 503 when the store failed.
func storedError(err error, id string) *translate.Error {
	if errors.Is(err, state.ErrNotFound) {
		return &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrInvalidRequest,
			Message: fmt.Sprintf("Response with id '%s' not found.", id)}
	}
	return storeUnavailable(err)
}

// inputItemsPage is a page of a stored turn's input items, as GET
// .../input_items lists them: query after, limit (1-100, default 20) and
// order (asc or desc, the default). Items the client sent without an id
// get a stable one, made from the response's id and the item's place.
func inputItemsPage(respID string, input []byte, r *http.Request) ([]byte, *translate.Error) {
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "limit", Message: "limit must be an integer from 1 to 100"}
		}
		limit = n
	}
	order := q.Get("order")
	if order == "" {
		order = "desc"
	}
	if order != "asc" && order != "desc" {
		return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "order", Message: "order must be asc or desc"}
	}
	items := gjson.ParseBytes(input).Array()
	raws := make([][]byte, len(items))
	ids := make([]string, len(items))
	for i, it := range items {
		raw := []byte(it.Raw)
		id := it.Get("id").Str
		if id == "" {
			id = itemID(respID, i, it)
			raw, _ = sjson.SetBytes(raw, "id", id)
		}
		if it.Get("type").Str == "" && it.Get("role").Exists() {
			raw, _ = sjson.SetBytes(raw, "type", "message")
		}
		raws[i], ids[i] = raw, id
	}
	if order == "desc" {
		for i, j := 0, len(raws)-1; i < j; i, j = i+1, j-1 {
			raws[i], raws[j] = raws[j], raws[i]
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	start := 0
	if after := q.Get("after"); after != "" {
		start = len(ids)
		for i, id := range ids {
			if id == after {
				start = i + 1
				break
			}
		}
	}
	end := min(start+limit, len(raws))
	b := []byte(`{"object":"list","data":[`)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = append(b, raws[i]...)
	}
	b = append(b, `],"first_id":`...)
	b = appendIDOrNull(b, ids, start, end, start)
	b = append(b, `,"last_id":`...)
	b = appendIDOrNull(b, ids, start, end, end-1)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, end < len(raws))
	return append(b, '}'), nil
}

func appendIDOrNull(b []byte, ids []string, start, end, i int) []byte {
	if start >= end {
		return append(b, "null"...)
	}
	return strconv.AppendQuote(b, ids[i])
}

// itemID is the id of a stored input item the client sent without one.
func itemID(respID string, i int, it gjson.Result) string {
	prefix := "msg_"
	switch it.Get("type").Str {
	case "function_call_output":
		prefix = "fco_"
	case "function_call":
		prefix = "fc_"
	case "reasoning":
		prefix = "rs_"
	case "compaction":
		prefix = "cmp_"
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", respID, i))
	return prefix + hex.EncodeToString(h[:12])
}

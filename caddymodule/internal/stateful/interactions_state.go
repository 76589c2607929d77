package stateful

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/translate"
)

// Stored interactions: the Interactions API's state on louter's store
// (stateful.go), the one the Responses API's stored responses use, per
// client, with the same TTL and bounds.
//
//   - store defaults to true: an answered interaction is kept as one
//     turn, its input steps and the Interaction object the client got.
//   - previous_interaction_id puts the chain's steps back in front of the
//     request's input, so any backend gets the whole conversation. The
//     system instruction, tools and generation config are not inherited:
//     the API makes them turn-scoped, and the client sends them again.
//   - Thought steps go back only to the backend that made them: their
//     signatures are that provider's (Gemini's thoughtSignature, an
//     Anthropic signature or redacted data, a Responses backend's
//     encrypted reasoning). Another backend gets the turn without them.
//   - GET /v1beta/interactions/{id} returns the turn's timeline: its input
//     steps, then its output steps; DELETE removes it; POST .../cancel is
//     for background interactions, which louter does not run.
//
// A stream's interaction.completed event carries no steps, so the stored
// object is assembled from the stream's step events as the client reads
// them (interactionsAssembler).

// Interactions is the Interactions API's (the row's stateful).
var Interactions = API{
	path:        "/v1beta/interactions",
	object:      "interaction",
	prev:        "previous_interaction_id",
	output:      "steps",
	private:     "thought",
	items:       interactionsItems,
	notFound:    interactionsNotFound,
	serveStored: (*Layer).serveStoredInteraction,
	assembler:   func() streamAssembler { return &interactionsAssembler{} },
}

// interactionsContentTypes are the content block types of the API; any
// other type in an input list makes it a list of steps.
var interactionsContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "document": true, "video": true}

// interactionsItems is a request's input as a list of steps: a string, a
// content block or a list of content blocks is one user_input step; a list
// of steps is itself.
func interactionsItems(in gjson.Result) []byte {
	wrap := func(content string) []byte {
		return []byte(`[{"type":"user_input","content":` + content + `}]`)
	}
	switch {
	case in.Type == gjson.String:
		return wrap(`[{"type":"text","text":` + in.Raw + `}]`)
	case in.IsObject():
		if interactionsContentTypes[in.Get("type").Str] {
			return wrap("[" + in.Raw + "]")
		}
		return []byte("[" + in.Raw + "]")
	case in.IsArray():
		for _, it := range in.Array() {
			if t := it.Get("type"); t.Type == gjson.String && !interactionsContentTypes[t.Str] {
				return []byte(in.Raw)
			}
		}
		return wrap(in.Raw)
	}
	return []byte("[]")
}

// interactionsNotFound is the answer to a previous_interaction_id the
// client has not stored.
func interactionsNotFound(id string) *translate.Error {
	return &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrNotFound, Code: "not_found", Param: "previous_interaction_id",
		Message: fmt.Sprintf("previous_interaction_id: interaction '%s' not found (it expired, was deleted, was created with store:false or with another key)", id)}
}

// serveStoredInteraction answers GET and DELETE /v1beta/interactions/{id}
// and POST .../{id}/cancel, for the client that stored the interaction
// only.
func (sl *Layer) serveStoredInteraction(w http.ResponseWriter, r *http.Request, codec translate.Codec, api *API, rest string) error {
	id, sub, _ := strings.Cut(rest, "/")
	notFound := func() error {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrNotFound, Code: "not_found",
			Message: fmt.Sprintf("interaction '%s' not found", id)})
	}
	var allow string
	switch {
	case id == "":
		return notFound()
	case sub == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodDelete):
	case sub == "":
		allow = "GET, HEAD, DELETE"
	case sub == "cancel" && r.Method == http.MethodPost:
	case sub == "cancel":
		allow = http.MethodPost
	default:
		return sl.Reject(w, codec, InteractionsUnknownURL(r.Method, r.URL.Path))
	}
	if allow != "" {
		w.Header().Set("Allow", allow)
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusMethodNotAllowed, Kind: translate.ErrInvalidRequest,
			Message: fmt.Sprintf("louter: %s is not allowed on %s/{id}%s", r.Method, api.path, strings.TrimPrefix("/"+sub, "/"))})
	}
	owner, ctx := sl.stateOwner(r), r.Context()
	if r.Method == http.MethodDelete {
		if err := sl.s.deleteTurn(ctx, owner, id, api); err != nil {
			return sl.Reject(w, codec, interactionsStoredError(err, id))
		}
		return httpx.WriteJSON(w, http.StatusOK, []byte("{}"))
	}
	st, err := sl.s.turn(ctx, owner, id, api)
	if err != nil {
		return sl.Reject(w, codec, interactionsStoredError(err, id))
	}
	if sub == "cancel" {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Code: "invalid_request",
			Message: fmt.Sprintf("interaction '%s' is %s: only a background interaction can be cancelled, and louter runs none (it answers each interaction while the request is open)", id, gjson.GetBytes(st.Response, "status").Str)})
	}
	if r.URL.Query().Get("stream") == "true" {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Code: "invalid_request", Param: "stream",
			Message: "stream: a stored interaction is fetched whole; streams are replayed only for background interactions, which louter does not run"})
	}
	// The timeline: this turn's input steps, then its output steps.
	steps := bytes.TrimSpace(st.Input)
	if out := gjson.GetBytes(st.Response, api.output); out.IsArray() && len(out.Array()) > 0 {
		if len(steps) > 2 {
			steps = append(append(append([]byte(nil), steps[:len(steps)-1]...), ','), out.Raw[1:]...)
		} else {
			steps = []byte(out.Raw)
		}
	}
	obj, err := sjson.SetRawBytes(append([]byte(nil), st.Response...), api.output, steps)
	if err != nil {
		return sl.Reject(w, codec, storeUnavailable(err))
	}
	return httpx.WriteJSON(w, http.StatusOK, obj)
}

// interactionsStoredError is the answer to a failed read or deletion of a
// stored interaction: the API's 404, or 503 when the store failed.
func interactionsStoredError(err error, id string) *translate.Error {
	if te := storedError(err, id); te.Status != http.StatusNotFound {
		return te
	}
	return &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrNotFound, Code: "not_found",
		Message: fmt.Sprintf("interaction '%s' not found", id)}
}

// interactionsAssembler builds the Interaction object of a stream, as a
// POST without stream would have answered it, from the data lines the
// client got: the steps from step.start, step.delta and step.stop (one
// step per index), the id, status, model and usage from
// interaction.completed.
type interactionsAssembler struct {
	steps []assembledStep
	final []byte // interaction.completed's interaction
}

// assembledStep is one step being read: its start object, and what its
// deltas added.
type assembledStep struct {
	start         []byte
	text, summary strings.Builder
	args          strings.Builder
	signature     string
	index         int64
}

func (a *interactionsAssembler) data(line []byte) {
	ev := gjson.ParseBytes(line)
	switch ev.Get("event_type").Str {
	case "step.start":
		a.steps = append(a.steps, assembledStep{start: []byte(ev.Get("step").Raw), index: ev.Get("index").Int()})
	case "step.delta":
		s := a.step(ev.Get("index").Int())
		if s == nil {
			return
		}
		d := ev.Get("delta")
		switch d.Get("type").Str {
		case "text":
			s.text.WriteString(d.Get("text").Str)
		case "thought_summary":
			s.summary.WriteString(d.Get("content.text").Str)
		case "thought_signature":
			s.signature += d.Get("signature").Str
		case "arguments_delta":
			if p := d.Get("partial_arguments"); p.Exists() {
				s.args.WriteString(p.Str)
			} else {
				s.args.WriteString(d.Get("arguments").Str)
			}
		}
	case "interaction.completed", "interaction.complete":
		a.final = []byte(ev.Get("interaction").Raw)
	}
}

func (a *interactionsAssembler) done() bool { return len(a.final) > 0 }

// step is the step of index, the latest one with it.
func (a *interactionsAssembler) step(index int64) *assembledStep {
	for i := len(a.steps) - 1; i >= 0; i-- {
		if a.steps[i].index == index {
			return &a.steps[i]
		}
	}
	return nil
}

func (a *interactionsAssembler) object() []byte {
	if len(a.final) == 0 {
		return nil
	}
	steps := []byte{'['}
	for i := range a.steps {
		s := &a.steps[i]
		step := s.start
		switch gjson.GetBytes(step, "type").Str {
		case "model_output":
			if s.text.Len() > 0 {
				step, _ = sjson.SetBytes(step, "content", []map[string]string{{"type": "text", "text": s.text.String()}})
			}
		case "thought":
			if s.signature != "" {
				step, _ = sjson.SetBytes(step, "signature", s.signature)
			}
			if s.summary.Len() > 0 {
				step, _ = sjson.SetBytes(step, "summary", []map[string]string{{"type": "text", "text": s.summary.String()}})
			}
		case "function_call":
			if args := s.args.String(); gjson.Valid(args) && gjson.Parse(args).IsObject() {
				step, _ = sjson.SetRawBytes(step, "arguments", []byte(args))
			}
		}
		if len(steps) > 1 {
			steps = append(steps, ',')
		}
		steps = append(steps, step...)
	}
	steps = append(steps, ']')
	now := time.Now().UTC().Format(time.RFC3339)
	obj := append([]byte(nil), a.final...)
	obj, _ = sjson.SetBytes(obj, "created", now)
	obj, _ = sjson.SetBytes(obj, "updated", now)
	obj, _ = sjson.SetRawBytes(obj, "steps", steps)
	return obj
}

// InteractionsUnknownURL is the Interactions row's 404. A stored
// interaction's paths are answered before (stateful.go), also when
// stored_responses are disabled.
func InteractionsUnknownURL(method, api string) *translate.Error {
	return &translate.Error{Status: http.StatusNotFound, Kind: translate.ErrNotFound, Code: "not_found",
		Message: fmt.Sprintf("louter: %s %s is not an endpoint louter serves", method, api)}
}

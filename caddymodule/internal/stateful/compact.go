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
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

// Compaction, POST /v1/responses/compact, on every backend: louter asks
// the routed model for a summary of the history (an ordinary turn through
// the chat path, so routing, limits, fallbacks and translation apply) and
// answers in the API's shape: the replacement input, which is the
// history's recent user messages followed by a compaction item. The
// item's encrypted_content is not the summary (clients treat it as opaque
// and might send it to OpenAI) but a token, louter_cmp_…, naming a record
// of the client's in the store. A later request carrying the item gets
// the summary back in its place (expandCompactions), on any backend and,
// with redis, any instance; a compaction item louter did not make is
// refused on a backend that could not read it.

// compactTokenPrefix starts the encrypted_content of louter's compaction
// items, and the id of the record holding the summary.
const compactTokenPrefix = "louter_cmp_"

// compactPrompt is the instruction the summary is asked with.
const compactPrompt = "You are compacting this conversation so it can continue in a fresh context. " +
	"Write a concise handoff summary for yourself: the user's goals and constraints, decisions made, " +
	"the current state of the work (files touched, commands run and their results), open problems, " +
	"and the exact next steps. Reply with the summary only."

// keptUserBytes bounds the user messages a compaction keeps verbatim.
const keptUserBytes = 20000

// storedSummary is a compaction record's data.
type storedSummary struct {
	Summary string `json:"summary"`
	// An inline compaction's (inline_compact.go): the kept user
	// messages and the items from the latest user message on, which with
	// the summary replace everything up to the item. Tail is nil for
	// /v1/responses/compact's, whose item stands for the summary alone.
	Kept json.RawMessage `json:"kept,omitempty"`
	Tail json.RawMessage `json:"tail,omitempty"`
}

// expandCompactions replaces each compaction item louter made with its
// summary, as a user message. A compaction item it did not make is left to
// a Responses backend (passthrough), refused for any other.
func (t *Turn) expandCompactions(ctx context.Context, items []byte, passthrough bool) ([]byte, *translate.Error) {
	if !bytes.Contains(items, []byte(`"compaction"`)) {
		return items, nil
	}
	arr := gjson.ParseBytes(items).Array()
	out := make([]byte, 0, len(items))
	out = append(out, '[')
	for i, it := range arr {
		if answeredTrigger(arr, i) {
			// A chain rebuilt through a compaction_trigger's turn
			// (below): its answer, next, stands
			// for everything before it, as /v1/responses/compact's
			// output would, the recent user messages kept.
			out = joinRaw(keptUserMessages(append(out[:len(out):len(out)], ']')))
			out = out[:len(out)-1]
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		if it.Get("type").Str != "compaction" {
			out = append(out, it.Raw...)
			continue
		}
		enc := it.Get("encrypted_content").Str
		if !strings.HasPrefix(enc, compactTokenPrefix) {
			if passthrough {
				out = append(out, it.Raw...)
				continue
			}
			return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: fmt.Sprintf("input[%d]", i),
				Message: fmt.Sprintf("input[%d]: a compaction item louter did not make (encrypted by another server) cannot be read by this model's backend; compact again through louter or send the history", i)}
		}
		rec, err := t.s.store.Get(ctx, t.owner, enc)
		if err != nil {
			if errors.Is(err, state.ErrNotFound) {
				return nil, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: fmt.Sprintf("input[%d]", i),
					Message: fmt.Sprintf("input[%d]: compaction item not found (expired, or made for another client)", i)}
			}
			return nil, storeUnavailable(err)
		}
		var sum storedSummary
		_ = json.Unmarshal(rec.Data, &sum)
		if sum.Tail != nil {
			// Everything up to the item is what it replaced.
			out = sum.replacement(out[:1])
			out = out[:len(out)-1]
			continue
		}
		out = append(out, summaryMessage(sum.Summary)...)
	}
	return append(out, ']'), nil
}

// serveCompact answers POST /v1/responses/compact.
func (sl *Layer) serveCompact(w http.ResponseWriter, r *http.Request, codec translate.Codec) error {
	body, te := sl.ReadBody(r)
	if te != nil {
		return sl.Reject(w, codec, te)
	}
	if !gjson.ValidBytes(body) {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "louter: the request body is not valid JSON"})
	}
	res := gjson.GetManyBytes(body, "model", "input", "instructions", "previous_response_id")
	if res[0].Str == "" {
		return sl.Reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "model", Message: "louter: the request names no model"})
	}
	input := inputItems(res[1])
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimSuffix(r.URL.Path, "/compact")
	r2.URL.RawPath = ""
	c, failed, err := sl.summarize(r2, res[0].Str, res[2], res[3].Str, input, storedSummary{})
	if failed != nil || err != nil {
		return sl.passOn(w, codec, failed, err)
	}
	out := []byte(`{"id":`)
	out = strconv.AppendQuote(out, state.NewID("cmp_"))
	out = append(out, `,"object":"response.compaction","created_at":`...)
	out = strconv.AppendInt(out, time.Now().Unix(), 10)
	out = append(out, `,"output":[`...)
	for _, it := range keptUserMessages(input) {
		out = append(out, it...)
		out = append(out, ',')
	}
	out = append(out, c.item...)
	out = append(out, `],"usage":`...)
	out = append(out, c.usage...)
	out = append(out, '}')
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// summary is a compaction louter made: its item, and the usage of the
// turn that wrote the summary (JSON, or null).
type summary struct {
	item    []byte // {"type":"compaction","id":…,"encrypted_content":"louter_cmp_…"}
	usage   []byte
	summary string
}

// summarize asks the model for a summary of input (SummaryTurn) and
// stores it, with rec's other fields, as a record of the client's. When
// the summary turn was not answered, failed holds its answer, to pass on
// to the client; err is a store failure.
func (sl *Layer) summarize(r *http.Request, model string, instructions gjson.Result, prev string, input []byte, rec storedSummary) (c *summary, failed *bufferWriter, err error) {
	text, usage, failed, err := SummaryTurn(sl.Chat, r, model, instructions, prev, input, "")
	if failed != nil || err != nil {
		return nil, failed, err
	}
	token := state.NewID(compactTokenPrefix)
	rec.Summary = text
	data, _ := json.Marshal(rec)
	ctx, cancel := saveContext(r.Context())
	defer cancel()
	if err := sl.s.store.Put(ctx, state.Record{ID: token, Owner: sl.stateOwner(r), Created: time.Now(), Data: data}); err != nil {
		return nil, nil, err
	}
	c = &summary{usage: usage, summary: rec.Summary}
	c.item = append(c.item, `{"type":"compaction","id":`...)
	c.item = strconv.AppendQuote(c.item, state.NewID("cmp_item_"))
	c.item = append(c.item, `,"encrypted_content":`...)
	c.item = strconv.AppendQuote(c.item, token)
	c.item = append(c.item, '}')
	return c, nil, nil
}

// SummaryTurn asks the model for a summary of input (a JSON array of
// Responses items, after the chain prev names when it is not ""), through
// chat, the chat path, for r (a POST of the Responses API: routing, limits,
// fallbacks and translation apply), following extra (instructions for the
// summary) when not "". It returns the summary and the turn's usage (JSON,
// or null). When the turn was not answered, failed holds its answer.
// Shared by /v1/responses/compact, inline Responses compaction and
// Anthropic's compact_20260112 (caddymodule's compact_edit.go).
func SummaryTurn(chat func(http.ResponseWriter, *http.Request) error, r *http.Request, model string, instructions gjson.Result, prev string, input []byte, extra string) (text string, usage []byte, failed *bufferWriter, err error) {
	// The summary turn: the history, then the request for a summary.
	sub := map[string]any{"model": model, "store": false, "stream": false}
	if instructions.Type == gjson.String {
		sub["instructions"] = instructions.Str
	}
	if prev != "" {
		sub["previous_response_id"] = prev
	}
	ask := compactPrompt
	if extra != "" {
		ask += "\n\n" + extra
	}
	prompt, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": ask})
	trimmed := bytes.TrimSpace(input) // "[...]"
	items := append([]byte(nil), trimmed[:len(trimmed)-1]...)
	if len(gjson.ParseBytes(input).Array()) > 0 {
		items = append(items, ',')
	}
	items = append(append(items, prompt...), ']')
	sub["input"] = json.RawMessage(items)
	subBody, err := json.Marshal(sub)
	if err != nil {
		return "", nil, nil, err
	}

	buf := &bufferWriter{header: http.Header{}}
	r2 := r.Clone(r.Context())
	r2.Method = http.MethodPost
	r2.Body = io.NopCloser(bytes.NewReader(subBody))
	r2.ContentLength = int64(len(subBody))
	r2.Header.Del("Content-Encoding")
	if err := chat(buf, r2); err != nil {
		return "", nil, nil, err
	}
	if buf.status != http.StatusOK {
		return "", nil, buf, nil
	}
	resp := gjson.ParseBytes(buf.body.Bytes())
	var sb strings.Builder
	for _, it := range resp.Get("output").Array() {
		if it.Get("type").Str != "message" {
			continue
		}
		for _, c := range it.Get("content").Array() {
			if c.Get("type").Str == "output_text" {
				sb.WriteString(c.Get("text").Str)
			}
		}
	}
	usage = []byte("null")
	if u := resp.Get("usage"); u.IsObject() {
		usage = []byte(u.Raw)
	}
	return sb.String(), usage, nil, nil
}

// passOn answers with a failed summary turn's answer, or the store's
// failure.
func (sl *Layer) passOn(w http.ResponseWriter, codec translate.Codec, failed *bufferWriter, err error) error {
	if failed == nil {
		var te *translate.Error
		if errors.As(err, &te) {
			return sl.Reject(w, codec, te)
		}
		return sl.Reject(w, codec, storeUnavailable(err))
	}
	for k, v := range failed.header {
		w.Header()[k] = v
	}
	w.WriteHeader(failed.status)
	_, _ = w.Write(failed.body.Bytes())
	return nil
}

// keptUserMessages is the input's user messages a compaction keeps
// verbatim: the latest, up to keptUserBytes, in their order.
func keptUserMessages(input []byte) [][]byte {
	var kept [][]byte
	n := 0
	arr := gjson.ParseBytes(input).Array()
	for i := len(arr) - 1; i >= 0; i-- {
		it := arr[i]
		if it.Get("role").Str != "user" || (it.Get("type").Exists() && it.Get("type").Str != "message") {
			continue
		}
		if n+len(it.Raw) > keptUserBytes && len(kept) > 0 {
			break
		}
		n += len(it.Raw)
		kept = append(kept, []byte(it.Raw))
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept
}

// bufferWriter is an http.ResponseWriter that keeps the answer: the
// summary turn's.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(s int) {
	if b.status == 0 {
		b.status = s
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// Codex's remote compaction (0.169, its built-in provider): when its
// context fills it does not call /v1/responses/compact but sends an
// ordinary create (HTTP, SSE or a WebSocket response.create, store false)
// whose last input item is {"type":"compaction_trigger"}, and requires
// exactly one compaction item in the answer ("remote compaction v2
// expected exactly one compaction output item"). A Responses backend gets
// the request as sent; for any other, louter answers it itself with the
// summariser /v1/responses/compact uses (summarize): the history before
// the trigger is summarised by the routed model, and the answer is a
// completed response whose output is that one compaction item. Its token
// stands for the summary alone, as /v1/responses/compact's does: the
// client keeps the items it wants next to it, and a later request
// carrying it gets the summary in its place (expandCompactions).

// compactionTriggerType is the type of the item that asks for a
// compaction.
const compactionTriggerType = "compaction_trigger"

// endsWithCompactionTrigger reports whether input, a request's input, is
// an array whose last item is a compaction_trigger.
func endsWithCompactionTrigger(input gjson.Result) bool {
	if !input.IsArray() {
		return false
	}
	arr := input.Array()
	return len(arr) > 0 && arr[len(arr)-1].Get("type").Str == compactionTriggerType
}

// ServeCompactionTrigger answers a turn whose input ends with a
// compaction_trigger (t.trigger): the history before it (t.body's input,
// the chain rebuilt and louter's earlier compactions expanded) is
// summarised, and the client gets a response whose output is the one
// compaction item, as JSON or, when the request streams, as the
// Responses events. w is the turn's writer (Turn.Capture), so the
// answer is kept as any turn's is.
func (sl *Layer) ServeCompactionTrigger(w http.ResponseWriter, r *http.Request, t *Turn, codec translate.Codec) error {
	res := gjson.GetManyBytes(t.Body, "model", "input", "instructions", "stream")
	if !endsWithCompactionTrigger(res[1]) {
		// Continue saw it last, and putting the history back
		// keeps it so; never summarise past an item of the client's.
		return sl.Reject(w, codec, translate.NewError(http.StatusInternalServerError, "louter: the compaction_trigger was lost rewriting the request"))
	}
	items := res[1].Array()
	input := joinItems(items[:len(items)-1]) // without the trigger
	c, failed, err := sl.summarize(r, res[0].Str, res[2], "", input, storedSummary{})
	if failed != nil || err != nil {
		return sl.passOn(w, codec, failed, err)
	}
	obj := []byte(`{"id":`)
	obj = strconv.AppendQuote(obj, state.NewID("resp_"))
	obj = append(obj, `,"object":"response","created_at":`...)
	obj = strconv.AppendInt(obj, time.Now().Unix(), 10)
	obj = append(obj, `,"status":"completed","error":null,"incomplete_details":null,"model":`...)
	obj = strconv.AppendQuote(obj, res[0].Str)
	obj = append(obj, `,"output":[`...)
	obj = append(obj, c.item...)
	obj = append(obj, `],"previous_response_id":`...)
	if prev := t.EchoPrevious(); prev != "" {
		obj = strconv.AppendQuote(obj, prev)
	} else {
		obj = append(obj, "null"...)
	}
	obj = append(obj, `,"store":`...)
	obj = strconv.AppendBool(obj, t.Keep)
	obj = append(obj, `,"usage":`...)
	obj = append(obj, c.usage...)
	obj = append(obj, '}')
	if res[3].Type != gjson.True {
		return httpx.WriteJSON(w, http.StatusOK, obj)
	}
	return writeCompactionEvents(w, obj, c.item)
}

// writeCompactionEvents streams a compaction's response obj, whose output
// is item alone, as the Responses API's events.
func writeCompactionEvents(w http.ResponseWriter, obj, item []byte) error {
	start := []byte(`{"id":` + gjson.GetBytes(obj, "id").Raw + `,"object":"response","created_at":` + gjson.GetBytes(obj, "created_at").Raw +
		`,"status":"in_progress","model":` + gjson.GetBytes(obj, "model").Raw + `,"output":[],"usage":null}`)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var b []byte
	for i, ev := range []struct {
		typ, key string
		val      []byte
	}{
		{"response.created", "response", start},
		{"response.in_progress", "response", start},
		{"response.output_item.added", "item", item},
		{"response.output_item.done", "item", item},
		{"response.completed", "response", obj},
	} {
		index := ""
		if ev.key == "item" {
			index = `"output_index":0,`
		}
		b = fmt.Appendf(b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s%q:%s}\n\n", ev.typ, ev.typ, i, index, ev.key, ev.val)
	}
	_, err := w.Write(b)
	return err
}

// answeredTrigger reports whether items[i] is a compaction_trigger that
// louter answered: the compaction item it made follows it, as in a chain
// rebuilt through the trigger's turn.
func answeredTrigger(items []gjson.Result, i int) bool {
	if items[i].Get("type").Str != compactionTriggerType || i+1 >= len(items) {
		return false
	}
	next := items[i+1]
	return next.Get("type").Str == "compaction" && strings.HasPrefix(next.Get("encrypted_content").Str, compactTokenPrefix)
}

package caddymodule

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
	// An inline compaction's (stateful_inline_compact.go): the kept user
	// messages and the items from the latest user message on, which with
	// the summary replace everything up to the item. Tail is nil for
	// /v1/responses/compact's, whose item stands for the summary alone.
	Kept json.RawMessage `json:"kept,omitempty"`
	Tail json.RawMessage `json:"tail,omitempty"`
}

// expandCompactions replaces each compaction item louter made with its
// summary, as a user message. A compaction item it did not make is left to
// a Responses backend (passthrough), refused for any other.
func (t *stateTurn) expandCompactions(ctx context.Context, items []byte, passthrough bool) ([]byte, *translate.Error) {
	if !bytes.Contains(items, []byte(`"compaction"`)) {
		return items, nil
	}
	arr := gjson.ParseBytes(items).Array()
	out := make([]byte, 0, len(items))
	out = append(out, '[')
	for i, it := range arr {
		if answeredTrigger(arr, i) {
			// A chain rebuilt through a compaction_trigger's turn
			// (stateful_compact_trigger.go): its answer, next, stands
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
func (l *Louter) serveCompact(w http.ResponseWriter, r *http.Request, codec translate.Codec) error {
	body, te := l.readBody(r)
	if te != nil {
		return l.reject(w, codec, te)
	}
	if !gjson.ValidBytes(body) {
		return l.reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Message: "louter: the request body is not valid JSON"})
	}
	res := gjson.GetManyBytes(body, "model", "input", "instructions", "previous_response_id")
	if res[0].Str == "" {
		return l.reject(w, codec, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "model", Message: "louter: the request names no model"})
	}
	input := inputItems(res[1])
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimSuffix(r.URL.Path, "/compact")
	r2.URL.RawPath = ""
	c, failed, err := l.summarize(r2, res[0].Str, res[2], res[3].Str, input, storedSummary{})
	if failed != nil || err != nil {
		return l.passOn(w, codec, failed, err)
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
	return writeRawJSON(w, http.StatusOK, out)
}

// summary is a compaction louter made: its item, and the usage of the
// turn that wrote the summary (JSON, or null).
type summary struct {
	item    []byte // {"type":"compaction","id":…,"encrypted_content":"louter_cmp_…"}
	usage   []byte
	summary string
}

// summarize asks the model for a summary of input (summaryTurn) and
// stores it, with rec's other fields, as a record of the client's. When
// the summary turn was not answered, failed holds its answer, to pass on
// to the client; err is a store failure.
func (l *Louter) summarize(r *http.Request, model string, instructions gjson.Result, prev string, input []byte, rec storedSummary) (c *summary, failed *bufferWriter, err error) {
	text, usage, failed, err := l.summaryTurn(r, model, instructions, prev, input, "")
	if failed != nil || err != nil {
		return nil, failed, err
	}
	token := state.NewID(compactTokenPrefix)
	rec.Summary = text
	data, _ := json.Marshal(rec)
	ctx, cancel := saveContext(r.Context())
	defer cancel()
	if err := l.state.store.Put(ctx, state.Record{ID: token, Owner: stateOwner(r), Created: time.Now(), Data: data}); err != nil {
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

// summaryTurn asks the model for a summary of input (a JSON array of
// Responses items, after the chain prev names when it is not ""), through
// the chat path of r (a POST of the Responses API: routing, limits,
// fallbacks and translation apply), following extra (instructions for the
// summary) when not "". It returns the summary and the turn's usage (JSON,
// or null). When the turn was not answered, failed holds its answer.
// Shared by /v1/responses/compact, inline Responses compaction and
// Anthropic's compact_20260112 (compact_edit.go).
func (l *Louter) summaryTurn(r *http.Request, model string, instructions gjson.Result, prev string, input []byte, extra string) (text string, usage []byte, failed *bufferWriter, err error) {
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
	if err := l.serveChat(buf, r2, classifyRequest(r2), nopNext); err != nil {
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
func (l *Louter) passOn(w http.ResponseWriter, codec translate.Codec, failed *bufferWriter, err error) error {
	if failed == nil {
		var te *translate.Error
		if errors.As(err, &te) {
			return l.reject(w, codec, te)
		}
		return l.reject(w, codec, storeUnavailable(err))
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

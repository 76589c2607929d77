package stateful

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// Inline compaction: context_management:[{"type":"compaction",
// "compact_threshold":N}] on a request for a backend that is not a
// Responses backend (one that is gets the member untouched). When the
// request's input, history included, is estimated past N tokens, louter
// compacts it before the backend is asked, as POST /v1/responses/compact
// does (summarize): the items before the latest user message are replaced
// by the recent user messages among them and the summary, and the backend
// gets that and the rest. The client gets the compaction item as the
// answer's first output item (response.output_item.added and .done, then
// the answer's own items one place on), as OpenAI's API emits it.
//
// The item's token names a record holding the replacement: the kept user
// messages, the summary and the items from the latest user message on. A
// later request carrying the item (in its input, or in the chain
// previous_response_id rebuilds) gets that replacement in place of
// everything up to the item, so a client may drop the items before it, as
// the API allows, or keep them (expandCompactions).

// minCompactThreshold is the API's smallest compact_threshold.
const minCompactThreshold = 1000

// compactThreshold reads context_management: the compaction threshold, 0
// when it asks for none, or the error naming what is wrong.
func compactThreshold(cm gjson.Result) (int, *translate.Error) {
	bad := func(format string, a ...any) (int, *translate.Error) {
		return 0, &translate.Error{Status: http.StatusBadRequest, Kind: translate.ErrInvalidRequest, Param: "context_management", Message: fmt.Sprintf(format, a...)}
	}
	if !cm.Exists() || cm.Type == gjson.Null {
		return 0, nil
	}
	if !cm.IsArray() {
		return bad("context_management: expected an array of objects")
	}
	threshold := 0
	for i, e := range cm.Array() {
		if typ := e.Get("type").Str; typ != "compaction" {
			return bad("context_management[%d].type: %q is not supported; the only type is compaction", i, typ)
		}
		t := e.Get("compact_threshold")
		switch {
		case !t.Exists() || t.Type == gjson.Null:
			return bad("context_management[%d].compact_threshold is required", i)
		case t.Type != gjson.Number || t.Num != float64(int(t.Num)) || t.Num < minCompactThreshold:
			return bad("context_management[%d].compact_threshold: expected an integer of at least %d, got %s", i, minCompactThreshold, t.Raw)
		}
		threshold = int(t.Num)
	}
	return threshold, nil
}

// compactInline compacts t.body's input when it is past threshold tokens,
// and takes context_management out of the body: louter serves it.
func (sl *Layer) compactInline(r *http.Request, t *Turn, threshold int) *translate.Error {
	t.Body, _ = sjson.DeleteBytes(t.Body, "context_management")
	res := gjson.GetManyBytes(t.Body, "input", "instructions", "model")
	items := res[0].Array()
	if tokencount.EstimateText(res[0].Raw)+tokencount.EstimateText(res[1].Str) <= threshold {
		return nil
	}
	k := -1 // the latest user message
	for i := len(items) - 1; i >= 0; i-- {
		if isUserMessage(items[i]) {
			k = i
			break
		}
	}
	if k <= 0 {
		return nil // nothing before it to compact
	}
	before, after := joinItems(items[:k]), joinItems(items[k:])
	rec := storedSummary{Kept: joinRaw(keptUserMessages(before)), Tail: after}
	c, failed, err := sl.summarize(r, res[2].Str, res[1], "", before, rec)
	if failed != nil || err != nil {
		return CompactFailed(failed, err)
	}
	rec.Summary = c.summary
	t.Body, _ = sjson.SetRawBytes(t.Body, "input", rec.replacement(nil))
	t.compaction = c.item
	return nil
}

// CompactFailed is the client's answer when the summary turn failed.
func CompactFailed(failed *bufferWriter, err error) *translate.Error {
	if failed == nil {
		return storeUnavailable(err)
	}
	msg := gjson.GetBytes(failed.body.Bytes(), "error.message").Str
	return &translate.Error{Status: failed.status, Kind: translate.ErrAPI, Param: "context_management",
		Message: "louter: compacting the history (context_management) failed: " + msg}
}

func isUserMessage(it gjson.Result) bool {
	typ := it.Get("type")
	return it.Get("role").Str == "user" && (!typ.Exists() || typ.Str == "message")
}

// joinItems is items as a JSON array.
func joinItems(items []gjson.Result) []byte {
	raws := make([][]byte, len(items))
	for i, it := range items {
		raws[i] = []byte(it.Raw)
	}
	return joinRaw(raws)
}

func joinRaw(raws [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(raws, []byte{','})...), ']')
}

// replacement appends to out, a JSON array's items so far ("[" and
// items, or nil), what an inline compaction's item stands for: the kept
// user messages, the summary, and the items from the latest user message
// on; it returns the closed array.
func (s *storedSummary) replacement(out []byte) []byte {
	if out == nil {
		out = []byte{'['}
	}
	add := func(raw string) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	for _, it := range gjson.ParseBytes(s.Kept).Array() {
		add(it.Raw)
	}
	add(string(summaryMessage(s.Summary)))
	for _, it := range gjson.ParseBytes(s.Tail).Array() {
		add(it.Raw)
	}
	return append(out, ']')
}

// summaryMessage is the user message a summary is sent to a backend as.
func summaryMessage(summary string) []byte {
	msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []map[string]string{{
		"type": "input_text", "text": "Summary of the conversation so far (earlier turns were compacted):\n\n" + summary,
	}}})
	return msg
}

// compactionWriter puts an inline compaction's item first in the answer's
// output: in a JSON response's output, or as a stream's first output item
// (after response.in_progress), every later event's output_index one
// further and its sequence_number two further, and in the terminal
// event's response.
type compactionWriter struct {
	http.ResponseWriter
	flusher httpx.Flusher // the inner writer's flush, found once (internal/httpx)
	item    []byte

	decided, sse, pass bool
	body               []byte // a JSON answer, held until whole
	line               []byte // the stream's line being read
	pending            bool   // response.in_progress was read: the item goes after its event
	shift              bool   // the item was written: later events move on
	seq                int64  // the last sequence number written
}

func (c *compactionWriter) WriteHeader(status int) {
	if c.decided {
		return
	}
	c.decided = true
	c.sse = strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream")
	c.pass = status != http.StatusOK || !c.sse && c.Header().Get("Content-Length") == ""
	if c.pass || c.sse {
		c.ResponseWriter.WriteHeader(status)
	}
}

func (c *compactionWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !c.decided {
		c.WriteHeader(http.StatusOK)
	}
	switch {
	case c.pass:
		return c.ResponseWriter.Write(p)
	case !c.sse:
		var err error
		c.body, c.pass, err = holdSized(c.ResponseWriter, http.StatusOK, c.body, p, func(b []byte) []byte { return c.withItem(b, "output") })
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	if err := writeLines(c.ResponseWriter, &c.line, p, c.endLine); err != nil {
		return 0, err
	}
	return n, nil
}

// endLine appends line, rewritten, to out.
func (c *compactionWriter) endLine(out, line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data: "))
	switch {
	case ok && c.shift:
		ev := bytes.TrimSpace(data)
		if n := gjson.GetBytes(ev, "sequence_number"); n.Exists() {
			ev, _ = sjson.SetBytes(ev, "sequence_number", n.Int()+2)
		}
		if n := gjson.GetBytes(ev, "output_index"); n.Exists() {
			ev, _ = sjson.SetBytes(ev, "output_index", n.Int()+1)
		}
		if gjson.GetBytes(ev, "response.output").Exists() {
			ev = c.withItem(ev, "response.output")
		}
		out = append(out, "data: "...)
		out = append(out, ev...)
		return append(out, '\n')
	case ok:
		if t := gjson.GetBytes(data, "type").Str; t == "response.in_progress" {
			c.pending = true
			c.seq = gjson.GetBytes(data, "sequence_number").Int()
		}
	case c.pending && len(bytes.TrimSpace(line)) == 0:
		out = append(out, line...)
		for i, name := range [...]string{"response.output_item.added", "response.output_item.done"} {
			out = fmt.Appendf(out, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,\"output_index\":0,\"item\":%s}\n\n", name, name, c.seq+1+int64(i), c.item)
		}
		c.pending, c.shift = false, true
		return out
	}
	return append(out, line...)
}

// withItem returns obj with the item first in its array at path.
func (c *compactionWriter) withItem(obj []byte, path string) []byte {
	arr := []byte{'['}
	arr = append(arr, c.item...)
	if old := gjson.GetBytes(obj, path); old.IsArray() && len(old.Array()) > 0 {
		arr = append(arr, ',')
		arr = append(arr, strings.TrimSpace(old.Raw)[1:]...)
	} else {
		arr = append(arr, ']')
	}
	out, err := sjson.SetRawBytes(obj, path, arr)
	if err != nil {
		return obj
	}
	return out
}

// Flush implements http.Flusher.
func (c *compactionWriter) Flush() { _ = c.flusher.Flush() }

// Unwrap lets http.ResponseController reach the writer below.
func (c *compactionWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

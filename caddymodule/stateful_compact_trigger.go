package caddymodule

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/state"
	"github.com/louter/louter/translate"
)

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

// serveCompactionTrigger answers a turn whose input ends with a
// compaction_trigger (t.trigger): the history before it (t.body's input,
// the chain rebuilt and louter's earlier compactions expanded) is
// summarised, and the client gets a response whose output is the one
// compaction item, as JSON or, when the request streams, as the
// Responses events. w is the turn's writer (stateTurn.capture), so the
// answer is kept as any turn's is.
func (l *Louter) serveCompactionTrigger(w http.ResponseWriter, r *http.Request, t *stateTurn, codec translate.Codec) error {
	res := gjson.GetManyBytes(t.body, "model", "input", "instructions", "stream")
	if !endsWithCompactionTrigger(res[1]) {
		// continueState saw it last, and putting the history back
		// keeps it so; never summarise past an item of the client's.
		return l.reject(w, codec, translate.NewError(http.StatusInternalServerError, "louter: the compaction_trigger was lost rewriting the request"))
	}
	items := res[1].Array()
	input := joinItems(items[:len(items)-1]) // without the trigger
	c, failed, err := l.summarize(r, res[0].Str, res[2], "", input, storedSummary{})
	if failed != nil || err != nil {
		return l.passOn(w, codec, failed, err)
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
	if prev := t.echoPrevious(); prev != "" {
		obj = strconv.AppendQuote(obj, prev)
	} else {
		obj = append(obj, "null"...)
	}
	obj = append(obj, `,"store":`...)
	obj = strconv.AppendBool(obj, t.keep)
	obj = append(obj, `,"usage":`...)
	obj = append(obj, c.usage...)
	obj = append(obj, '}')
	if res[3].Type != gjson.True {
		return writeRawJSON(w, http.StatusOK, obj)
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

package translate

import "github.com/tidwall/gjson"

// NewStreamWatch implements WatchCodec.
func (openAIResponsesCodec) NewStreamWatch() StreamWatch { return &respStreamWatch{} }

// respStreamWatch follows a Responses stream passed through: it ends at
// response.completed, response.incomplete, response.failed (the backend's
// error) or an error event, reads the usage of the final response, and
// keeps what an encoder continuing the stream must repeat (Resume): the
// response id and the next sequence_number.
type respStreamWatch struct {
	watchState
	id  string
	seq int64 // the sequence_number the next event takes
}

// Check implements StreamWatch.
func (w *respStreamWatch) Check(name string, data []byte) WatchVerdict {
	var top watchTop
	data, v, done := w.open(name, data, &top)
	if done {
		return v
	}
	if top.seq.kind == jsonNumber {
		if n, ok := jsonSmallInt(top.seq.bytes(data)); ok {
			w.seq = n + 1
		}
	}
	if name == "" {
		name = string(top.typ.bytes(data))
	}
	switch name {
	case "response.created":
		if id := gjson.GetBytes(data, "response.id"); id.Type == gjson.String {
			w.id = id.Str
		}
	case "response.completed", "response.failed", "response.incomplete":
		if u := gjson.GetBytes(data, "response.usage"); u.IsObject() {
			w.usage, w.hasUsage = respDecodeUsage(u), true
		}
		w.complete, w.errored = true, name == "response.failed"
		return WatchEnd
	case "error":
		w.complete, w.errored = true, true
		return WatchEnd
	}
	return WatchContinue
}

// Resume implements StreamWatch: the encoder starts from the response id
// the stream announced and numbers its events on from the last
// sequence_number seen.
func (w *respStreamWatch) Resume(enc StreamEncoder) {
	enc.Encode(discardFrameWriter{}, &Event{Type: EventMessageStart, ID: w.id})
	if r, ok := enc.(*respStreamEncoder); ok {
		r.seq = w.seq
	}
}

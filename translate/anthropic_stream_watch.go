package translate

import "github.com/tidwall/gjson"

// NewStreamWatch implements WatchCodec.
func (anthropicCodec) NewStreamWatch() StreamWatch { return &anthStreamWatch{} }

// anthStreamWatch follows an Anthropic stream passed through: it ends at
// message_stop or an error event, and reports usage in two parts, the
// input in message_start and the output, cumulative, in message_delta.
type anthStreamWatch struct {
	watchState
	anth anthUsage
}

// Check implements StreamWatch.
func (w *anthStreamWatch) Check(name string, data []byte) WatchVerdict {
	if name == "ping" {
		return WatchContinue // its data is not worth a scan
	}
	var top watchTop
	data, v, done := w.open(name, data, &top)
	if done {
		return v
	}
	if name == "" {
		name = string(top.typ.bytes(data)) // an event without its event line
	}
	switch name {
	case "message_stop":
		w.complete = true
		return WatchEnd
	case "error":
		w.complete, w.errored = true, true
		return WatchEnd
	case "message_start":
		if w.anth.merge(gjson.GetBytes(data, "message.usage")) {
			w.usage, w.hasUsage = w.anth.ir(), true
		}
	case "message_delta":
		if top.usage.kind == jsonObject && w.anth.merge(gjson.ParseBytes(top.usage.bytes(data))) {
			w.usage, w.hasUsage = w.anth.ir(), true
		}
	}
	return WatchContinue
}

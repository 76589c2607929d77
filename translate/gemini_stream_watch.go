package translate

import "github.com/tidwall/gjson"

// NewStreamWatch implements WatchCodec.
func (geminiCodec) NewStreamWatch() StreamWatch { return &geminiStreamWatch{} }

// geminiStreamWatch follows a Gemini stream passed through (SSE, or the
// elements of a streamed JSON array): it is complete at a finish reason,
// and reports the latest usageMetadata.
type geminiStreamWatch struct {
	watchState
	// usageRaw is the latest usageMetadata, decoded only when asked for:
	// Gemini repeats it on every chunk.
	usageRaw []byte
}

// Check implements StreamWatch.
func (w *geminiStreamWatch) Check(name string, data []byte) WatchVerdict {
	var top watchTop
	data, v, done := w.open(name, data, &top)
	if done {
		return v
	}
	if top.usage.kind == jsonObject {
		w.usageRaw = append(w.usageRaw[:0], top.usage.bytes(data)...)
	}
	return w.finish(&top)
}

// Usage implements StreamWatch.
func (w *geminiStreamWatch) Usage() (Usage, bool) {
	if len(w.usageRaw) > 0 {
		w.usage, w.hasUsage = geminiDecodeUsage(gjson.ParseBytes(w.usageRaw)), true
		w.usageRaw = w.usageRaw[:0]
	}
	return w.usage, w.hasUsage
}

package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// NewStreamWatch implements WatchCodec.
func (openAIChatCodec) NewStreamWatch() StreamWatch { return &oaiStreamWatch{} }

// oaiStreamWatch follows an OpenAI Chat stream passed through: it ends at
// [DONE], is complete at a finish reason (a server may close without
// [DONE]), and reports the usage of the chunk a stream asked for it with
// (stream_options.include_usage), which may carry no choices.
type oaiStreamWatch struct{ watchState }

// Check implements StreamWatch.
func (w *oaiStreamWatch) Check(name string, data []byte) WatchVerdict {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		w.usageOnly, w.complete = false, true
		return WatchEnd
	}
	var top watchTop
	data, v, done := w.open(name, data, &top)
	if done {
		return v
	}
	if top.usage.kind == jsonObject {
		w.usage, w.hasUsage = oaiDecodeUsage(gjson.ParseBytes(top.usage.bytes(data))), true
		w.usageOnly = top.noChoices
	}
	return w.finish(&top)
}

package translate

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// NewStreamDecoder implements Codec.
func (openAIResponsesCodec) NewStreamDecoder() StreamDecoder { return &respStreamDecoder{} }

// respStreamDecoder turns a Responses event stream into IR events
// (REFERENCE §3.3). Text, reasoning summaries and function call arguments
// are forwarded delta by delta. A custom tool call's raw input is forwarded
// as fragments of the IR's arguments object {"input":"…"}, escaped as they
// come.
//
// Servers differ in what they send: some send only output_item.done for an
// item, without deltas, so every item's .done fills in what its deltas did
// not. The event type is read from the data (the event: line may be
// missing); [DONE], which the spec does not have, is tolerated. The stream
// ends at response.completed, response.incomplete, response.failed or an
// error event; a body that ends before any of them was cut.
type respStreamDecoder struct {
	em Emitter

	// The output item being read.
	itemID   string
	itemType string
	seen     bool // the item's deltas produced IR events
	// annotations are the item's streamed annotations, kept for its end.
	annotations []string
	summaries   int  // reasoning summary parts started in the item
	refusal     bool // refusal text was forwarded
	paragraph   bool // the next summary text starts a new summary part
	buf         []byte
	// items counts the output items the stream announced; with none,
	// the final response's output is the answer (see complete).
	items int
}

// Decode implements StreamDecoder.
func (d *respStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	if d.em.Done() {
		return dst
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return dst
	}
	if !gjson.ValidBytes(data) {
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "malformed upstream event: " + oaiSnippetN(data, 200)})
	}
	ev := gjson.ParseBytes(data)
	typ := ev.Get("type").Str
	if typ == "" {
		typ = name
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		r := ev.Get("response")
		return d.em.Start(dst, r.Get("id").Str, r.Get("model").Str, nil)
	case "response.output_item.added":
		return d.itemAdded(dst, ev.Get("item"))
	case "response.output_text.delta":
		return d.text(dst, ev.Get("delta").Str)
	case "response.output_text.annotation.added":
		return d.annotation(dst, ev) // openai_responses_citations.go
	case "response.refusal.delta":
		d.refusal = true
		return d.text(dst, ev.Get("delta").Str)
	case "response.reasoning_summary_part.added":
		if d.summaries > 0 {
			// Summary parts are paragraphs of one thinking block.
			d.paragraph = true
		}
		d.summaries++
		return dst
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return d.thinking(dst, ev.Get("delta").Str)
	case "response.function_call_arguments.delta":
		if d.itemType != "function_call" {
			return dst
		}
		d.seen = d.seen || ev.Get("delta").Str != ""
		return d.em.ToolArgs(dst, ev.Get("delta").Str)
	case "response.custom_tool_call_input.delta":
		if d.itemType != "custom_tool_call" {
			return dst
		}
		return d.customInput(dst, ev.Get("delta").Str)
	case "response.output_item.done":
		return d.itemDone(dst, ev.Get("item"))
	case "response.completed", "response.incomplete":
		return d.complete(dst, ev.Get("response"))
	case "response.failed", "response.cancelled":
		r := ev.Get("response")
		if e := r.Get("error"); e.IsObject() {
			return d.em.Fail(dst, respErrorFromObject(e))
		}
		return d.em.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "upstream response failed"})
	case "error":
		return d.em.Fail(dst, oaiErrorFromBody(0, ev))
	}
	// Everything else — .done events whose content the deltas already
	// carried, content_part events, annotations, hosted tool progress — adds
	// nothing the IR needs.
	return dst
}

func (d *respStreamDecoder) text(dst []Event, s string) []Event {
	if s == "" {
		return dst
	}
	d.seen = true
	return d.em.Text(dst, s)
}

func (d *respStreamDecoder) thinking(dst []Event, s string) []Event {
	if s == "" {
		return dst
	}
	if d.paragraph {
		d.paragraph = false
		s = "\n\n" + s
	}
	d.seen = true
	return d.em.Thinking(dst, s)
}

// customInput forwards a fragment of a custom tool's raw input as a
// fragment of the arguments object, opened when the call started.
func (d *respStreamDecoder) customInput(dst []Event, s string) []Event {
	if s == "" {
		return dst
	}
	d.seen = true
	b := appendJSONString(d.buf[:0], s)
	d.buf = b[:0]
	return d.em.ToolArgs(dst, string(b[1:len(b)-1]))
}

func (d *respStreamDecoder) itemAdded(dst []Event, it gjson.Result) []Event {
	dst = d.em.Start(dst, "", "", nil)
	d.items++
	d.itemID, d.itemType = it.Get("id").Str, it.Get("type").Str
	d.seen, d.summaries, d.paragraph = false, 0, false
	d.annotations = d.annotations[:0]
	switch d.itemType {
	case "function_call":
		dst = d.em.ToolStart(dst, d.callID(it), it.Get("name").Str)
		if a := it.Get("arguments").Str; a != "" {
			d.seen = true
			dst = d.em.ToolArgs(dst, a)
		}
	case "custom_tool_call":
		dst = d.em.ToolStart(dst, d.callID(it), it.Get("name").Str)
		dst = d.em.ToolArgs(dst, `{"input":"`)
		if in := it.Get("input").Str; in != "" {
			dst = d.customInput(dst, in)
		}
	default:
		// Messages and reasoning open their block with their first delta:
		// an item without any leaves no empty block behind.
		dst = d.em.CloseBlock(dst)
	}
	return dst
}

func (d *respStreamDecoder) callID(it gjson.Result) string {
	if id := it.Get("call_id").Str; id != "" {
		return id
	}
	return oaiNewCallID()
}

// itemDone completes an item with what its deltas did not carry (some
// servers send items whole), then closes its block.
func (d *respStreamDecoder) itemDone(dst []Event, it gjson.Result) []Event {
	typ := it.Get("type").Str
	same := it.Get("id").Str == d.itemID && typ == d.itemType
	if !same {
		// An item announced only now.
		dst = d.itemAdded(dst, it)
	}
	switch typ {
	case "message":
		if !d.seen {
			it.Get("content").ForEach(func(_, c gjson.Result) bool {
				switch c.Get("type").Str {
				case "output_text":
					dst = d.em.Text(dst, c.Get("text").Str)
				case "refusal":
					d.refusal = true
					dst = d.em.Text(dst, c.Get("refusal").Str)
				}
				return true
			})
		}
		dst = d.doneCitations(dst, it)
	case "reasoning":
		if strings.HasPrefix(it.Get("id").Str, respRedactedPrefix) {
			// louter's own stand-in for a redacted_thinking block.
			d.itemID, d.itemType = "", ""
			return d.em.Redacted(dst, it.Get("encrypted_content").Str)
		}
		if !d.seen {
			if t := respReasoningText(it); t != "" {
				dst = d.em.Thinking(dst, t)
			}
		}
		dst = d.em.Signature(dst, respPackSignature(it.Get("id").Str, it.Get("encrypted_content").Str))
	case "function_call":
		if !d.seen {
			dst = d.em.ToolArgs(dst, it.Get("arguments").Str)
		}
	case "custom_tool_call":
		if !d.seen {
			dst = d.customInput(dst, it.Get("input").Str)
		}
		dst = d.em.ToolArgs(dst, `"}`)
	case "web_search_call":
		call, result := respServerToolParts(it)
		dst = d.em.ServerTool(dst, BlockServerToolCall, call.Server)
		if result != nil {
			dst = d.em.ServerTool(dst, BlockServerToolResult, result.Server)
		}
	}
	d.itemID, d.itemType = "", ""
	return d.em.CloseBlock(dst)
}

// complete ends the stream with the final response's status and usage.
// Some servers and proxies stream no item events at all and send the whole
// answer in the final response's output: when no item was announced, its
// items are emitted here as if each had arrived whole.
func (d *respStreamDecoder) complete(dst []Event, r gjson.Result) []Event {
	dst = d.em.Start(dst, r.Get("id").Str, r.Get("model").Str, nil)
	if d.items == 0 {
		r.Get("output").ForEach(func(_, it gjson.Result) bool {
			dst = d.itemDone(dst, it)
			return true
		})
	}
	reason := respStopReason(r.Get("status").Str, r.Get("incomplete_details.reason").Str)
	if d.refusal && reason == StopEndTurn {
		reason = StopRefusal
	}
	var u *Usage
	if uv := r.Get("usage"); uv.IsObject() {
		usage := respDecodeUsage(uv)
		u = &usage
	}
	return d.em.Stop(dst, reason, "", u)
}

// End implements StreamDecoder.
func (d *respStreamDecoder) End(dst []Event) []Event { return d.em.End(dst) }

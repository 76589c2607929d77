package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// A request passed on in the client's own protocol is sent as the client
// wrote it, except for the model rename, the max_tokens cap and, when
// louter must count the answer, the request for a stream's usage. The scan
// that validated the body (ScanTopLevel) noted where those
// members are, so the edits are spliced into one new body — one copy, no
// further scan — and a body that needs no edit is sent untouched.
// louter's handler edits with PassthroughBody, and record's Replay replays
// a passthrough exchange through it.

// bodyEdit replaces body[start:end] with text.
type bodyEdit struct {
	start, end int
	text       []byte
}

// PassthroughBody applies the model rename and the max_tokens cap to a body
// sent on in the client's own protocol; all other bytes stay as they are.
// top is the scan of body. body itself is never modified: each attempt of
// a fallback chain starts from it. With wantUsage, a stream of a protocol
// that reports usage only when asked is asked for it (streamUsageEdit);
// hidden then says the client did not ask, so the usage is louter's alone.
// A model named in the URL (TopLevel.ModelInURL) is renamed there, not
// here: the caller passes backendModel equal to model.
//
// The error is a 400 for a rename of a body that is not a JSON object. out
// is body itself when nothing changes, a new slice otherwise.
func PassthroughBody(body []byte, top *TopLevel, model, backendModel string, maxTokens int, wantUsage bool) (out []byte, hidden bool, _ *Error) {
	var edits [2 + LimitCount]bodyEdit
	n := 0
	if wantUsage {
		if e, ok := streamUsageEdit(body, top); ok {
			edits[n] = e
			n++
			hidden = true
		}
	}
	if backendModel != model {
		name := appendJSONQuoted(nil, backendModel)
		if at := top.ModelAt; at.Found() {
			edits[n] = bodyEdit{at.Start, at.End, name}
		} else if top.Open > 0 {
			// No model member (the model came from elsewhere): add one.
			text := append([]byte(`"model":`), name...)
			if hasMembers(body, top.Open) {
				text = append(text, ',')
			}
			edits[n] = bodyEdit{top.Open, top.Open, text}
		} else {
			return nil, false, BadRequest("louter: renaming the model: the request body is not a JSON object")
		}
		n++
	}
	if maxTokens > 0 {
		for _, at := range top.LimitsAt {
			if !at.Found() {
				continue
			}
			v := gjson.ParseBytes(body[at.Start:at.End])
			if v.Type == gjson.Number && v.Int() > int64(maxTokens) {
				edits[n] = bodyEdit{at.Start, at.End, strconv.AppendInt(nil, int64(maxTokens), 10)}
				n++
			}
		}
	}
	if n == 0 {
		return body, false, nil
	}
	return spliceBody(body, edits[:n]), hidden, nil
}

// streamUsageEdit is the edit that asks a stream for its usage, for a
// protocol whose streams report it only when asked (OpenAI Chat:
// stream_options.include_usage). Limits, budgets and the ledger count
// what the backend reports; a stream that reports nothing could only be
// counted on an estimate. ok is false when the client asked already, or
// when its stream_options is neither an object nor null (the backend
// refuses that request as it is). The client's other stream options stay.
func streamUsageEdit(body []byte, top *TopLevel) (bodyEdit, bool) {
	if !top.UsageOptIn || top.Open == 0 {
		return bodyEdit{}, false
	}
	at := top.StreamOptionsAt
	if !at.Found() {
		text := []byte(`"stream_options":{"include_usage":true}`)
		if hasMembers(body, top.Open) {
			text = append(text, ',')
		}
		return bodyEdit{top.Open, top.Open, text}, true
	}
	v := gjson.ParseBytes(body[at.Start:at.End])
	switch {
	case v.Type == gjson.Null:
	case !v.IsObject() || v.Get("include_usage").Type == gjson.True:
		return bodyEdit{}, false
	}
	text := []byte(`{"include_usage":true`)
	if v.IsObject() {
		v.ForEach(func(k, m gjson.Result) bool {
			if k.String() != "include_usage" { // a false or null one, maybe repeated, goes
				text = append(append(append(append(text, ','), k.Raw...), ':'), m.Raw...)
			}
			return true
		})
	}
	return bodyEdit{at.Start, at.End, append(text, '}')}, true
}

// spliceBody returns a new body with the edits applied. Edits do not
// overlap; they may come in any order.
func spliceBody(body []byte, edits []bodyEdit) []byte {
	for i := 1; i < len(edits); i++ { // a handful: insertion sort
		for j := i; j > 0 && edits[j].start < edits[j-1].start; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	size := len(body)
	for _, e := range edits {
		size += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, size)
	prev := 0
	for _, e := range edits {
		out = append(out, body[prev:e.start]...)
		out = append(out, e.text...)
		prev = e.end
	}
	return append(out, body[prev:]...)
}

// hasMembers reports whether the object whose '{' ends at open has a
// member.
func hasMembers(body []byte, open int) bool {
	for _, c := range body[open:] {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c != '}'
	}
	return false
}

// appendJSONQuoted appends s as a JSON string, as encoding/json would
// write it (without its HTML escaping): a control character as \u00XX,
// where appendJSONString writes \n and the like.
func appendJSONQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

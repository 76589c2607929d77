package caddymodule

import (
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// A request passed on in the client's own protocol is sent as the client
// wrote it, except for the model rename and the max_tokens cap. The scan
// that validated the body (translate.ScanTopLevel) noted where those
// members are, so the edits are spliced into one new body — one copy, no
// further scan — and a body that needs no edit is sent untouched.

// bodyEdit replaces body[start:end] with text.
type bodyEdit struct {
	start, end int
	text       []byte
}

// passthroughBody applies the model rename and the max_tokens cap to a body
// sent on in the client's own protocol; all other bytes stay as they are.
// top is the scan of body. body itself is never modified: each attempt of
// a fallback chain starts from it.
func passthroughBody(body []byte, top *translate.TopLevel, model, backendModel string, maxTokens int) ([]byte, *translate.Error) {
	var edits [1 + translate.LimitCount]bodyEdit
	n := 0
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
			return nil, translate.BadRequest("louter: renaming the model: the request body is not a JSON object")
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
		return body, nil
	}
	return spliceBody(body, edits[:n]), nil
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
// write it (without its HTML escaping).
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

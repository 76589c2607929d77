package translate

import (
	"encoding/json"
	"unsafe"

	"github.com/tidwall/gjson"
)

// The values of an Anthropic request, read from the spans the scanner
// found. Strings without escapes and raw values (tool schemas, tool_use
// input, cache_control) are views of the body, not copies; strings with
// escapes are unescaped once, into an arena shared by the small ones.

// key returns a member name: a view of the body, or the name unescaped
// when the client escaped something in it.
func (d *anthRequestDecoder) key(name []byte, esc bool) string {
	if len(name) == 0 {
		return ""
	}
	if esc {
		return string(jsonUnescape(nil, name))
	}
	return unsafe.String(&name[0], len(name))
}

// str returns the text of a string value, "" for any other kind (as
// gjson's Result.Str).
func (d *anthRequestDecoder) str(sp jsonSpan) string {
	if sp.kind != jsonString || sp.start == sp.end {
		return ""
	}
	b := d.body[sp.start:sp.end]
	if !sp.esc {
		return unsafe.String(&b[0], len(b))
	}
	s, _ := d.unescape(b)
	return s
}

// text returns the text of a string value and its form, for the fields
// encoders splice (see jsonForm).
func (d *anthRequestDecoder) text(sp jsonSpan) (string, jsonForm) {
	if sp.kind != jsonString || sp.start == sp.end {
		return "", jsonForm{}
	}
	// newJSONForm's checks, sharing the unescaping's pass over escapes and
	// the scanner's over the bytes (plain ASCII needs no UTF-8 check).
	b := d.body[sp.start:sp.end]
	esc := unsafe.String(&b[0], len(b))
	s, paired := esc, true
	if sp.esc {
		s, paired = d.unescape(b)
	}
	if !paired || sp.high && !jsonSpliceableText(b) {
		return s, jsonForm{}
	}
	return s, jsonForm{of: s, esc: esc}
}

// textValue is text for a string, and gstr, without a form, for any other
// kind: a text field holding a number reads as the number's text, as it
// did with gjson.
func (d *anthRequestDecoder) textValue(sp jsonSpan) (string, jsonForm) {
	if sp.kind == jsonString {
		return d.text(sp)
	}
	return d.gstr(sp), jsonForm{}
}

// gstr is what gjson's Result.String gives for the value: a string's
// text, "" for an absent value or null, the JSON text of anything else
// (numbers formatted as gjson formats them).
func (d *anthRequestDecoder) gstr(sp jsonSpan) string {
	switch sp.kind {
	case jsonAbsent, jsonNull:
		return ""
	case jsonString:
		return d.str(sp)
	}
	return d.result(sp).String()
}

// rawBytes returns the JSON text of a value (a string with its quotes) as
// a view of the body whose capacity ends with it, so that an append to it
// copies rather than overwrite the body.
func (d *anthRequestDecoder) rawBytes(sp jsonSpan) []byte {
	if sp.kind == jsonString {
		return d.body[sp.start-1 : sp.end+1 : sp.end+1]
	}
	return d.body[sp.start:sp.end:sp.end]
}

// raw returns the JSON text of a value, nil when it is absent or null.
func (d *anthRequestDecoder) raw(sp jsonSpan) json.RawMessage {
	if sp.kind == jsonAbsent || sp.kind == jsonNull {
		return nil
	}
	return json.RawMessage(d.rawBytes(sp))
}

// rawString is rawBytes as a string; sp must not be absent.
func (d *anthRequestDecoder) rawString(sp jsonSpan) string {
	b := d.rawBytes(sp)
	return unsafe.String(&b[0], len(b))
}

// result is the value as gjson reads it, for the small values still read
// with gjson (settings, rare shapes), so that they read as they always
// did.
func (d *anthRequestDecoder) result(sp jsonSpan) gjson.Result {
	if sp.kind == jsonAbsent {
		return gjson.Result{}
	}
	return gjson.Parse(d.rawString(sp))
}

// textAt reads the string value at m.i, a text the IR keeps, and moves m
// past it: its span, its text and its form (see jsonForm), found in one pass
// over the string (jsonScanUnescape) rather than a scan then an unescaping.
// ok is false on a syntax error.
func (d *anthRequestDecoder) textAt(m *jsonMembers) (sp jsonSpan, s string, form jsonForm, ok bool) {
	start := m.i + 1
	t, buf, ok := jsonScanUnescape(d.body, start, d.scratch[:0])
	d.scratch = buf
	if !ok {
		m.bad = true
		return jsonSpan{}, "", jsonForm{}, false
	}
	m.i = t.end + 1
	sp = jsonSpan{start: start, end: t.end, kind: jsonString, esc: t.esc, high: t.high}
	if start == t.end {
		return sp, "", jsonForm{}, true
	}
	b := d.body[start:t.end]
	esc := unsafe.String(&b[0], len(b))
	s = esc
	if t.esc {
		s = d.keep(buf)
	}
	// newJSONForm's checks, from what the pass found (plain ASCII needs
	// no UTF-8 check).
	if t.paired && (!t.high || jsonSpliceableText(b)) {
		form = jsonForm{of: s, esc: esc}
	}
	return sp, s, form, true
}

// keep returns a copy of b that the IR can keep, from the decoder's arena.
func (d *anthRequestDecoder) keep(b []byte) string { return d.arena.keep(b, anthArenaChunk) }

// anthArenaChunk is the size of the arena chunks small unescaped strings
// share; a string longer than a quarter of it gets its own allocation, so
// at most a quarter of a chunk is wasted.
const anthArenaChunk = 16 << 10

// unescape returns the text of escaped string contents (never empty), and
// whether every surrogate escape in them was paired (see
// jsonUnescapePaired).
func (d *anthRequestDecoder) unescape(b []byte) (string, bool) {
	dst, paired := jsonUnescapePaired(d.scratch[:0], b)
	d.scratch = dst
	return d.keep(dst), paired
}

// isToolResult reports whether a block's type, as read so far, is
// tool_result.
func (d *anthRequestDecoder) isToolResult(typ jsonSpan) bool {
	return typ.kind == jsonString && !typ.esc && string(d.body[typ.start:typ.end]) == "tool_result"
}

// emptyArray reports whether the array value sp has no element.
func (d *anthRequestDecoder) emptyArray(sp jsonSpan) bool {
	i := jsonSkipSpace(d.body, sp.start+1)
	return d.body[i] == ']'
}

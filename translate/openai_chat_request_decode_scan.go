package translate

import (
	"cmp"
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
)

// This file holds the reading primitives of the OpenAI Chat request
// decoder, on top of json_scan.go's scanner: values are located as spans
// of the body and read from it in place.
//
// Strings without escapes are views of the body (unsafe.String), not
// copies: a ~100 KB agent request is mostly message texts and tool
// results, and copying each of them was the decoder's main cost. The IR
// therefore shares the body's memory; callers must not change the body
// while the IR is in use (none does: the body is read once and kept).
//
// Member lookups follow gjson's Get, which the decoder used before: the
// first member of a name wins, names are compared unescaped, and a path of
// two names ("function.name") takes the first match among all the members
// of the outer name that are objects.

// reqScanner reads a request body in place, for the single-pass request
// decoders (OpenAI Chat, Responses): the body, whether it proved not to be
// valid JSON, the error to report and the fields left out, each filed
// under its place in the decoder's order of checks (see fail).
type reqScanner struct {
	data []byte

	// bad is set at the first syntax error: the body is not valid JSON,
	// which is the error whatever else was found.
	bad bool
	// err is the error to report: of those found, the one the checks meet
	// first in their order, which is not the body's order.
	err   *Error
	errAt int
	// drops are what was left out, in the body's order; they are recorded
	// on the Request in the checks' order by recordDrops.
	drops []oaiDrop

	// scratch is where texts are unescaped before keep copies them out;
	// arena holds the short ones (see keep).
	scratch []byte
	arena   textArena
}

// reqScratch holds the buffers texts are unescaped into before they are
// copied out, so that a request's largest text does not cost a growing
// buffer of garbage each time; reqScratchMax bounds what is kept.
var reqScratch sync.Pool

const reqScratchMax = 1 << 20

// takeScratch takes a scratch buffer from the pool, for one decoding.
func (d *reqScanner) takeScratch() {
	if p, ok := reqScratch.Get().(*[]byte); ok {
		d.scratch = *p
	}
}

// returnScratch gives the scratch buffer back once the decoding is done.
func (d *reqScanner) returnScratch() {
	if cap(d.scratch) <= reqScratchMax {
		s := d.scratch[:0]
		reqScratch.Put(&s)
	}
	d.scratch = nil
}

// oaiDrop is a dropped field found at a place in the order of the checks.
type oaiDrop struct {
	at            int
	field, reason string
}

// fail records err found at place at in the order of the checks. The
// earliest place wins; of two at the same place, the one found first.
func (d *reqScanner) fail(at int, err *Error) {
	if d.err == nil || at < d.errAt {
		d.err, d.errAt = err, at
	}
}

// drop records that field was left out, found at place at.
func (d *reqScanner) drop(at int, field, reason string) {
	d.drops = append(d.drops, oaiDrop{at, field, reason})
}

// recordDrops records the drops on req in the order of the checks.
func (d *reqScanner) recordDrops(req *Request) {
	slices.SortStableFunc(d.drops, func(a, b oaiDrop) int { return cmp.Compare(a.at, b.at) })
	for _, dr := range d.drops {
		req.Drop(dr.field, dr.reason)
	}
}

// oaiView returns data[start:end] as a string sharing its memory.
func oaiView(data []byte, start, end int) string {
	if start >= end {
		return ""
	}
	return unsafe.String(&data[start], end-start)
}

// view returns data[start:end] of the body as a string sharing its memory.
func (d *reqScanner) view(start, end int) string { return oaiView(d.data, start, end) }

// str reads a string value: a view of the body when it holds no escapes,
// else its unescaped contents. Other kinds read "", as gjson's Result.Str
// does.
func (d *reqScanner) str(sp jsonSpan) string {
	if sp.kind != jsonString || sp.start == sp.end {
		return ""
	}
	if !sp.esc {
		return d.view(sp.start, sp.end)
	}
	s, _ := d.unescape(d.data[sp.start:sp.end])
	return s
}

// text reads a string value with its escaped form, for the IR fields an
// encoder can splice (Part.Text, Tool.Description; see jsonForm). The
// form's checks share the unescaping's pass over the escapes and the
// scanner's over the bytes: plain ASCII needs no UTF-8 check.
func (d *reqScanner) text(sp jsonSpan) (string, jsonForm) {
	if sp.kind != jsonString || sp.start == sp.end {
		return "", jsonForm{}
	}
	raw := d.data[sp.start:sp.end]
	esc := d.view(sp.start, sp.end)
	s, paired := esc, true
	if sp.esc {
		s, paired = d.unescape(raw)
	}
	if !paired || sp.high && !jsonSpliceableText(raw) {
		return s, jsonForm{}
	}
	return s, jsonForm{of: s, esc: esc}
}

// textAt reads the string value at data[i] (its opening quote) with its
// form, scanning and unescaping it in one pass (jsonScanUnescape) rather
// than a scan then an unescaping, and returns its span, its text, its form
// and the index after it.
func (d *reqScanner) textAt(i int) (sp jsonSpan, s string, form jsonForm, end int) {
	start := i + 1
	t, buf, ok := jsonScanUnescape(d.data, start, d.scratch[:0])
	d.scratch = buf
	if !ok {
		d.bad = true
		return jsonSpan{}, "", jsonForm{}, len(d.data)
	}
	sp = jsonSpan{start: start, end: t.end, kind: jsonString, esc: t.esc, high: t.high}
	end = t.end + 1
	if start == t.end {
		return sp, "", jsonForm{}, end
	}
	raw := d.data[start:t.end]
	esc := unsafe.String(&raw[0], len(raw))
	s = esc
	if t.esc {
		s = d.keep(buf)
	}
	// newJSONForm's checks, from what the pass found (plain ASCII needs no
	// UTF-8 check).
	if t.paired && (!t.high || jsonSpliceableText(raw)) {
		form = jsonForm{of: s, esc: esc}
	}
	return sp, s, form, end
}

// oaiArenaChunk is the size of the chunks short unescaped strings share
// (tool call arguments, ids, short texts), so that each is not an
// allocation of its own. A string over a quarter of a chunk gets its own
// allocation, so at most a quarter of a chunk is wasted.
const oaiArenaChunk = 16 << 10

// unescape returns the text of escaped string contents and whether every
// surrogate escape in them was paired (see jsonUnescapePaired).
func (d *reqScanner) unescape(raw []byte) (string, bool) {
	dst, paired := jsonUnescapePaired(d.scratch[:0], raw)
	d.scratch = dst
	if len(dst) == 0 {
		return "", paired
	}
	return d.keep(dst), paired
}

// keep returns a copy of b that the IR can keep, from the scanner's arena.
func (d *reqScanner) keep(b []byte) string { return d.arena.keep(b, oaiArenaChunk) }

// isString reports whether sp is a non-empty string. A string's contents
// are empty exactly when its unescaped value is.
func (sp jsonSpan) isString() bool { return sp.kind == jsonString && sp.start < sp.end }

// rawBounds returns the bounds of the value's JSON text: a string's with
// its quotes.
func (sp jsonSpan) rawBounds() (int, int) {
	if sp.kind == jsonString {
		return sp.start - 1, sp.end + 1
	}
	return sp.start, sp.end
}

// at returns the index the value starts at, to walk it again.
func (sp jsonSpan) at() int {
	s, _ := sp.rawBounds()
	return s
}

// raw returns a value's JSON text as a view of the body, capped so that an
// append to it cannot write into the body.
func (d *reqScanner) raw(sp jsonSpan) json.RawMessage {
	s, e := sp.rawBounds()
	return d.data[s:e:e]
}

// rawString returns a value's JSON text as a string view of the body.
func (d *reqScanner) rawString(sp jsonSpan) string {
	s, e := sp.rawBounds()
	return d.view(s, e)
}

// isTrue reports whether sp is the literal true.
func (d *reqScanner) isTrue(sp jsonSpan) bool {
	return sp.kind == jsonBool && d.data[sp.start] == 't'
}

// result returns the value as the gjson.Result gjson would have given,
// for the checks and error messages shared with the gjson decoders
// (validate.go). An absent value is gjson's non-existent Result.
func (d *reqScanner) result(sp jsonSpan) gjson.Result {
	if sp.kind == jsonAbsent {
		return gjson.Result{}
	}
	r := gjson.Result{Raw: d.rawString(sp)}
	switch sp.kind {
	case jsonNull:
		r.Type = gjson.Null
	case jsonBool:
		r.Type = gjson.False
		if d.isTrue(sp) {
			r.Type = gjson.True
		}
	case jsonNumber:
		r.Type = gjson.Number
		r.Num, _ = strconv.ParseFloat(r.Raw, 64) // as gjson: out of range gives ±Inf
	case jsonString:
		r.Type = gjson.String
		r.Str = d.str(sp)
	default:
		r.Type = gjson.JSON
	}
	return r
}

// kindAt returns the kind of the value starting at data[i].
func (d *reqScanner) kindAt(i int) jsonKind {
	if i >= len(d.data) {
		return jsonAbsent
	}
	return jsonKindOf(d.data[i])
}

// value scans and validates the value at data[i], returning its span and
// the index after it. A syntax error marks the body bad and gives no span,
// so that nothing reads a broken value.
func (d *reqScanner) value(i int) (jsonSpan, int) {
	sp, end, ok := jsonScanValue(d.data, i)
	if !ok {
		d.bad = true
		return jsonSpan{}, end
	}
	return sp, end
}

// first scans the value at data[i] into *dst unless an earlier member of
// the same name already set it, and returns the index after the value.
func (d *reqScanner) first(dst *jsonSpan, i int) int {
	sp, end := d.value(i)
	if dst.kind == jsonAbsent {
		*dst = sp
	}
	return end
}

// bodyMembers opens the members of the request body, an object; the
// error is the 400 for a body that is not one (Chat and Responses word it
// alike).
func (d *reqScanner) bodyMembers() (jsonMembers, *Error) {
	i := jsonSkipSpace(d.data, 0)
	if d.kindAt(i) != jsonObject {
		if _, end, ok := jsonScanValue(d.data, i); ok && jsonScanTail(d.data, end) {
			return jsonMembers{}, BadRequest("request body must be a JSON object")
		}
		return jsonMembers{}, BadRequest("request body is not valid JSON")
	}
	return d.members(i), nil
}

// bodyEnd is the 400 for a body whose members m read (bodyMembers) turned
// out not to be valid JSON; nil when they were.
func (d *reqScanner) bodyEnd(m *jsonMembers) *Error {
	if d.bad || !jsonScanTail(d.data, m.i) {
		return BadRequest("request body is not valid JSON")
	}
	return nil
}

// listAt opens the list of member param (tools, functions), the value at
// data[i]. ok is false when there is no list to read: a null, or a value
// of another type, which is refused with the other fields' errors; end is
// then the index after the value.
func (d *reqScanner) listAt(i int, param string) (a jsonElements, end int, ok bool) {
	switch d.kindAt(i) {
	case jsonArray:
		return jsonOpenArray(d.data, i), i, true
	case jsonNull:
		_, end = d.value(i)
		return a, end, false
	}
	v, end := d.value(i)
	if !d.bad {
		d.fail(oaiAtFields, oaiInvalidType(param, wantArray, d.result(v)))
	}
	return a, end, false
}

// name returns a member name, unescaped when it holds escapes.
func (d *reqScanner) name(raw []byte, esc bool) string {
	if len(raw) == 0 {
		return ""
	}
	if !esc {
		return unsafe.String(&raw[0], len(raw))
	}
	s, _ := d.unescape(raw)
	return s
}

// members returns a reader of the object opening at data[i].
func (d *reqScanner) members(i int) jsonMembers { return jsonOpenObject(d.data, i) }

// nextMember reads the next member name of m, marking the body bad on a
// syntax error. ok is false at the end of the object and once the body is
// bad.
func (d *reqScanner) nextMember(m *jsonMembers) (string, bool) {
	if d.bad {
		return "", false
	}
	raw, esc, ok := m.next()
	if !ok {
		if m.bad {
			d.bad = true
		}
		return "", false
	}
	return d.name(raw, esc), true
}

// nextElement moves a to its next element, marking the body bad on a
// syntax error.
func (d *reqScanner) nextElement(a *jsonElements) bool {
	if d.bad {
		return false
	}
	if a.next() {
		return true
	}
	if a.bad {
		d.bad = true
	}
	return false
}

// pickAt walks the value at data[i] and returns the index after it. When
// it is an object, out[k] receives the span of its first member named
// names[k]; the other members are validated and skipped.
func (d *reqScanner) pickAt(i int, out []jsonSpan, names ...string) int {
	if d.kindAt(i) != jsonObject {
		_, end := d.value(i)
		return end
	}
	m := d.members(i)
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			break
		}
		k := 0
		for k < len(names) && names[k] != key {
			k++
		}
		if k < len(names) {
			m.i = d.first(&out[k], m.i)
		} else {
			_, m.i = d.value(m.i)
		}
	}
	return m.i
}

// pick is pickAt on a value already scanned.
func (d *reqScanner) pick(sp jsonSpan, out []jsonSpan, names ...string) {
	if sp.kind == jsonObject {
		d.pickAt(sp.start, out, names...)
	}
}

// get returns the first member named name of an object already scanned
// (gjson's Get with a one-name path).
func (d *reqScanner) get(sp jsonSpan, name string) jsonSpan {
	var out [1]jsonSpan
	d.pick(sp, out[:], name)
	return out[0]
}

// getPath returns what gjson's Get gives for the path outer.inner on an
// object already scanned: the first member named inner of the first
// member named outer that is an object and has one.
func (d *reqScanner) getPath(sp jsonSpan, outer, inner string) jsonSpan {
	if sp.kind != jsonObject {
		return jsonSpan{}
	}
	m := d.members(sp.start)
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			return jsonSpan{}
		}
		if key == outer && d.kindAt(m.i) == jsonObject {
			var out [1]jsonSpan
			m.i = d.pickAt(m.i, out[:], inner)
			if out[0].kind != jsonAbsent {
				return out[0]
			}
			continue
		}
		_, m.i = d.value(m.i)
	}
}

// each yields what gjson's ForEach would: the elements of an array, the
// member values of an object, and any other value itself. The value must
// have been scanned.
func (d *reqScanner) each(sp jsonSpan) iter.Seq[jsonSpan] {
	return func(yield func(jsonSpan) bool) {
		switch sp.kind {
		case jsonAbsent:
		case jsonArray:
			a := jsonOpenArray(d.data, sp.start)
			for d.nextElement(&a) {
				var v jsonSpan
				v, a.i = d.value(a.i)
				if !yield(v) {
					return
				}
			}
		case jsonObject:
			m := d.members(sp.start)
			for {
				if _, ok := d.nextMember(&m); !ok {
					return
				}
				var v jsonSpan
				v, m.i = d.value(m.i)
				if !yield(v) {
					return
				}
			}
		default:
			yield(sp)
		}
	}
}

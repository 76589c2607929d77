package translate

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/louter/louter/internal/jsonwire"
)

// This file holds the primitives of the single-pass JSON scanners the stream
// decoders use on their hot path (openai_chat_stream_scan.go,
// anthropic_stream_scan.go). A stream is thousands of small events; with
// gjson each one cost a validation pass, a copy of the event into a string
// and one more scan per nesting level. The scanners walk an event once,
// validate all of it on the way and note where the few values a decoder
// needs are, so that only those are copied out.
//
// Acceptance is exactly gjson.ValidBytes': RFC 8259 syntax with the four
// JSON whitespace bytes, strings may hold any byte from 0x20 up (UTF-8 is
// not checked), no nesting limit. Unescaping is exactly gjson's, so a value
// reads the same whichever path decoded it. The fuzz tests hold both to
// gjson.

// jsonKind is the kind of a JSON value, told by its first byte.
type jsonKind uint8

const (
	jsonAbsent jsonKind = iota // the member was not there
	jsonNull
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

// jsonSpan locates one scanned value in the event. For a string, start and
// end enclose its contents without the quotes, esc says whether they hold
// escapes and high whether they may hold bytes from 0x80 up (false means
// plain ASCII); for other kinds they enclose the raw value.
type jsonSpan struct {
	start, end int
	kind       jsonKind
	esc        bool
	high       bool
}

// bytes returns the spanned bytes of data.
func (s jsonSpan) bytes(data []byte) []byte { return data[s.start:s.end] }

// str returns a string value as a fresh string ("" for other kinds): the
// scanned event lives in a buffer the SSE parser reuses, and the IR keeps
// its strings. scratch is reused for unescaping.
func (s jsonSpan) str(data []byte, scratch *[]byte) string {
	if s.kind != jsonString || s.start == s.end {
		return ""
	}
	if !s.esc {
		return string(data[s.start:s.end])
	}
	*scratch = jsonUnescape((*scratch)[:0], data[s.start:s.end])
	return string(*scratch)
}

// jsonIsSpace reports whether c is JSON whitespace. The first test
// settles the usual case, a byte past the space, in one comparison:
// machine-written chunks have no whitespace between tokens.
func jsonIsSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t')
}

// trimSpace is bytes.TrimSpace without its call for the usual event
// data, which starts with '{' and ends with '}': bytes that are printable
// ASCII at both ends are no space, Unicode's included, whose UTF-8 bytes
// are not ASCII.
func trimSpace(data []byte) []byte {
	if n := len(data); n > 0 && data[0]-0x21 < 0x7f-0x21 && data[n-1]-0x21 < 0x7f-0x21 {
		return data
	}
	return bytes.TrimSpace(data)
}

// jsonSkipSpace returns the index of the first non-whitespace byte of data
// at or after i.
func jsonSkipSpace(data []byte, i int) int {
	for i < len(data) && jsonIsSpace(data[i]) {
		i++
	}
	return i
}

// jsonKindOf tells the kind of the value starting with c; jsonAbsent means
// no value can start with c.
func jsonKindOf(c byte) jsonKind {
	switch c {
	case '"':
		return jsonString
	case '{':
		return jsonObject
	case '[':
		return jsonArray
	case 'n':
		return jsonNull
	case 't', 'f':
		return jsonBool
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return jsonNumber
	}
	return jsonAbsent
}

// jsonStringSpecial marks the bytes a string scan stops at: the closing
// quote, a backslash and the control characters JSON forbids in strings.
var jsonStringSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// jsonScanString scans a string whose opening quote is at data[i-1]. It
// returns the index of the closing quote, whether escapes occur, and
// whether bytes from 0x80 up may occur (it may say so of a string that has
// none, as the words read can reach past its end, never the reverse).
func jsonScanString(data []byte, i int) (end int, esc, high, ok bool) {
	var seen uint64 // the bytes read, OR-ed together, for high
	for {
		// Eight bytes at a time while none is special, then byte by byte.
		for i+8 <= len(data) {
			v := binary.LittleEndian.Uint64(data[i:])
			seen |= v
			if m := jsonwire.SpecialBytes(v); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(data) && !jsonStringSpecial[data[i]] {
			seen |= uint64(data[i])
			i++
		}
		high = seen&0x8080808080808080 != 0
		if i >= len(data) {
			return i, esc, high, false
		}
		switch data[i] {
		case '"':
			return i, esc, high, true
		case '\\':
			esc = true
			i++
			if i >= len(data) {
				return i, esc, high, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(data) || !jsonIsHex(data[i+1]) || !jsonIsHex(data[i+2]) || !jsonIsHex(data[i+3]) || !jsonIsHex(data[i+4]) {
					return i, esc, high, false
				}
				i += 5
			default:
				return i, esc, high, false
			}
		default: // a control character
			return i, esc, high, false
		}
	}
}

func jsonIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func jsonIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// jsonScanNumber scans a number starting at data[i] and returns the index
// after it.
func jsonScanNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data) || !jsonIsDigit(data[i]):
		return i, false
	case data[i] == '0':
		i++
	default:
		for i < len(data) && jsonIsDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !jsonIsDigit(data[i]) {
			return i, false
		}
		for i < len(data) && jsonIsDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !jsonIsDigit(data[i]) {
			return i, false
		}
		for i < len(data) && jsonIsDigit(data[i]) {
			i++
		}
	}
	return i, true
}

// jsonScanLiteral scans lit (true, false or null) at data[i].
func jsonScanLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// jsonScanValue scans and validates the value starting at data[i] (no
// leading whitespace) and returns its span and the index after it. Objects
// and arrays are validated all the way down.
func jsonScanValue(data []byte, i int) (jsonSpan, int, bool) {
	if i >= len(data) {
		return jsonSpan{}, i, false
	}
	sp := jsonSpan{start: i, kind: jsonKindOf(data[i])}
	var ok bool
	switch sp.kind {
	case jsonString:
		var end int
		end, sp.esc, sp.high, ok = jsonScanString(data, i+1)
		sp.start, sp.end = i+1, end
		return sp, end + 1, ok
	case jsonObject, jsonArray:
		i, ok = jsonSkipContainer(data, i)
	case jsonNumber:
		i, ok = jsonScanNumber(data, i)
	case jsonNull:
		i, ok = jsonScanLiteral(data, i, "null")
	case jsonBool:
		if data[i] == 't' {
			i, ok = jsonScanLiteral(data, i, "true")
		} else {
			i, ok = jsonScanLiteral(data, i, "false")
		}
	}
	sp.end = i
	return sp, i, ok
}

// jsonSkipContainer validates the object or array opening at data[i] and
// returns the index after it. It keeps its own stack of open containers
// rather than recursing.
func jsonSkipContainer(data []byte, i int) (int, bool) {
	var st jsonStack
	st.push(data[i] == '{')
	i++
	first := true // just after '{' or '[': the container may close at once
	for {
		// Here a member (in an object) or an element (in an array) starts.
		i = jsonSkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		obj := st.top()
		if first && data[i] == jsonCloser(obj) {
			i++
			st.pop()
		} else {
			if obj {
				if data[i] != '"' {
					return i, false
				}
				end, _, _, ok := jsonScanString(data, i+1)
				if !ok {
					return end, false
				}
				i = jsonSkipSpace(data, end+1)
				if i >= len(data) || data[i] != ':' {
					return i, false
				}
				i = jsonSkipSpace(data, i+1)
				if i >= len(data) {
					return i, false
				}
			}
			if c := data[i]; c == '{' || c == '[' {
				st.push(c == '{')
				i++
				first = true
				continue
			}
			var ok bool
			if i, ok = jsonSkipValue(data, i); !ok {
				return i, false
			}
		}
		first = false
		// After a value: a comma, or the closing of its container (and
		// maybe of the containers around it).
		for {
			if st.depth == 0 {
				return i, true
			}
			i = jsonSkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			if data[i] == ',' {
				i++
				break
			}
			if data[i] != jsonCloser(st.top()) {
				return i, false
			}
			i++
			st.pop()
		}
	}
}

func jsonCloser(obj bool) byte {
	if obj {
		return '}'
	}
	return ']'
}

// jsonStack records which open containers are objects: one bit per level
// while they fit in a word, a slice beyond.
type jsonStack struct {
	bits  uint64
	deep  []bool
	depth int
}

func (s *jsonStack) push(obj bool) {
	if s.depth < 64 {
		if obj {
			s.bits |= 1 << s.depth
		} else {
			s.bits &^= 1 << s.depth
		}
	} else {
		s.deep = append(s.deep[:s.depth-64], obj)
	}
	s.depth++
}

func (s *jsonStack) pop() { s.depth-- }

func (s *jsonStack) top() bool {
	d := s.depth - 1
	if d < 64 {
		return s.bits&(1<<d) != 0
	}
	return s.deep[d-64]
}

// jsonMembers reads the members of an object one by one, validating as it
// goes. After next returns a name, the member's value starts at i: the
// caller reads it with value, or walks it with its own reader and sets i
// past it.
type jsonMembers struct {
	data []byte
	i    int
	n    int  // members read so far
	bad  bool // a syntax error was found
}

// jsonOpenObject starts reading the object opening at data[i] ('{').
func jsonOpenObject(data []byte, i int) jsonMembers { return jsonMembers{data: data, i: i + 1} }

// next reads the name of the next member and its colon. ok is false at the
// end of the object (then i is past it) and on a syntax error (then bad is
// set). esc reports escapes in the name, which is returned raw.
func (m *jsonMembers) next() (name []byte, esc, ok bool) {
	data := m.data
	i := jsonSkipSpace(data, m.i)
	if i < len(data) && data[i] == '}' {
		m.i = i + 1
		return nil, false, false
	}
	if m.n > 0 {
		if i >= len(data) || data[i] != ',' {
			m.bad = true
			return nil, false, false
		}
		i = jsonSkipSpace(data, i+1)
	}
	if i >= len(data) || data[i] != '"' {
		m.bad = true
		return nil, false, false
	}
	end, esc, _, ok := jsonScanString(data, i+1)
	if !ok {
		m.bad = true
		return nil, false, false
	}
	name = data[i+1 : end]
	i = jsonSkipSpace(data, end+1)
	if i >= len(data) || data[i] != ':' {
		m.bad = true
		return nil, false, false
	}
	m.i = jsonSkipSpace(data, i+1)
	m.n++
	return name, esc, true
}

// peek returns the kind of the value at i.
func (m *jsonMembers) peek() jsonKind {
	if m.i >= len(m.data) {
		return jsonAbsent
	}
	return jsonKindOf(m.data[m.i])
}

// value reads and validates the value at i.
func (m *jsonMembers) value() (jsonSpan, bool) {
	sp, i, ok := jsonScanValue(m.data, m.i)
	m.i = i
	if !ok {
		m.bad = true
	}
	return sp, ok
}

// jsonElements reads the elements of an array one by one, as jsonMembers
// does an object's members.
type jsonElements struct {
	data []byte
	i    int
	n    int
	bad  bool
}

// jsonOpenArray starts reading the array opening at data[i] ('[').
func jsonOpenArray(data []byte, i int) jsonElements { return jsonElements{data: data, i: i + 1} }

// next moves to the next element, which then starts at i. It is false at
// the end of the array (then i is past it) and on a syntax error (then bad
// is set).
func (a *jsonElements) next() bool {
	data := a.data
	i := jsonSkipSpace(data, a.i)
	if i < len(data) && data[i] == ']' {
		a.i = i + 1
		return false
	}
	if a.n > 0 {
		if i >= len(data) || data[i] != ',' {
			a.bad = true
			return false
		}
		i = jsonSkipSpace(data, i+1)
	}
	if i >= len(data) {
		a.bad = true
		return false
	}
	a.i = i
	a.n++
	return true
}

// peek returns the kind of the element at i.
func (a *jsonElements) peek() jsonKind { return jsonKindOf(a.data[a.i]) }

// jsonScanTail reports whether data[i:] holds nothing but whitespace,
// as after the top-level value.
func jsonScanTail(data []byte, i int) bool {
	return jsonSkipSpace(data, i) == len(data)
}

// jsonSmallInt reads an integer literal of at most 15 digits, the numbers
// whose value gjson's Int gives exactly. ok is false for anything else
// (fractions, exponents, longer literals), which the scanners leave to
// gjson.
func jsonSmallInt(raw []byte) (n int64, ok bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 15 {
		return 0, false
	}
	for _, c := range raw {
		if !jsonIsDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

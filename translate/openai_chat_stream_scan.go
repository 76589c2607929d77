package translate

// oaiChunkScan is what the stream decoder's fast path reads from one
// chat.completion.chunk, located by one validating pass over it (see
// json_scan.go). Only the common shape is taken: one choice at most, plain
// member names, no member twice, tool calls as an array of objects. Any
// other chunk, valid or not, is left to the gjson path (decodeGJSON), which
// defines the behaviour; the scanner only has to recognise what it takes.
type oaiChunkScan struct {
	oaiChunkRead

	// rec is the reader state where this chunk's delta object starts;
	// memo is that of an earlier chunk, kept across scans.
	rec  oaiScanResume
	memo oaiScanResume
	// tail is the reading of what follows the delta object in a chunk
	// resumed from memo.
	tail oaiScanTail
}

// oaiScanTail is what a resumed scan read after the delta object: the
// rest of the choice, of the choices array and of the chunk. A stream's
// text chunks end alike (`,"logprobs":null,"finish_reason":null}]}`), and
// the scan of those bytes from the same state (memo's, at the end of a
// delta object) reads the same, only moved with the delta's length; so a
// chunk whose bytes after its delta are the tail's is read from the tail
// instead of scanned.
type oaiScanTail struct {
	bytes []byte // the bytes after the delta object
	at    int    // where they started in their chunk; 0: no tail

	// What the scan had read once through them. Spans at or after at
	// are in the tail and move with it; the others are in memo's prefix.
	id, model, usage, finish jsonSpan
	index                    int64
}

// record keeps data[at:] as the tail, with the reading c ends with.
func (t *oaiScanTail) record(c *oaiChunkScan, data []byte, at int) {
	t.bytes = append(t.bytes[:0], data[at:]...)
	t.at = at
	t.id, t.model, t.usage, t.finish, t.index = c.id, c.model, c.usage, c.finish, c.index
}

// read sets c's reading of a chunk whose tail starts at at. It sets
// every member resume would have taken from the memo, so that a chunk read
// from the tail takes nothing from it.
func (t *oaiScanTail) read(c *oaiChunkScan, at int) {
	// One assignment each: a tuple assignment copies its spans through
	// temporaries first.
	c.id = t.id
	c.model = t.model
	c.usage = t.usage
	c.finish = t.finish
	c.index = t.index
	if at != t.at {
		d := at - t.at
		t.move(&c.id, d)
		t.move(&c.model, d)
		t.move(&c.usage, d)
		t.move(&c.finish, d)
	}
}

// move shifts sp by d when it lies in the tail. Spans in the memo's
// prefix stay where they are.
func (t *oaiScanTail) move(sp *jsonSpan, d int) {
	if sp.start >= t.at {
		sp.start += d
		sp.end += d
	}
}

// oaiChunkRead is what a scan reads from a chunk.
type oaiChunkRead struct {
	id, model, usage jsonSpan

	hasChoice bool
	index     int64 // the choice's index
	content   jsonSpan
	refusal   jsonSpan
	reasoning jsonSpan // reasoning_content
	reasonAlt jsonSpan // reasoning
	finish    jsonSpan
	calls     []oaiCallScan
}

// oaiScanResume is the state of a scan at the start of the choice's delta
// object, from which a later chunk with the same bytes before it resumes.
// A stream's chunks differ almost only in their deltas: their id, object,
// created, model and choice index come first and repeat, and reading them
// again would give the same result, so the scan compares those bytes
// instead of reading them.
type oaiScanResume struct {
	prefix []byte // the chunk up to the delta object; empty: no state
	at     int    // len(prefix) once recorded

	id, model, usage, finish jsonSpan
	index                    int64

	top        jsonMembers // inside the chunk object, at the choices array
	topSeen    uint8
	choices    jsonElements // at the choice
	choice     jsonMembers  // inside the choice object, at the delta
	choiceSeen uint8
}

// oaiCallScan is one tool_calls[] fragment.
type oaiCallScan struct {
	hasIndex bool
	index    int64
	id       jsonSpan
	name     jsonSpan
	args     jsonSpan
}

// Bits of the members a scanned object has had, to refuse repeated names:
// gjson's lookups and its iteration disagree on which of two wins.
const (
	oaiSeen1 uint8 = 1 << iota
	oaiSeen2
	oaiSeen3
	oaiSeen4
	oaiSeen5
	oaiSeen6
)

// scan reads data. It returns false when data is not valid JSON or not of
// the common shape.
func (c *oaiChunkScan) scan(data []byte) bool {
	c.oaiChunkRead = oaiChunkRead{calls: c.calls[:0]}
	c.rec.at = 0 // the rest of rec is set along with it
	if ok, resumed := c.resume(data); resumed {
		return ok
	}
	i := jsonSkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	m := jsonOpenObject(data, i)
	if !c.scanMembers(&m, 0) {
		return false
	}
	if c.rec.at > 0 {
		// Keep this chunk's state for the next one. The buffers swap so
		// that neither is allocated again.
		c.rec.prefix = append(c.rec.prefix[:0], data[:c.rec.at]...)
		c.memo, c.rec = c.rec, oaiScanResume{prefix: c.memo.prefix[:0]}
		c.tail.at = 0 // read from the state of another prefix
	}
	return true
}

// resume scans data from the memo's state when data starts with the memo's
// prefix followed by a delta object. resumed reports whether it did; ok is
// then the scan's result.
func (c *oaiChunkScan) resume(data []byte) (ok, resumed bool) {
	r := &c.memo
	if r.at == 0 || len(data) <= r.at || data[r.at] != '{' || string(data[:r.at]) != string(r.prefix) {
		return false, false
	}
	c.hasChoice = true
	j, ok := c.scanDelta(data, r.at) // reads only the delta's members
	if !ok {
		return false, true
	}
	if t := &c.tail; t.at > 0 && string(data[j:]) == string(t.bytes) {
		t.read(c, j)
		return true, true
	}
	c.id, c.model, c.usage, c.finish, c.index = r.id, r.model, r.usage, r.finish, r.index
	cm := r.choice
	cm.data, cm.i = data, j
	i, ok := c.scanChoiceMembers(&cm, r.choiceSeen|oaiSeen2)
	if !ok {
		return false, true
	}
	a := r.choices
	a.data, a.i = data, i
	if !c.scanChoiceElements(&a) {
		return false, true
	}
	m := r.top
	m.data, m.i = data, a.i
	if !c.scanMembers(&m, r.topSeen|oaiSeen5) {
		return false, true
	}
	c.tail.record(c, data, j)
	return true, true
}

// scanMembers reads the chunk object's members from m on; seen has the
// members already read.
func (c *oaiChunkScan) scanMembers(m *jsonMembers, seen uint8) bool {
	data := m.data
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return false
		}
		var bit uint8
		var dst *jsonSpan
		switch string(name) {
		case "id":
			bit, dst = oaiSeen1, &c.id
		case "model":
			bit, dst = oaiSeen2, &c.model
		case "usage":
			bit, dst = oaiSeen3, &c.usage
		case "error":
			// Only a null error is taken; an error is for the gjson path.
			if m.peek() != jsonNull {
				return false
			}
			bit = oaiSeen4
		case "choices":
			bit = oaiSeen5
			if seen&bit != 0 {
				return false
			}
			c.rec.top, c.rec.topSeen = *m, seen
			if !c.scanChoices(m) {
				return false
			}
			seen |= bit
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		sp, ok := m.value()
		if !ok {
			return false
		}
		if dst != nil {
			*dst = sp
		}
	}
	return !m.bad && jsonScanTail(data, m.i)
}

func (c *oaiChunkScan) scanChoices(m *jsonMembers) bool {
	switch m.peek() {
	case jsonNull:
		_, ok := m.value()
		return ok
	case jsonArray:
	default:
		return false
	}
	a := jsonOpenArray(m.data, m.i)
	if !c.scanChoiceElements(&a) {
		return false
	}
	m.i = a.i
	return true
}

// scanChoiceElements reads the choices array's elements from a on.
func (c *oaiChunkScan) scanChoiceElements(a *jsonElements) bool {
	for a.next() {
		if c.hasChoice || a.peek() != jsonObject {
			return false
		}
		c.hasChoice = true
		c.rec.choices = *a
		i, ok := c.scanChoice(a.data, a.i)
		if !ok {
			return false
		}
		a.i = i
	}
	return !a.bad
}

func (c *oaiChunkScan) scanChoice(data []byte, i int) (int, bool) {
	m := jsonOpenObject(data, i)
	return c.scanChoiceMembers(&m, 0)
}

// scanChoiceMembers reads the choice object's members from m on; seen has
// the members already read.
func (c *oaiChunkScan) scanChoiceMembers(m *jsonMembers, seen uint8) (int, bool) {
	data := m.data
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return 0, false
		}
		var bit uint8
		switch string(name) {
		case "index":
			bit = oaiSeen1
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return 0, false
			}
			switch sp.kind {
			case jsonNull: // reads as 0
			case jsonNumber:
				if c.index, ok = jsonSmallInt(sp.bytes(data)); !ok {
					return 0, false
				}
			default:
				return 0, false
			}
		case "delta":
			bit = oaiSeen2
			switch {
			case seen&bit != 0:
				return 0, false
			case m.peek() == jsonObject:
				c.rec.id, c.rec.model, c.rec.usage, c.rec.finish, c.rec.index = c.id, c.model, c.usage, c.finish, c.index
				c.rec.choice, c.rec.choiceSeen, c.rec.at = *m, seen, m.i
				j, ok := c.scanDelta(data, m.i)
				if !ok {
					return 0, false
				}
				m.i = j
			case m.peek() == jsonNull:
				if _, ok := m.value(); !ok {
					return 0, false
				}
			default:
				return 0, false
			}
		case "finish_reason":
			bit = oaiSeen3
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return 0, false
			}
			c.finish = sp
		default:
			if _, ok := m.value(); !ok {
				return 0, false
			}
		}
		seen |= bit
	}
	return m.i, !m.bad
}

func (c *oaiChunkScan) scanDelta(data []byte, i int) (int, bool) {
	m := jsonOpenObject(data, i)
	var seen uint8
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return 0, false
		}
		var bit uint8
		var dst *jsonSpan
		switch string(name) {
		case "content":
			bit, dst = oaiSeen1, &c.content
		case "refusal":
			bit, dst = oaiSeen2, &c.refusal
		case "reasoning_content":
			bit, dst = oaiSeen3, &c.reasoning
		case "reasoning":
			bit, dst = oaiSeen4, &c.reasonAlt
		case "reasoning_details":
			return 0, false // rare: the gjson path gathers its texts
		case "tool_calls":
			if seen&oaiSeen5 != 0 || m.peek() != jsonArray {
				return 0, false
			}
			seen |= oaiSeen5
			a := jsonOpenArray(data, m.i)
			for a.next() {
				if a.peek() != jsonObject {
					return 0, false
				}
				j, ok := c.scanCall(data, a.i)
				if !ok {
					return 0, false
				}
				a.i = j
			}
			if a.bad {
				return 0, false
			}
			m.i = a.i
			continue
		}
		if seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		sp, ok := m.value()
		if !ok {
			return 0, false
		}
		if dst != nil {
			*dst = sp
		}
	}
	return m.i, !m.bad
}

func (c *oaiChunkScan) scanCall(data []byte, i int) (int, bool) {
	var call oaiCallScan
	m := jsonOpenObject(data, i)
	var seen uint8
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return 0, false
		}
		var bit uint8
		switch string(name) {
		case "index":
			bit = oaiSeen1
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return 0, false
			}
			switch sp.kind {
			case jsonNull: // no index
			case jsonNumber:
				if call.index, ok = jsonSmallInt(sp.bytes(data)); !ok {
					return 0, false
				}
				call.hasIndex = true
			default:
				return 0, false
			}
		case "id":
			bit = oaiSeen2
			sp, ok := m.value()
			if !ok || seen&bit != 0 {
				return 0, false
			}
			call.id = sp
		case "function":
			bit = oaiSeen3
			if seen&bit != 0 {
				return 0, false
			}
			if m.peek() != jsonObject {
				// The gjson path reads nothing from a function that is not
				// an object.
				if _, ok := m.value(); !ok {
					return 0, false
				}
				break
			}
			j, ok := call.scanFunction(data, m.i)
			if !ok {
				return 0, false
			}
			m.i = j
		default:
			if _, ok := m.value(); !ok {
				return 0, false
			}
		}
		seen |= bit
	}
	if m.bad {
		return 0, false
	}
	c.calls = append(c.calls, call)
	return m.i, true
}

func (call *oaiCallScan) scanFunction(data []byte, i int) (int, bool) {
	m := jsonOpenObject(data, i)
	var seen uint8
	for {
		name, esc, more := m.next()
		if !more {
			break
		}
		if esc {
			return 0, false
		}
		var bit uint8
		var dst *jsonSpan
		switch string(name) {
		case "name":
			bit, dst = oaiSeen1, &call.name
		case "arguments":
			bit, dst = oaiSeen2, &call.args
		}
		if seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		sp, ok := m.value()
		if !ok {
			return 0, false
		}
		if dst != nil {
			*dst = sp
		}
	}
	return m.i, !m.bad
}

// arguments returns a fragment's arguments as oaiArguments does: a string's
// text, or the raw text of an object or array some servers send instead.
func (call *oaiCallScan) arguments(data []byte, scratch *[]byte) string {
	switch call.args.kind {
	case jsonString:
		return call.args.str(data, scratch)
	case jsonObject, jsonArray:
		return string(call.args.bytes(data))
	}
	return ""
}

package dialect

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// callForm is how a text tool call opened.
type callForm uint8

const (
	formWrapped callForm = iota + 1 // <tool_call>…</tool_call>
	formBare                        // <function=NAME>…</function>
)

// callPhase is how far into a buffered call the scan has come.
type callPhase uint8

const (
	phaseHeader    callPhase = iota // bare: reading NAME up to '>'
	phaseBodyStart                  // whitespace before the body's first byte
	phaseBody                       // looking for the closing marker
)

// callVerdict is what the bytes buffered so far say about a call.
type callVerdict uint8

const (
	callPending  callVerdict = iota // undecided: more input is needed
	callComplete                    // closed: parse it
	callRejected                    // not a call: its opening marker is text
)

// callBuffer is the text tool call being buffered, from its opening marker
// on. The scan offset makes each new chunk cost only its own bytes (plus a
// marker's worth of overlap), however long the call grows.
type callBuffer struct {
	buf       []byte
	form      callForm
	phase     callPhase
	scan      int          // buf[:scan] has been looked at
	inParam   bool         // bare: inside a parameter value not yet closed
	headerEnd int          // bare: offset after the '>' of <function=NAME>
	origin    contentState // stText or stReasoning, resumed when this is no call

	fed   string // the chunk appended last
	fedAt int    // its offset in buf
}

// add appends the next chunk of input.
func (c *callBuffer) add(s string) {
	c.fed, c.fedAt = s, len(c.buf)
	c.buf = append(c.buf, s...)
}

// from returns the input from offset n of buf on, for the state that comes
// next. What is in the last chunk is returned as it came, not copied: a
// chunk holding many short calls would otherwise be copied once per call.
func (c *callBuffer) from(n int) string {
	if n >= c.fedAt {
		return c.fed[n-c.fedAt:]
	}
	return string(c.buf[n:c.fedAt]) + c.fed
}

func (c *callBuffer) reset() {
	c.fed = ""
	// A huge call should not pin its memory for the rest of the stream.
	if cap(c.buf) > 64<<10 {
		c.buf = nil
	}
	c.buf = c.buf[:0]
}

func (c *callBuffer) originKind() SegmentKind {
	if c.origin == stReasoning {
		return SegmentReasoning
	}
	return SegmentText
}

func (c *callBuffer) openerLen() int {
	if c.form == formBare {
		return len(tagFunction)
	}
	return len(tagToolCall)
}

var toolCallEndMarkers = []string{tagToolCallEnd}

func (p *ContentParser) beginCall(marker string, origin contentState) {
	c := &p.call
	c.buf = c.buf[:0]
	c.scan = len(marker)
	c.inParam = false
	c.headerEnd = 0
	c.origin = origin
	if marker == tagToolCall {
		c.form, c.phase = formWrapped, phaseBodyStart
	} else {
		c.form, c.phase = formBare, phaseHeader
	}
	p.state = stCall
}

func (p *ContentParser) callStep(dst []Segment, s string) ([]Segment, string) {
	c := &p.call
	c.add(s)
	end, verdict, why := p.advanceCall()
	// Every verdict is reached at the byte that decides it, so comparing
	// that offset with the limit gives the same outcome however the
	// content was split.
	if end > p.maxCall || (verdict == callPending && len(c.buf) > p.maxCall) {
		p.warnf("content: a tool call longer than %d bytes was released as text", p.maxCall)
		return p.releaseCall(dst, runeCut(c.buf, p.maxCall))
	}
	switch verdict {
	case callPending:
		return dst, ""
	case callRejected:
		if why != "" {
			p.warnf("content: %s; kept as text", why)
		}
		return p.releaseCall(dst, c.openerLen())
	}
	raw := string(c.buf[:end])
	rest := c.from(end)
	n := len(dst)
	dst, err := p.appendCall(dst, raw)
	if err != nil {
		p.warnf("content: malformed tool call kept as text: %v", err)
		dst = p.releaseText(dst[:n], raw)
	} else {
		p.state = stAfterCall
	}
	c.reset()
	return dst, rest
}

// releaseCall gives up on the buffered call: its first n bytes go out as
// the text they were, and the rest is scanned again by the state the call
// interrupted.
func (p *ContentParser) releaseCall(dst []Segment, n int) ([]Segment, string) {
	c := &p.call
	dst = p.releaseText(dst, string(c.buf[:n]))
	rest := c.from(n)
	c.reset()
	return dst, rest
}

// releaseText emits what was no call as the kind of content it interrupted,
// and resumes that content.
func (p *ContentParser) releaseText(dst []Segment, s string) []Segment {
	c := &p.call
	p.state = c.origin
	if c.origin == stReasoning && s != "" {
		p.reasonLead = false
	}
	return appendSegment(dst, c.originKind(), s)
}

// advanceCall scans the bytes that arrived since the last call and returns
// the verdict with the offset just past the byte that decided it.
func (p *ContentParser) advanceCall() (end int, verdict callVerdict, why string) {
	c := &p.call
	if c.form == formBare {
		return p.advanceFunction()
	}
	if c.phase == phaseBodyStart {
		i := c.scan
		for i < len(c.buf) && isSpace(c.buf[i]) {
			i++
		}
		c.scan = i
		if i == len(c.buf) {
			return 0, callPending, ""
		}
		if c.buf[i] != '{' && c.buf[i] != '[' {
			ok, pending, decided := startsWithAny(c.buf, i, wrappedBodyOpeners)
			if pending {
				return 0, callPending, ""
			}
			if !ok {
				return decided, callRejected, "<tool_call> holds neither JSON nor <function="
			}
		}
		c.phase = phaseBody
	}
	at, k := scanMarkersBytes(c.buf, c.scan, toolCallEndMarkers)
	c.scan = at
	if k < 0 {
		return 0, callPending, ""
	}
	return at + len(tagToolCallEnd), callComplete, ""
}

// appendCall parses a closed call, raw being its whole markup.
func (p *ContentParser) appendCall(dst []Segment, raw string) ([]Segment, error) {
	c := &p.call
	if c.form == formBare {
		seg, err := p.functionCall(raw[len(tagFunction):c.headerEnd-1], raw[c.headerEnd:len(raw)-len(tagFunctionEnd)])
		if err != nil {
			return dst, err
		}
		return append(dst, seg), nil
	}
	return p.appendWrappedCall(dst, strings.TrimSpace(raw[len(tagToolCall):len(raw)-len(tagToolCallEnd)]))
}

// appendWrappedCall parses the body of a <tool_call> block by its shape.
func (p *ContentParser) appendWrappedCall(dst []Segment, body string) ([]Segment, error) {
	if !strings.HasPrefix(body, tagFunction) {
		return appendHermesCalls(dst, body)
	}
	seg, err := p.wrappedFunction(body)
	if err != nil {
		return dst, err
	}
	return append(dst, seg), nil
}

// closeCall ends a call still open at the end of the content. It returns
// the text that followed a call recovered from a bare block, to be parsed.
func (p *ContentParser) closeCall(dst []Segment) ([]Segment, string) {
	c := &p.call
	raw := string(c.buf)
	n := len(dst)
	var rest string
	var err error
	switch {
	case c.phase != phaseBody:
		err = errors.New("the content ended inside its opening")
	case c.form == formWrapped:
		body := strings.TrimSpace(raw[len(tagToolCall):])
		if strings.HasPrefix(body, tagFunction) && !strings.Contains(body, tagFunctionEnd) {
			err = errors.New("no " + tagFunctionEnd)
		} else {
			dst, err = p.appendWrappedCall(dst, body)
		}
	default:
		// No structural </function> came: the last one, inside a value
		// never closed, is the best guess there is.
		body := raw[c.headerEnd:]
		k := strings.LastIndex(body, tagFunctionEnd)
		if k < 0 {
			err = errors.New("no " + tagFunctionEnd)
			break
		}
		var seg Segment
		if seg, err = p.functionCall(raw[len(tagFunction):c.headerEnd-1], body[:k]); err == nil {
			dst = append(dst, seg)
			rest = body[k+len(tagFunctionEnd):]
		}
	}
	if err != nil {
		if c.phase != phaseHeader || p.bareAny || c.form == formWrapped {
			p.warnf("content: unfinished tool call kept as text: %v", err)
		}
		dst = p.releaseText(dst[:n], raw)
		rest = ""
	} else {
		p.warnf("content: tool call not closed when the content ended; parsed anyway")
		p.state = stAfterCall
	}
	c.reset()
	return dst, rest
}

// runeCut moves a cut at n back to the start of a UTF-8 sequence, so that
// text released at a size limit does not split a character. It depends
// only on b[:n+1], which every caller has.
func runeCut(b []byte, n int) int {
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

var wrappedBodyOpeners = []string{tagFunction}

// startsWithAny reports whether b[i:] starts with one of tags, or, when b
// ends inside a prefix of one, that it cannot tell yet. When it does not,
// decided is the offset just past the byte that ruled the last tag out.
func startsWithAny(b []byte, i int, tags []string) (ok, pending bool, decided int) {
	longest := 0
	for _, t := range tags {
		n := commonPrefix(b[i:], t)
		if n == len(t) {
			return true, false, i + n
		}
		longest = max(longest, n)
	}
	if i+longest == len(b) {
		return false, true, 0
	}
	return false, false, i + longest + 1
}

// commonPrefix is the length of the common prefix of b and s.
func commonPrefix(b []byte, s string) int {
	n := 0
	for n < len(b) && n < len(s) && b[n] == s[n] {
		n++
	}
	return n
}

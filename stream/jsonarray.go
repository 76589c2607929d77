package stream

import (
	"fmt"
)

// JSONArrayParser is a Framer for streamed JSON arrays: what Gemini's
// streamGenerateContent returns without alt=sse, `[{...},\r\n{...}]`,
// pretty-printed and cut into writes anywhere, even inside a string. Every
// top-level object is one event (with no name). It scans each byte once,
// tracking only the nesting depth and whether it is inside a string, so it
// runs in linear time; only an incomplete object is carried to the next
// Feed, and no object may exceed the size limit. A body that is a single
// object rather than an array (an error answer) is read as one event.
type JSONArrayParser struct {
	MaxEventSize int // 0 means DefaultMaxEventSize

	partial  []byte // the incomplete object carried across Feed calls
	depth    int    // nesting depth inside the current object, 0 outside
	inString bool
	escaped  bool // the previous byte in a string was a backslash
	ended    bool // the closing bracket was seen

	// off is where, in the chunk being fed, the object being dispatched
	// ends. The passthrough watcher cuts the stream there.
	off int
	// onEnd, when set, is called at the closing bracket, in order with
	// the objects before and after it.
	onEnd func()
}

// Feed implements Framer.
func (p *JSONArrayParser) Feed(chunk []byte, fn func(name string, data []byte)) error {
	max := p.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	start := 0 // start of the object in chunk, when one is open
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if p.depth == 0 {
			switch c {
			case '{':
				p.depth, start = 1, i
			case '[', ',', ' ', '\t', '\r', '\n':
			case ']':
				if !p.ended && p.onEnd != nil {
					p.onEnd()
				}
				p.ended = true
			default:
				if !p.ended {
					return fmt.Errorf("stream: unexpected %q between the elements of a JSON array", c)
				}
			}
			continue
		}
		switch {
		case p.inString:
			switch {
			case p.escaped:
				p.escaped = false
			case c == '\\':
				p.escaped = true
			case c == '"':
				p.inString = false
			}
		case c == '"':
			p.inString = true
		case c == '{' || c == '[':
			p.depth++
		case c == '}' || c == ']':
			p.depth--
			if p.depth > 0 {
				continue
			}
			obj := chunk[start : i+1]
			if len(p.partial) > 0 {
				p.partial = append(p.partial, obj...)
				obj = p.partial
			}
			if len(obj) > max {
				return ErrEventTooLarge
			}
			p.off = i + 1
			fn("", obj)
			p.partial = p.partial[:0]
		}
	}
	if p.depth > 0 {
		p.partial = append(p.partial, chunk[start:]...)
		if len(p.partial) > max {
			return ErrEventTooLarge
		}
	}
	return nil
}

// Close implements Framer. An object still open at the end of the body was
// cut; it is dropped, and the stream decoder reports the cut stream.
func (p *JSONArrayParser) Close(func(name string, data []byte)) error {
	p.partial = p.partial[:0]
	p.depth = 0
	return nil
}

// JSONArrayOutput frames a client stream as a streamed JSON array, the way
// Gemini answers streamGenerateContent without alt=sse: "[" before the first
// event, ",\r\n" between events, and "]" at the end (see EndOutput). Each
// event ends with a newline, as Gemini's own do: what sits between louter
// and the client line by line (the secret scrubber, an edge proxy's
// buffers) then passes an event when it is written, not when the next one
// comes.
type JSONArrayOutput struct {
	buf    *[]byte // lent from a pool while in use (output_pool.go)
	n      int     // events written
	closed bool
}

// bytes returns the buffer to append to, borrowing one if needed.
func (o *JSONArrayOutput) bytes() *[]byte {
	if o.buf == nil {
		o.buf = borrowOutput()
	}
	return o.buf
}

// WriteFrame implements translate.FrameWriter. Event names do not exist in
// this framing and are ignored.
func (o *JSONArrayOutput) WriteFrame(_ string, data []byte) {
	if o.closed {
		return
	}
	b := o.bytes()
	if o.n == 0 {
		*b = append(*b, '[')
	} else {
		*b = append(*b, ",\r\n"...)
	}
	o.n++
	*b = append(*b, data...)
	*b = append(*b, '\n')
}

// End closes the array; later frames are ignored. An array without events
// is "[]".
func (o *JSONArrayOutput) End() {
	if o.closed {
		return
	}
	o.closed = true
	b := o.bytes()
	if o.n == 0 {
		*b = append(*b, '[')
	}
	*b = append(*b, "]\n"...)
}

// Bytes implements Output.
func (o *JSONArrayOutput) Bytes() []byte {
	if o.buf == nil {
		return nil
	}
	return *o.buf
}

// Reset implements Output.
func (o *JSONArrayOutput) Reset() {
	if o.buf != nil {
		*o.buf = (*o.buf)[:0]
	}
}

// Release implements Releaser.
func (o *JSONArrayOutput) Release() {
	returnOutput(o.buf)
	o.buf = nil
}

// Ender is implemented by outputs whose framing needs a closing mark after
// the last event (JSONArrayOutput). SSE needs none.
type Ender interface {
	End()
}

// EndOutput writes the closing mark of o's framing, if it has one. The
// Transcoder calls it when the client stream ends; code that encodes a
// stream itself calls it after the last event.
func EndOutput(o Output) {
	if e, ok := o.(Ender); ok {
		e.End()
	}
}

// Interface guards
var (
	_ Framer = (*JSONArrayParser)(nil)
	_ Output = (*JSONArrayOutput)(nil)
	_ Ender  = (*JSONArrayOutput)(nil)
)

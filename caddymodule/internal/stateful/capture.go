package stateful

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/internal/httpx"
)

// captureWriter passes a stateful protocol's answer to the client and keeps
// the one thing the store needs of it: the final response object. Of a
// stream it keeps only the data line of the terminal event
// (response.completed, .incomplete, .failed), which carries the whole
// response; every other line is passed on and forgotten, so a stream
// costs it one line at a time. Of a JSON answer it keeps the body, up to
// maxCapturedJSON.
type captureWriter struct {
	http.ResponseWriter
	flusher httpx.Flusher // the inner writer's flush, found once (internal/httpx)
	status  int
	decided bool // status and framing known
	sse     bool
	skip    bool // not a 200: nothing to keep

	line     []byte // the line being read, while it may be the terminal event's
	lineSkip bool   // the rest of the current line is not wanted
	terminal bool   // the last event line named a terminal event
	final    []byte // the terminal event's data
	body     []byte // a JSON answer

	object string          // the "object" member of the API's stored object
	asm    streamAssembler // reads every data line, when the API needs one

	// complete is called once, when the answer is whole (a stream's
	// terminal event read, a JSON body's Content-Length reached), before
	// the bytes that complete it go to the client: the turn is stored
	// before the client can name it in its next request.
	complete func()
}

// A streamAssembler builds the stored object of a protocol whose stream's
// terminal event does not carry it whole (the Interactions API's
// interaction.completed has no steps): it is given every data line, and
// copies what it keeps.
type streamAssembler interface {
	data(line []byte)
	// done reports whether the stream's terminal event was read.
	done() bool
	// object is the assembled object, or nil when the stream did not
	// complete.
	object() []byte
}

// maxCapturedJSON bounds a JSON answer kept for the store.
const maxCapturedJSON = 64 << 20

// linePeek is how much of a line is read before deciding whether to keep
// it: enough for "data: " and the event's type.
const linePeek = 96

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) decide() {
	if c.decided {
		return
	}
	c.decided = true
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.skip = c.status != http.StatusOK
	c.sse = strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream")
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.decide()
	if !c.skip {
		if c.sse {
			c.scan(p)
		} else if len(c.body)+len(p) <= maxCapturedJSON {
			c.body = append(c.body, p...)
		} else {
			c.skip, c.body = true, nil
		}
		if c.complete != nil && c.whole() {
			done := c.complete
			c.complete = nil
			done()
		}
	}
	return c.ResponseWriter.Write(p)
}

// whole reports whether the answer read so far is complete.
func (c *captureWriter) whole() bool {
	switch {
	case c.skip:
		return false
	case c.sse && c.asm != nil:
		return c.asm.done()
	case c.sse:
		return len(c.final) > 0
	}
	n, err := strconv.Atoi(c.Header().Get("Content-Length"))
	return err == nil && len(c.body) == n
}

// scan reads SSE lines from p.
func (c *captureWriter) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !c.lineSkip {
			c.line = append(c.line, chunk...)
			if i < 0 && len(c.line) >= linePeek && !c.wanted(c.line) {
				c.lineSkip, c.line = true, c.line[:0]
			}
		}
		if i < 0 {
			return
		}
		c.endLine()
		p = p[i+1:]
	}
}

// wanted reports whether a line (or its start) may be the terminal
// event's data.
func (c *captureWriter) wanted(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("data:")) {
		return false
	}
	if c.terminal || c.asm != nil {
		return true
	}
	head := line[:min(len(line), linePeek)]
	return bytes.Contains(head, []byte(`"response.completed"`)) || bytes.Contains(head, []byte(`"response.incomplete"`)) || bytes.Contains(head, []byte(`"response.failed"`))
}

func (c *captureWriter) endLine() {
	line := bytes.TrimSuffix(c.line, []byte("\r"))
	switch {
	case c.lineSkip:
	case bytes.HasPrefix(line, []byte("event:")):
		name := string(bytes.TrimSpace(line[len("event:"):]))
		c.terminal = name == "response.completed" || name == "response.incomplete" || name == "response.failed"
	case bytes.HasPrefix(line, []byte("data:")):
		switch {
		case c.asm != nil:
			c.asm.data(bytes.TrimSpace(line[len("data:"):]))
		case c.wanted(line):
			c.final = append(c.final[:0], bytes.TrimSpace(line[len("data:"):])...)
		}
		c.terminal = false
	}
	c.lineSkip = false
	if cap(c.line) > 64<<10 {
		c.line = nil // a large line is not kept around for the small ones
	} else {
		c.line = c.line[:0]
	}
}

// response returns the response object the client got, or nil.
func (c *captureWriter) response() []byte {
	if c.skip || !c.decided {
		return nil
	}
	if c.sse && c.asm != nil {
		return c.asm.object()
	}
	if c.sse {
		r := gjson.GetBytes(c.final, "response")
		if !r.IsObject() {
			return nil
		}
		return []byte(r.Raw)
	}
	if gjson.GetBytes(c.body, "object").Str != c.object {
		return nil
	}
	return c.body
}

// release drops what was kept; nothing more is.
func (c *captureWriter) release() {
	c.line, c.final, c.body, c.asm, c.skip, c.decided = nil, nil, nil, nil, true, true
}

// Flush implements http.Flusher.
func (c *captureWriter) Flush() { _ = c.flusher.Flush() }

// Unwrap lets http.ResponseController reach the writer below.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

var _ http.Flusher = (*captureWriter)(nil)

// Package stream frames and transcodes LLM response streams incrementally:
// it reassembles server-sent events from arbitrary write boundaries, feeds
// them through a translate.StreamDecoder and a translate.StreamEncoder, and
// frames the result for the client. Memory per stream is bounded by the
// largest single event, however long the stream runs.
//
// The package knows bytes and events, not what a model wrote: the reading
// of tool calls and reasoning a self-hosted model left in the text is
// package dialect, whose decoder wraps the one a Transcoder is given.
package stream

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// DefaultMaxEventSize bounds one upstream event (an incomplete line plus the
// data of the event being assembled). A tool call's whole arguments can come
// in one event from some servers, so it is generous.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned when one event exceeds the size limit.
var ErrEventTooLarge = errors.New("stream: event exceeds size limit")

// Framer splits an upstream body into events.
type Framer interface {
	// Feed consumes the next chunk of the body, calling fn for every event
	// completed by it. name and data are only valid during the call, and
	// fn must not modify data: it may be a view of p itself.
	Feed(p []byte, fn func(name string, data []byte)) error
	// Close is called at the end of the body and flushes a final event that
	// lacked its terminating blank line.
	Close(fn func(name string, data []byte)) error
}

// SSEParser is a Framer for text/event-stream bodies, following the
// WHATWG event-stream rules: lines end in LF, CRLF or CR; "data:" lines are
// joined with LF; "event:" names the event; comments and "id:"/"retry:" are
// ignored; a blank line dispatches. One leniency: a line that is not a field
// but starts with '{' is taken as data, because some servers send bare JSON
// error lines mid-stream.
//
// Each byte is scanned once: only an incomplete trailing line is carried to
// the next Feed.
type SSEParser struct {
	MaxEventSize int // 0 means DefaultMaxEventSize

	line    []byte   // incomplete line carried across Feed calls
	names   []string // event names seen, so each is allocated once
	name    []byte
	data    []byte
	hasData bool
	// view is the event's data while it is one data line lying whole in
	// the chunk being fed, as it usually is: the event is dispatched with
	// the chunk's own bytes, and only one still open when Feed returns is
	// copied to data (spill). nil when data holds the event's data.
	view   []byte
	skipLF bool // the previous chunk ended in CR: a leading LF belongs to it

	// off is where, in the chunk being fed, the line being processed
	// ends (past its line break): when an event is dispatched, the end of
	// its blank line. The passthrough watcher cuts the stream there.
	off int
	// blank is where, in the chunk being fed, the last blank line ends;
	// the watcher sets it to -1 before a Feed. A blank line is an event
	// boundary even when it dispatches nothing (after comments only).
	blank int
	// prevBlank is where the blank line before the last one ends, -1
	// when none in this chunk: when the last one dispatched a malformed
	// event, the stream is cut there.
	prevBlank int
}

// Feed implements Framer.
func (p *SSEParser) Feed(chunk []byte, fn func(name string, data []byte)) error {
	err := p.feed(chunk, fn)
	p.spill() // the chunk is the caller's again after Feed
	return err
}

// spill copies an event's data still viewed in the chunk to data.
func (p *SSEParser) spill() {
	if p.view != nil {
		p.data = append(p.data[:0], p.view...)
		p.view = nil
	}
}

func (p *SSEParser) feed(chunk []byte, fn func(name string, data []byte)) error {
	max := p.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	size := len(chunk)
	if p.skipLF && len(chunk) > 0 {
		p.skipLF = false
		if chunk[0] == '\n' {
			chunk = chunk[1:]
		}
	}
	for len(chunk) > 0 {
		i := lineEnd(chunk)
		if i < 0 {
			if len(p.line)+len(chunk)+len(p.data)+len(p.view) > max {
				return fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, max)
			}
			p.line = append(p.line, chunk...)
			return nil
		}
		var line []byte
		inChunk := len(p.line) == 0
		if inChunk {
			line = chunk[:i]
		} else {
			p.line = append(p.line, chunk[:i]...)
			line = p.line
		}
		if chunk[i] == '\r' {
			if i+1 < len(chunk) {
				if chunk[i+1] == '\n' {
					i++
				}
			} else {
				p.skipLF = true
			}
		}
		chunk = chunk[i+1:]
		p.off = size - len(chunk)
		if err := p.processLine(line, inChunk, fn, max); err != nil {
			return err
		}
		p.line = p.line[:0]
	}
	return nil
}

// lineEnd returns the index of the first CR or LF in b, or -1. Servers end
// lines with LF; CR is rare, so it is only looked for before the first LF,
// which keeps this to one fast IndexByte scan in the common case.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	limit := b
	if lf >= 0 {
		limit = b[:lf]
	}
	if cr := bytes.IndexByte(limit, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// processLine takes one line without its break; inChunk says it lies in
// the chunk being fed, not in the carried line, so the data may be viewed.
func (p *SSEParser) processLine(line []byte, inChunk bool, fn func(string, []byte), max int) error {
	if len(line) == 0 {
		p.prevBlank, p.blank = p.blank, p.off
		p.dispatch(fn)
		return nil
	}
	if line[0] == ':' {
		return nil // comment
	}
	field, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else if line[0] == '{' || line[0] == '[' {
		field, value = []byte("data"), line
	}
	switch string(field) {
	case "data":
		if len(p.data)+len(p.view)+len(value)+1 > max {
			return fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, max)
		}
		if !p.hasData && inChunk {
			p.view, p.hasData = value[:len(value):len(value)], true
			return nil
		}
		p.spill()
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		p.name = append(p.name[:0], value...)
	default:
		if line[0] == '{' || line[0] == '[' {
			// A bare JSON line that happens to contain a colon.
			p.spill()
			if p.hasData {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, line...)
			p.hasData = true
		}
		// "id", "retry" and unknown fields are ignored.
	}
	return nil
}

func (p *SSEParser) dispatch(fn func(string, []byte)) {
	if p.hasData {
		data := p.data
		if p.view != nil {
			data = p.view
		}
		fn(p.eventName(), data)
	}
	p.name = p.name[:0]
	p.data = p.data[:0]
	p.view = nil
	p.hasData = false
}

// eventName returns the current event name as a string, allocating only
// the first time a name is seen: a protocol has a handful of event names, and
// a stream repeats them thousands of times.
func (p *SSEParser) eventName() string {
	if len(p.name) == 0 {
		return ""
	}
	for _, n := range p.names {
		if n == string(p.name) { // compiles to a comparison, no allocation
			return n
		}
	}
	n := string(p.name)
	if len(p.names) < 32 {
		p.names = append(p.names, n)
	}
	return n
}

// Close implements Framer. A last line without its line break was cut
// mid-line and is discarded, as the event-stream rules say; complete lines
// of an event that only lacks its closing blank line are dispatched, for
// servers that close the connection right after their last event.
func (p *SSEParser) Close(fn func(name string, data []byte)) error {
	p.line = p.line[:0]
	p.dispatch(fn)
	return nil
}

// AppendSSE appends one server-sent event: an "event:" line when name is not
// empty, then data as one "data:" line per line of data, then a blank line.
func AppendSSE(dst []byte, name string, data []byte) []byte {
	// One growth at most: the data of an event is usually one line, and
	// appending piece by piece to a fresh buffer would grow it several
	// times per event.
	dst = slices.Grow(dst, len(name)+len(data)+len("event: \ndata: \n\n"))
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexByte(data, '\n')
		dst = append(dst, "data: "...)
		if i < 0 {
			dst = append(dst, data...)
			dst = append(dst, '\n')
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		data = data[i+1:]
	}
	return append(dst, '\n')
}

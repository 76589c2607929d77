package stream

import (
	"github.com/louter/louter/translate"
)

// Output frames a client stream.
type Output interface {
	translate.FrameWriter
	// Bytes returns what was framed since the last Reset.
	Bytes() []byte
	// Reset empties the buffer, keeping its memory.
	Reset()
}

// SSEOutput frames events as server-sent events. Its buffer comes from a
// pool shared by all streams (output_pool.go) and goes back with Release.
type SSEOutput struct{ buf []byte }

// WriteFrame implements translate.FrameWriter.
func (o *SSEOutput) WriteFrame(name string, data []byte) {
	if o.buf == nil {
		o.buf = getFrameBuf()
	}
	o.buf = AppendSSE(o.buf, name, data)
}

// Release implements Releaser.
func (o *SSEOutput) Release() {
	putFrameBuf(o.buf)
	o.buf = nil
}

// Bytes implements Output.
func (o *SSEOutput) Bytes() []byte { return o.buf }

// Reset implements Output.
func (o *SSEOutput) Reset() { o.buf = o.buf[:0] }

// Transcoder converts one upstream stream into one client stream, chunk by
// chunk: upstream bytes are framed into events, decoded into IR events,
// encoded into client events and framed for the client. It is a value with
// no goroutines; feed it with Write and finish it with Close.
type Transcoder struct {
	framer Framer
	dec    translate.StreamDecoder
	enc    translate.StreamEncoder
	out    Output

	// Observe, when set, sees every IR event before it is encoded (for usage
	// accounting and logs).
	Observe func(*translate.Event)

	events []translate.Event
	done   bool // a terminal event was encoded
	emit   func(name string, data []byte)
}

// NewTranscoder returns a transcoder. framer is the upstream framing
// (usually an *SSEParser), out the client framing (usually an *SSEOutput).
func NewTranscoder(framer Framer, dec translate.StreamDecoder, enc translate.StreamEncoder, out Output) *Transcoder {
	t := &Transcoder{framer: framer, dec: dec, enc: enc, out: out}
	t.emit = t.decode
	return t
}

// Done reports whether the client stream has ended (a stop or an error was
// encoded). Later input is ignored.
func (t *Transcoder) Done() bool { return t.done }

func (t *Transcoder) decode(name string, data []byte) {
	if t.done {
		return
	}
	t.events = t.dec.Decode(t.events[:0], name, data)
	t.encode()
}

func (t *Transcoder) encode() {
	for i := range t.events {
		if t.done {
			break
		}
		ev := &t.events[i]
		if t.Observe != nil {
			t.Observe(ev)
		}
		t.enc.Encode(t.out, ev)
		if ev.Type == translate.EventMessageStop || ev.Type == translate.EventError {
			t.done = true
			EndOutput(t.out) // a JSON array's closing bracket; nothing for SSE
		}
	}
	t.events = t.events[:0]
}

// Fail ends the client stream with err unless it has already ended, and
// returns the client bytes that produced, valid until the next call.
func (t *Transcoder) Fail(err *translate.Error) []byte {
	t.out.Reset()
	t.fail(err)
	return t.out.Bytes()
}

func (t *Transcoder) fail(err *translate.Error) {
	if t.done {
		return
	}
	// Encoders accept an error with a block still open: the error ends the
	// client stream whatever state it is in.
	t.events = append(t.events[:0], translate.Event{Type: translate.EventError, Err: err})
	t.encode()
}

// Write consumes a chunk of the upstream body and returns the client bytes
// it produced. The returned slice is only valid until the next call.
func (t *Transcoder) Write(p []byte) []byte {
	t.out.Reset()
	if t.done {
		return nil
	}
	if err := t.framer.Feed(p, t.emit); err != nil {
		t.fail(&translate.Error{Status: 502, Kind: translate.ErrAPI, Message: "malformed upstream stream: " + err.Error()})
	}
	return t.out.Bytes()
}

// Close ends the upstream body and returns the client bytes that still had
// to be written: a final event, or an error event when the upstream stream
// was cut before it finished.
func (t *Transcoder) Close() []byte {
	t.out.Reset()
	if t.done {
		return nil
	}
	if err := t.framer.Close(t.emit); err != nil {
		t.fail(&translate.Error{Status: 502, Kind: translate.ErrAPI, Message: "malformed upstream stream: " + err.Error()})
	}
	if !t.done {
		t.events = t.dec.End(t.events[:0])
		t.encode()
	}
	return t.out.Bytes()
}

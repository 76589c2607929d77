package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/louter/louter/translate"
)

// AWS services (Bedrock's InvokeModelWithResponseStream and ConverseStream)
// stream in the binary AWS event-stream framing
// (application/vnd.amazon.eventstream), not SSE: length-prefixed messages
// with typed headers and two CRC32 checksums. EventStreamSSE re-frames such
// a body as SSE, message by message, so everything downstream (the SSE
// parser, the transcoder, the fallback gate, recordings) reads one framing.
// The messages are decoded by the AWS SDK's own decoder; this file adds
// what the decoder lacks: a size cap, telling a clean end from a cut one,
// and the mapping onto SSE.
//
// Each message becomes one SSE event:
//
//   - an event message (:message-type event) becomes the event named by its
//     :event-type ("chunk", "contentBlockDelta", ...), its payload the data;
//   - an exception message (:message-type exception) becomes the event
//     named EventStreamExceptionPrefix + its :exception-type
//     ("exception:throttlingException"), its payload ({"message":...}) the
//     data;
//   - an error message (:message-type error) and a body that cannot be
//     decoded (a bad checksum, a message over the cap, a body cut inside a
//     message) become an event named EventStreamError whose data is
//     {"code":...,"message":...}, after which the body ends: what follows
//     a bad message cannot be trusted to be framed.
//
// Payload line breaks become separate data lines, which SSE joins back, so
// the data is the payload byte for byte (a CR becomes an LF, which in JSON
// is the same whitespace).

// EventStreamContentType is the media type of an AWS event-stream body.
const EventStreamContentType = "application/vnd.amazon.eventstream"

// EventStreamExceptionPrefix starts the SSE event name of an exception
// message; its :exception-type follows.
const EventStreamExceptionPrefix = translate.AWSExceptionPrefix

// EventStreamError is the SSE event name of an error message or of a body
// that could not be decoded: an exception too, so a reader that handles
// EventStreamExceptionPrefix handles it.
const EventStreamError = EventStreamExceptionPrefix + "eventStreamError"

// DefaultMaxEventStreamMessage bounds one event-stream message. The
// decoder trusts the length prefix, so without a cap a corrupt prefix
// would have it buffer the rest of the body.
const DefaultMaxEventStreamMessage = DefaultMaxEventSize

// EventStreamSSE reads an event-stream body and yields it as SSE. Read
// blocks for one whole message at a time (however the body's bytes are
// split), so each Read returns the events of one message: a stream is
// flushed to the client message by message. Memory is bounded by the
// largest message. It is not safe for concurrent use.
type EventStreamSSE struct {
	body    io.ReadCloser
	max     int
	dec     *eventstream.Decoder
	counted countingReader
	payload []byte // reused payload buffer
	out     []byte // SSE bytes not yet read
	done    bool
}

// NewEventStreamSSE returns a reader of body as SSE; maxMessage bounds one
// message (0: DefaultMaxEventStreamMessage). Closing it closes body.
func NewEventStreamSSE(body io.ReadCloser, maxMessage int) *EventStreamSSE {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxEventStreamMessage
	}
	s := &EventStreamSSE{body: body, max: maxMessage, dec: eventstream.NewDecoder()}
	s.counted.r = body
	return s
}

// errMessageTooLarge is the cap's error.
var errMessageTooLarge = errors.New("message exceeds the size limit")

// countingReader counts the bytes of the message being decoded and refuses
// to read past the cap.
type countingReader struct {
	r     io.Reader
	n     int
	limit int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, errMessageTooLarge
	}
	if rest := c.limit - c.n; len(p) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Read implements io.Reader.
func (s *EventStreamSSE) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.done {
			return 0, io.EOF
		}
		s.next()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// Close implements io.Closer.
func (s *EventStreamSSE) Close() error { return s.body.Close() }

// next decodes one message into s.out, or ends the stream.
func (s *EventStreamSSE) next() {
	s.counted.n, s.counted.limit = 0, s.max
	m, err := s.dec.Decode(&s.counted, s.payload[:0])
	if err != nil {
		s.done = true
		if errors.Is(err, io.EOF) && s.counted.n == 0 {
			return // a clean end, between messages
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the decoder reports a body cut inside a message as EOF too
		}
		s.out = appendSSE(s.out[:0], EventStreamError, errorData("DecodeError", "event stream: "+err.Error()))
		return
	}
	if cap(m.Payload) <= 64<<10 {
		s.payload = m.Payload // keep a modest buffer for the next message
	}
	kind := headerString(m.Headers, ":message-type")
	switch kind {
	case "exception":
		s.out = appendSSE(s.out[:0], EventStreamExceptionPrefix+headerString(m.Headers, ":exception-type"), m.Payload)
	case "error":
		s.done = true
		s.out = appendSSE(s.out[:0], EventStreamError, errorData(headerString(m.Headers, ":error-code"), headerString(m.Headers, ":error-message")))
	default: // "event", or absent
		s.out = appendSSE(s.out[:0], headerString(m.Headers, ":event-type"), m.Payload)
	}
}

// headerString returns a header's value as a string, "" when absent.
func headerString(h eventstream.Headers, name string) string {
	v := h.Get(name)
	if v == nil {
		return ""
	}
	switch v := v.(type) {
	case eventstream.StringValue:
		return string(v)
	case eventstream.BytesValue:
		return string(v)
	}
	return v.String()
}

// errorData is the data of an EventStreamError event.
func errorData(code, message string) []byte {
	b, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, message})
	return b
}

// appendSSE appends one SSE event. A name with a line break, which SSE
// cannot carry, is cut at it.
func appendSSE(dst []byte, name string, data []byte) []byte {
	if i := bytesIndexLineBreak([]byte(name)); i >= 0 {
		name = name[:i]
	}
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	for {
		i := bytesIndexLineBreak(data)
		if i < 0 {
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

func bytesIndexLineBreak(b []byte) int { return bytes.IndexAny(b, "\r\n") }

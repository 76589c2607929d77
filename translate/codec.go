package translate

import "fmt"

// Protocol names a wire protocol.
type Protocol string

// Protocols.
const (
	ProtocolAnthropic       Protocol = "anthropic"        // Anthropic Messages
	ProtocolOpenAIChat      Protocol = "openai_chat"      // OpenAI Chat Completions
	ProtocolGemini          Protocol = "gemini"           // Google Gemini generateContent
	ProtocolOpenAIResponses Protocol = "openai_responses" // OpenAI Responses
)

// Codec translates one wire protocol to and from the IR. Codecs are stateless
// and safe for concurrent use; stream state lives in the StreamDecoder and
// StreamEncoder values they create, one per stream.
type Codec interface {
	Protocol() Protocol

	// DecodeRequest parses a client request. A malformed or impossible
	// request yields an *Error with status 400; DecodeRequest validates the
	// body itself (invalid JSON is such an error), so callers need not
	// validate it first. The returned Request may share memory with body
	// (strings and raw values are views of it, not copies): body must not
	// be modified, or its buffer reused, while the Request is in use.
	DecodeRequest(body []byte) (*Request, error)
	// EncodeRequest builds the backend request body. What the protocol cannot
	// carry is recorded with req.Drop.
	EncodeRequest(req *Request) ([]byte, error)

	// DecodeResponse parses a backend's non-streaming response.
	DecodeResponse(body []byte) (*Response, error)
	// EncodeResponse builds the client's non-streaming response.
	EncodeResponse(resp *Response, req *Request) ([]byte, error)

	// NewStreamDecoder parses a backend's stream, one framed event at a time.
	NewStreamDecoder() StreamDecoder
	// NewStreamEncoder writes the client's stream. req is the decoded client
	// request (for the model name and stream options).
	NewStreamEncoder(req *Request) StreamEncoder

	// DecodeError parses a backend's error body (any status >= 400). It
	// never fails: an unparsable body becomes the message.
	DecodeError(status int, body []byte) *Error
	// EncodeError builds the client's error body for a non-streaming answer.
	EncodeError(e *Error) []byte
}

// StreamDecoder turns a backend's framed stream events into IR events.
type StreamDecoder interface {
	// Decode consumes one framed event (the SSE event name, "" if none, and
	// its data) and appends the IR events it implies to dst.
	Decode(dst []Event, name string, data []byte) []Event
	// End is called once at the end of the upstream body and appends what
	// the stream still owes (an error event if it was cut short).
	End(dst []Event) []Event
}

// StreamEncoder turns IR events into a client's stream events. It writes
// each event's name (for protocols with SSE "event:" lines, "" otherwise) and
// JSON payload to w; the stream package frames them as SSE or as a JSON
// array. data is only valid during the call.
type StreamEncoder interface {
	Encode(w FrameWriter, ev *Event)
}

// FrameWriter receives a client stream's events, one call per event.
type FrameWriter interface {
	WriteFrame(name string, data []byte)
}

var codecs = map[Protocol]Codec{}

// Register makes a codec available through Lookup. It is called from the
// codecs' init functions and panics on duplicates.
func Register(c Codec) {
	if _, dup := codecs[c.Protocol()]; dup {
		panic(fmt.Sprintf("translate: codec %q registered twice", c.Protocol()))
	}
	codecs[c.Protocol()] = c
}

// Lookup returns the codec for a protocol.
func Lookup(p Protocol) (Codec, bool) {
	c, ok := codecs[p]
	return c, ok
}

// Protocols lists the registered protocols.
func Protocols() []Protocol {
	out := make([]Protocol, 0, len(codecs))
	for p := range codecs {
		out = append(out, p)
	}
	return out
}

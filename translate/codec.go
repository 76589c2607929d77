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

// Optional interfaces.
//
// Codec is what every protocol must do. What only some protocols do
// differently — and what shared code in this package would otherwise
// decide by switching on the protocol's name — a codec says by
// implementing one of the interfaces below. Shared code finds them on the
// codec registered for a protocol (Lookup, then a type assertion; never on
// a codec value it was handed, which may be a wrapper), and a codec that
// does not implement one gets the default its documentation states. So a
// protocol whose codec is registered from elsewhere (a test's fake codec)
// works with every shared code path without a line changed here, and a
// codec's answers live in its own files.
//
// Like Codec, the methods are safe for concurrent use and keep no state
// between calls.

// WatchCodec is a codec that can follow a stream of its protocol passed to
// a client untouched, without decoding it (StreamWatch, NewStreamWatch).
//
// Default: the codec's own stream decoder judges the stream. Every event
// is decoded; the stream is complete at the first EventMessageStop, ends
// with the backend's error at the first EventError, and reports the usage
// of the latest event that carried one. Such a watch never finds an event
// malformed: the decoder turns what it cannot read into an error event.
type WatchCodec interface {
	// NewStreamWatch returns a new watch for one stream of the codec's
	// protocol. It never returns nil.
	NewStreamWatch() StreamWatch
}

// TopLevelCodec is a codec whose request bodies ScanTopLevel reads by
// rules of their own (TopLevelRules).
//
// Default: the "model" and "stream" members are read, in the body, and
// may not repeat; the output limits are located under their OpenAI and
// Anthropic names; no system prompt or conversation is located; and a
// repeated member gets a 400 in the words of OpenAI's errors ("Duplicate
// key 'model' in the request body; send each field once.", code
// duplicate_key).
type TopLevelCodec interface {
	// TopLevelRules returns the protocol's rules. The result is shared
	// and read by concurrent scans: neither the codec nor the caller
	// modifies it.
	TopLevelRules() *TopLevelRules
}

// OverflowCodec is a codec whose clients expect a context overflow
// (ErrContextOverflow) worded their protocol's way: an agent compacts its
// conversation only when it recognises the error (context_overflow.go).
//
// Default: the wording of OpenAI and the OpenAI-compatible servers, which
// most clients recognise: an invalid-request error with code
// context_length_exceeded, param "messages", and, when both figures are
// known, "This model's maximum context length is M tokens. However, your
// messages resulted in N tokens. ..."; an overflow is worded so when its
// code is context_length_exceeded.
type OverflowCodec interface {
	// ClientOverflow returns e, a context overflow (e.Kind is
	// ErrContextOverflow), as the protocol's own invalid-request error
	// (Kind ErrInvalidRequest, status 400) with its message, code and
	// param. It returns a new Error and does not modify e.
	ClientOverflow(e *Error) *Error
	// OverflowWorded reports whether e, a context overflow decoded from a
	// backend of the protocol, already reads as the protocol's clients
	// expect, so that an error passed on untranslated needs no rewording.
	OverflowWorded(e *Error) bool
}

// StatusCodec is a codec whose clients are answered some errors with
// another HTTP status than the error's own (ClientStatus).
//
// Default: the error's own status.
type StatusCodec interface {
	// ClientStatus returns the status a client of the protocol is
	// answered with for e; status is the one e implies (e.Status, or
	// StatusForKind(e.Kind) when e.Status is not an error status).
	ClientStatus(status int, e *Error) int
}

// ToolNamingCodec is a codec whose backends accept other tool names, or
// need their answers parsed otherwise, than the default (ToolNaming).
//
// Default: &Dialect{KeepToolIDs: true, ToolCalls: ToolCallsNative,
// Reasoning: ReasoningFormatFields}: names are held to
// ^[a-zA-Z0-9_-]{1,64}$, tool call ids are kept, and the dialect decoder
// parses nothing out of the text.
type ToolNamingCodec interface {
	// BackendToolNaming returns the Dialect that governs tool names for a
	// backend of the protocol configured without a dialect. It returns a
	// new Dialect on each call, which the caller may keep.
	BackendToolNaming() *Dialect
}

// UsageTimingCodec is a codec whose streams report the input tokens
// before their end, which decides whether a translated stream needs them
// estimated up front (TranslateRequest, Request.InputTokensEstimate).
//
// Default: both false: the protocol's streams report usage at their end,
// and a client of it needs no estimate.
type UsageTimingCodec interface {
	// InputUsageEarly reports whether the protocol's client streams tell
	// the input tokens before the end (Anthropic's message_start, Gemini's
	// usageMetadata on every chunk): when the backend does not report
	// them at its start, its client stream announces an estimate.
	InputUsageEarly() bool
	// InputUsageAtStart reports whether the protocol's backend streams
	// always report the input tokens in their first event (Anthropic's
	// message_start): a client of another protocol then needs no
	// estimate.
	InputUsageAtStart() bool
}

// DialectCodec is a codec whose request encoder can apply one backend's
// Dialect (BackendCodec).
//
// Default: the registered codec serves every backend of the protocol; a
// dialect only governs tool names (ToolNaming) and the response side
// (package stream's DialectDecoder).
type DialectCodec interface {
	// WithDialect returns a codec of the same protocol whose request
	// encoder applies d. d is not modified and may be kept.
	WithDialect(d *Dialect) Codec
}

// BackendOnlyCodec is a codec of a protocol louter speaks only to
// backends (AWS Bedrock's APIs): no client speaks it, so it has no client
// side to test or to serve (ClientProtocols leaves it out).
//
// Default: the protocol serves clients too.
type BackendOnlyCodec interface {
	// BackendOnly marks the codec; it does nothing.
	BackendOnly()
}

// ClientProtocols lists the registered protocols a client can speak:
// every one but those of BackendOnlyCodecs and the cloud-hosted variants
// (which no client speaks: they share their codec's client side).
func ClientProtocols() []Protocol {
	out := make([]Protocol, 0, len(codecs))
	for p, c := range codecs {
		if _, backendOnly := c.(BackendOnlyCodec); !backendOnly && !hostedVariants[p] {
			out = append(out, p)
		}
	}
	return out
}

// codecAs returns the codec registered for p as the optional interface T,
// and whether it implements it.
func codecAs[T any](p Protocol) (T, bool) {
	t, ok := codecs[p].(T)
	return t, ok
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

// Protocols lists the registered wire protocols. A cloud's variant of a
// protocol (vertex_anthropic, azure_openai, ...: cloud_codecs.go) is not
// listed: it is the hosted protocol's wire, which is, and no client speaks
// it. Lookup finds the variants.
func Protocols() []Protocol {
	out := make([]Protocol, 0, len(codecs))
	for p := range codecs {
		if !hostedVariants[p] {
			out = append(out, p)
		}
	}
	return out
}

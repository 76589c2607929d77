package mock

import (
	"net/http"
	"strings"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// protocolSpec is what the mock needs to know about one wire protocol beyond
// its codec: where clients send requests and how the protocol's own ids and
// errors look. Adding a protocol to the mock means adding a row to
// protocolSpecs; the scenarios are written against the IR and never change.
type protocolSpec struct {
	protocol translate.Protocol

	// matchPath reports whether a request path is this protocol's endpoint.
	// Any prefix is accepted, so one mock serves ".../anthropic/v1/messages"
	// as well as "/v1/messages". It is a function rather than a suffix
	// because some protocols (Gemini) put the model and the method in the
	// path.
	matchPath func(path string) bool

	messageIDPrefix  string // prefix of response ids
	toolCallIDPrefix string // prefix of tool call ids
	// serverToolIDPrefix is the prefix of the provider's server tool
	// call ids (web_search scenario); "" for a protocol whose searches
	// have no ids (Gemini) or none at all.
	serverToolIDPrefix string

	// signsThinking is whether the protocol carries thinking signatures; the
	// reasoning scenario signs its thinking block only then.
	signsThinking bool

	// overloadedStatus is the HTTP status the provider uses when overloaded.
	overloadedStatus int

	// toolCallIDSuffix is appended to generated tool call ids (Gemini: a
	// thought signature folded into the id, which the Gemini encoder puts
	// on the functionCall part, as Gemini signs its calls).
	toolCallIDSuffix string

	// fromURL, when set, completes a decoded request from the URL, for
	// protocols that put the model and the stream mode there (Gemini), and
	// reports whether the stream is to be framed as a JSON array.
	fromURL func(r *http.Request, req *translate.Request) (jsonArray bool)

	// fillBody, when set, completes a body before it is decoded, for
	// protocols whose URL carries what the codec reads from the body
	// (Bedrock's model and stream mode).
	fillBody func(r *http.Request, body []byte) []byte
	// streamOutput, when set, frames the protocol's streams instead of
	// SSE, with their Content-Type (Bedrock's AWS event-stream).
	streamOutput func() (contentType string, out stream.Output)
	// aws is whether the protocol's requests are authenticated as AWS's
	// are (the mock's BedrockAuth, sigv4.go).
	aws bool
}

// protocolSpecs lists the protocols the mock speaks, first match wins.
var protocolSpecs = []protocolSpec{
	{
		protocol:           translate.ProtocolAnthropic,
		matchPath:          hasSuffix("/v1/messages"),
		messageIDPrefix:    "msg_",
		toolCallIDPrefix:   "toolu_",
		serverToolIDPrefix: "srvtoolu_",
		signsThinking:      true,
		overloadedStatus:   529,
	},
	{
		protocol:         translate.ProtocolOpenAIChat,
		matchPath:        hasSuffix("/v1/chat/completions"),
		messageIDPrefix:  "chatcmpl-",
		toolCallIDPrefix: "call_",
		overloadedStatus: http.StatusServiceUnavailable,
	},
	{
		protocol:           translate.ProtocolOpenAIResponses,
		matchPath:          hasSuffix("/v1/responses"),
		messageIDPrefix:    "resp_",
		toolCallIDPrefix:   "call_",
		serverToolIDPrefix: "ws_",
		signsThinking:      true, // reasoning items carry encrypted_content
		overloadedStatus:   http.StatusServiceUnavailable,
	},
	{
		protocol:         translate.ProtocolGemini,
		matchPath:        geminiPath,
		toolCallIDPrefix: "call_",
		toolCallIDSuffix: geminiCallSignature,
		signsThinking:    true, // thoughtSignature
		overloadedStatus: http.StatusServiceUnavailable,
		fromURL:          geminiFromURL,
	},
	{
		protocol:         translate.ProtocolBedrock,
		matchPath:        bedrockInvokePath,
		messageIDPrefix:  "msg_bdrk_",
		toolCallIDPrefix: "toolu_bdrk_",
		signsThinking:    true,
		overloadedStatus: http.StatusServiceUnavailable, // ServiceUnavailableException
		fillBody:         bedrockInvokeBody,
		streamOutput: func() (string, stream.Output) {
			return stream.EventStreamContentType, newEventStreamOutput(true)
		},
		aws: true,
	},
}

func hasSuffix(suffix string) func(string) bool {
	return func(path string) bool { return strings.HasSuffix(path, suffix) }
}

// protocolForPath returns the protocol whose endpoint path is, or nil.
func protocolForPath(path string) *protocolSpec {
	for i := range protocolSpecs {
		if protocolSpecs[i].matchPath(path) {
			return &protocolSpecs[i]
		}
	}
	return nil
}

// overloaded is the error the stream_error scenario fails with.
func (p *protocolSpec) overloaded() *translate.Error {
	return &translate.Error{Status: p.overloadedStatus, Kind: translate.ErrOverloaded, Message: "Overloaded (louter_mock scenario stream_error)"}
}

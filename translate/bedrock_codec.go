package translate

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ProtocolBedrock is Anthropic's Messages API as AWS Bedrock serves it
// (InvokeModel and InvokeModelWithResponseStream). It is a backend
// protocol only: no client speaks it through louter.
const ProtocolBedrock Protocol = "bedrock"

// AWSExceptionPrefix starts the name of the event an AWS event-stream
// exception message becomes when its body is re-framed as SSE (package
// stream's EventStreamSSE): "exception:throttlingException". A body that
// could not be decoded ends with such an event too.
const AWSExceptionPrefix = "exception:"

// bedrockCodec is the Anthropic codec for Claude on Bedrock. The Bedrock
// API differs from Anthropic's in three ways, bridged so:
//
//   - The URL names the model and the operation (/model/{id}/invoke, or
//     invoke-with-response-stream), so the body carries neither "model"
//     nor "stream"; the API version is the body's anthropic_version
//     ("bedrock-2023-05-31"), not a header. EncodeRequest removes the two
//     and adds the version (the row in caddymodule builds the URL).
//   - A stream is AWS event-stream framed, each "chunk" event holding one
//     Anthropic stream event as base64 JSON in "bytes"; caddymodule
//     re-frames the body as SSE and the stream decoder unwraps the chunk
//     and hands it to the Anthropic decoder.
//   - Errors come as {"message":...} with the status (and, mid-stream, as
//     exception messages: throttlingException, validationException,
//     modelStreamErrorException, ...), which become IR errors of the
//     status the exception implies.
//
// Everything else — the body, the JSON response, the events inside the
// chunks — is Anthropic's, so the codec is Anthropic's for the rest.
type bedrockCodec struct{ anthropicCodec }

func init() { Register(bedrockCodec{}) }

// bedrockAnthropicVersion is the anthropic_version Bedrock requires.
const bedrockAnthropicVersion = "bedrock-2023-05-31"

// Protocol implements Codec.
func (bedrockCodec) Protocol() Protocol { return ProtocolBedrock }

// DecodeRequest implements Codec. No client speaks Bedrock through louter;
// a body in Bedrock's shape is an Anthropic body without model and stream.
func (bedrockCodec) DecodeRequest(body []byte) (*Request, error) {
	return anthropicCodec{}.DecodeRequest(body)
}

// EncodeRequest implements Codec: the Anthropic body, without model and
// stream, with Bedrock's anthropic_version.
func (bedrockCodec) EncodeRequest(req *Request) ([]byte, error) {
	body, err := anthropicCodec{}.EncodeRequest(req)
	if err != nil {
		return nil, err
	}
	if body, err = bedrockBody(body); err != nil {
		return nil, err
	}
	return bedrockContextBetas(body, req)
}

// bedrockContextBetas names the betas context_management needs in the
// body's anthropic_beta, where Bedrock reads betas (it refuses the member
// without them: "Extra inputs are not permitted"). Both are on Bedrock's
// list of betas it accepts.
func bedrockContextBetas(body []byte, req *Request) ([]byte, error) {
	cm := req.ContextManagement
	if cm == nil || cm.Raw == nil {
		return body, nil
	}
	betas := []string{"context-management-2025-06-27"}
	if strings.Contains(string(cm.Raw), `"`+EditCompact+`"`) {
		betas = append(betas, "compact-2026-01-12")
	}
	return sjson.SetBytes(body, "anthropic_beta", betas)
}

// bedrockBody turns an Anthropic Messages body into Bedrock's.
func bedrockBody(body []byte) ([]byte, error) {
	var err error
	for _, key := range [...]string{"model", "stream"} {
		if body, err = sjson.DeleteBytes(body, key); err != nil {
			return nil, err
		}
	}
	if !gjson.GetBytes(body, "anthropic_version").Exists() {
		body, err = sjson.SetBytes(body, "anthropic_version", bedrockAnthropicVersion)
	}
	return body, err
}

// NewStreamDecoder implements Codec: the chunks' Anthropic events, through
// the Anthropic decoder.
func (bedrockCodec) NewStreamDecoder() StreamDecoder {
	return &bedrockStreamDecoder{inner: &anthropicStreamDecoder{}}
}

// BackendOnly implements BackendOnlyCodec.
func (bedrockCodec) BackendOnly() {}

// InputUsageEarly implements UsageTimingCodec (a client side Bedrock
// does not have).
func (bedrockCodec) InputUsageEarly() bool { return false }

// bedrockStreamDecoder unwraps Bedrock's chunk events.
type bedrockStreamDecoder struct {
	inner *anthropicStreamDecoder
	buf   []byte
	ended bool
}

// Decode implements StreamDecoder.
func (d *bedrockStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	if d.ended {
		return dst
	}
	if exc, ok := strings.CutPrefix(name, AWSExceptionPrefix); ok {
		d.ended = true
		return append(dst, Event{Type: EventError, Err: AWSStreamError(exc, data)})
	}
	if name != "chunk" {
		return dst // an event type louter does not know carries nothing it needs
	}
	b64 := gjson.GetBytes(data, "bytes")
	n := base64.StdEncoding.DecodedLen(len(b64.Str))
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	m, err := base64.StdEncoding.Decode(d.buf[:n], []byte(b64.Str))
	if b64.Type != gjson.String || err != nil {
		d.ended = true
		return append(dst, Event{Type: EventError, Err: &Error{Status: http.StatusBadGateway, Kind: ErrAPI,
			Message: "bedrock: a stream chunk without base64 bytes"}})
	}
	ev := d.buf[:m]
	return d.inner.Decode(dst, gjson.GetBytes(ev, "type").String(), ev)
}

// End implements StreamDecoder.
func (d *bedrockStreamDecoder) End(dst []Event) []Event {
	if d.ended {
		return dst
	}
	return d.inner.End(dst)
}

// awsExceptionStatus is the HTTP status of each AWS exception Bedrock's
// streams and errors name (the API's HTTPError traits), by the name with
// its first letter lowered.
var awsExceptionStatus = map[string]int{
	"validationException":                 http.StatusBadRequest,
	"serviceQuotaExceededException":       http.StatusBadRequest,
	"conflictException":                   http.StatusBadRequest,
	"accessDeniedException":               http.StatusForbidden,
	"resourceNotFoundException":           http.StatusNotFound,
	"modelTimeoutException":               http.StatusRequestTimeout,
	"modelErrorException":                 http.StatusFailedDependency,
	"modelStreamErrorException":           http.StatusFailedDependency,
	"throttlingException":                 http.StatusTooManyRequests,
	"modelNotReadyException":              http.StatusTooManyRequests,
	"internalServerException":             http.StatusInternalServerError,
	"serviceUnavailableException":         http.StatusServiceUnavailable,
	"unrecognizedClientException":         http.StatusForbidden,
	"expiredTokenException":               http.StatusForbidden,
	"invalidSignatureException":           http.StatusForbidden,
	"incompleteSignatureException":        http.StatusForbidden,
	"missingAuthenticationTokenException": http.StatusForbidden,
}

// AWSStreamError is the IR error of an AWS event-stream exception named
// exc ("throttlingException", or package stream's "eventStreamError" for a
// body that could not be decoded), whose payload is {"message":...}.
func AWSStreamError(exc string, payload []byte) *Error {
	msg := gjson.GetBytes(payload, "message").String()
	if msg == "" {
		msg = gjson.GetBytes(payload, "Message").String()
	}
	if o := gjson.GetBytes(payload, "originalMessage").String(); o != "" {
		msg += " (model: " + o + ")"
	}
	key := exc
	if key != "" {
		key = strings.ToLower(key[:1]) + key[1:]
	}
	status, ok := awsExceptionStatus[key]
	if !ok {
		status = http.StatusBadGateway
	}
	e := &Error{Status: status, Kind: KindForStatus(status), Message: msg, Code: exc}
	switch status {
	case http.StatusRequestTimeout:
		e.Kind = ErrTimeout
	case http.StatusFailedDependency:
		e.Kind = ErrAPI
	}
	if e.Message == "" {
		e.Message = "bedrock: " + exc
	}
	return e
}

// DecodeError implements Codec: Bedrock's {"message":...} (with the
// exception's name in X-Amzn-ErrorType, which the body's __type may
// repeat), or an Anthropic error the model returned.
func (bedrockCodec) DecodeError(status int, body []byte) *Error {
	e := anthropicCodec{}.DecodeError(status, body)
	if t := gjson.GetBytes(body, "__type").String(); t != "" && e.Code == "" {
		if i := strings.LastIndexAny(t, "#"); i >= 0 {
			t = t[i+1:]
		}
		e.Code = t
	}
	return e
}

// Interface guards.
var (
	_ Codec            = bedrockCodec{}
	_ UsageTimingCodec = bedrockCodec{}
	_ BackendOnlyCodec = bedrockCodec{}
)

// EncodeError implements Codec: Bedrock's {"message":...}.
func (bedrockCodec) EncodeError(e *Error) []byte {
	b, _ := sjson.SetBytes([]byte(`{}`), "message", e.Message)
	return b
}

// RunsServerTool implements ServerToolCodec: Bedrock runs none of
// Anthropic's server tools (the embedded codec's answer is Anthropic's).
func (bedrockCodec) RunsServerTool(ServerToolKind) bool { return false }

package stream

import (
	"net/http"
	"strconv"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// Translation is the response side of one translated exchange: the steps
// that turn a backend's answer (a body, an error, a stream) into the
// client's, between two protocols and with the backend's dialect applied.
// The request side is translate.TranslateRequest, whose client request
// Translation takes. caddymodule's response writer answers through it, as
// the bytes arrive, and record's Replay replays recorded answers through
// it, so a replay answers as louter's handler did.
//
// A Translation is a small value, built per exchange; its methods do not
// modify it, and each transcoder or decoder they return serves one
// answer.
type Translation struct {
	// Client encodes the client's answer; Backend decodes the backend's.
	Client, Backend translate.Codec
	// Dialect is the backend's configured dialect, nil when it has none
	// (translate.ToolNaming gives every backend one).
	Dialect *translate.Dialect
	// Request is the client's request as translate.TranslateRequest
	// returned it: the client encoders read its model and stream options,
	// the dialect decoder its tools.
	Request *translate.Request
	// Warn receives what the dialect parser finds amiss; nil: discarded.
	Warn func(msg string)
}

// DialectConfig is the configuration of the backend's dialect decoder:
// the backend's tool naming (translate.ToolNaming) and the client's
// request.
func (t Translation) DialectConfig() dialect.Config {
	return dialect.Config{
		Dialect: translate.ToolNaming(t.Backend.Protocol(), t.Dialect),
		Request: t.Request,
		Warn:    t.Warn,
	}
}

// StreamDecoder returns a decoder for the backend's stream: the codec's,
// wrapped in the dialect decoder (dialect.NewDecoder), which parses what a
// self-hosted server left in the text and restores the tool names and ids
// the request encoder rewrote.
func (t Translation) StreamDecoder() translate.StreamDecoder {
	return dialect.NewDecoder(t.Backend.NewStreamDecoder(), t.DialectConfig())
}

// NewStreamTranscoder returns the transcoder of a backend's SSE stream
// into the client's stream, framed by out.
func (t Translation) NewStreamTranscoder(out Output) *Transcoder {
	return NewTranscoder(&SSEParser{}, t.StreamDecoder(), t.Client.NewStreamEncoder(t.Request), out)
}

// NewEventTranscoder returns a transcoder of a backend's SSE stream that
// writes nothing for the client: its IR events go to the transcoder's
// Observe (a translate.Accumulator), for a client that asked for a
// complete answer.
func (t Translation) NewEventTranscoder(out Output) *Transcoder {
	return NewTranscoder(&SSEParser{}, t.StreamDecoder(), discardEncoder{}, out)
}

// DecodeResponse decodes a backend's complete answer and applies the
// backend's dialect (dialect.Response). The error is the codec's; the
// caller answers it with BadResponse.
func (t Translation) DecodeResponse(body []byte) (*translate.Response, error) {
	resp, err := t.Backend.DecodeResponse(body)
	if err != nil {
		return nil, err
	}
	return dialect.Response(resp, t.DialectConfig()), nil
}

// BadResponse is the error a client is answered with when the backend's
// answer cannot be decoded (err, from DecodeResponse).
func BadResponse(err error) *translate.Error {
	return translate.NewError(http.StatusBadGateway, "louter: the backend's response cannot be decoded: "+err.Error())
}

// DecodeError decodes a backend's answer of status 300 or more. A status
// below 400 (a redirect, or another status that is neither a success nor
// an error) means nothing to an API client: it is the backend's failure,
// a 502.
func (t Translation) DecodeError(status int, body []byte) *translate.Error {
	e := t.Backend.DecodeError(status, body)
	if status < 400 {
		e = translate.NewError(http.StatusBadGateway, "louter: the backend answered with status "+strconv.Itoa(status))
	}
	return e
}

// EncodeResponse encodes a complete answer for the client. An error is
// the codec's; the caller answers it with UntranslatableResponse.
func (t Translation) EncodeResponse(resp *translate.Response) ([]byte, error) {
	return t.Client.EncodeResponse(resp, t.Request)
}

// UntranslatableResponse is the error a client is answered with when a
// decoded answer cannot be encoded for it (err, from EncodeResponse).
func UntranslatableResponse(err error) *translate.Error {
	return translate.NewError(http.StatusBadGateway, "louter: the backend's response cannot be translated: "+err.Error())
}

// EncodeStream writes a complete answer to out as the client's stream: the
// events it is equivalent to (translate.ResponseEvents), then the end of
// the framing (EndOutput).
func (t Translation) EncodeStream(out Output, resp *translate.Response) {
	enc := t.Client.NewStreamEncoder(t.Request)
	events := translate.ResponseEvents(nil, resp)
	for i := range events {
		enc.Encode(out, &events[i])
	}
	EndOutput(out)
}

// ErrorAnswer returns the status and the body a client is answered e with
// as a complete response (translate.ClientStatus, Codec.EncodeError).
func (t Translation) ErrorAnswer(e *translate.Error) (status int, body []byte) {
	return translate.ClientStatus(t.Client.Protocol(), e), t.Client.EncodeError(e)
}

// discardEncoder is the stream encoder of a transcoder whose client gets
// no stream (NewEventTranscoder).
type discardEncoder struct{}

func (discardEncoder) Encode(translate.FrameWriter, *translate.Event) {}

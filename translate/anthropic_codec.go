package translate

import ()

// anthropicCodec translates the Anthropic Messages API
// (POST /v1/messages) to and from the IR. It is stateless; stream state
// lives in the decoder and encoder values it creates.
//
// The codec is written for a client like Claude Code on one side and for a
// real Anthropic backend (or an Anthropic-compatible server) on the other.
// Traffic between an Anthropic client and an Anthropic backend never reaches
// it: the module passes it through byte for byte.
type anthropicCodec struct{}

func init() { Register(anthropicCodec{}) }

// Protocol implements Codec.
func (anthropicCodec) Protocol() Protocol { return ProtocolAnthropic }

// NewStreamDecoder implements Codec.
func (anthropicCodec) NewStreamDecoder() StreamDecoder { return &anthropicStreamDecoder{} }

// NewStreamEncoder implements Codec.
func (anthropicCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &anthropicStreamEncoder{}
	if req != nil {
		enc.model = req.Model
		enc.estimate = req.InputTokensEstimate
	}
	return enc
}

// Interface guard.
var _ Codec = anthropicCodec{}

package translate

import (
	"crypto/rand"
	"encoding/hex"
)

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
	}
	return enc
}

// anthNewID returns prefix followed by 24 random hex digits, the shape of
// Anthropic's ids (msg_…, toolu_…), for objects that arrive without one.
func anthNewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	dst := make([]byte, len(prefix), len(prefix)+24)
	copy(dst, prefix)
	return string(hex.AppendEncode(dst, b[:]))
}

// Interface guard.
var _ Codec = anthropicCodec{}

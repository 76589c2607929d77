package translate

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

// InputUsageEarly implements UsageTimingCodec: an Anthropic client's
// stream announces the input tokens in its first event, message_start,
// which Claude Code's context meter reads.
func (anthropicCodec) InputUsageEarly() bool { return true }

// InputUsageAtStart implements UsageTimingCodec: an Anthropic backend's
// stream always reports the input tokens in message_start.
func (anthropicCodec) InputUsageAtStart() bool { return true }

// TopLevelRules implements TopLevelCodec.
func (anthropicCodec) TopLevelRules() *TopLevelRules { return &anthTopLevel }

// anthTopLevel: the Messages API's model, stream and max_tokens, its
// system prompt and conversation, and its wording of a repeated member.
var anthTopLevel = TopLevelRules{
	ActedOn:  []string{"model", "stream", "max_tokens"},
	System:   "system",
	Messages: "messages",
	Duplicate: func(key string) *Error {
		return anthBadParam(key, key+": duplicate key in the request body; send each field once")
	},
}

// NewStreamDecoder implements Codec.
func (anthropicCodec) NewStreamDecoder() StreamDecoder { return &anthropicStreamDecoder{} }

// NativeContextEditing implements ContextCodec: Anthropic applies the
// edits of context_management itself.
func (anthropicCodec) NativeContextEditing() bool { return true }

// NewStreamEncoder implements Codec.
func (anthropicCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &anthropicStreamEncoder{}
	if req != nil {
		enc.model = req.Model
		enc.estimate = req.InputTokensEstimate
		if cm := req.ContextManagement; cm != nil && cm.Reported {
			enc.edits = cm
		}
	}
	return enc
}

// Interface guard.
var _ Codec = anthropicCodec{}

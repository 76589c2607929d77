package caddymodule

import (
	"go.uber.org/zap"

	"github.com/louter/louter/stream"
)

// translation is the response side of this attempt's exchange
// (stream.Translation), which record's Replay replays through: the
// backend's stream decoder wrapped in the dialect parser, which reads the
// tool calls and reasoning a self-hosted server left in the text and
// restores the tool names and ids the request encoder rewrote (for a
// backend other than OpenAI Chat the wrapper parses nothing and only
// restores names: see translate.ToolNaming); the same for a complete
// response; and the client's encoders.
func (rw *responseWriter) translation() stream.Translation {
	b, logger := rw.backend, rw.logger
	return stream.Translation{
		Client:  rw.client,
		Backend: b.codec,
		Dialect: b.Dialect,
		Request: rw.clientReq,
		Warn: func(msg string) {
			logger.Warn("backend dialect: "+msg, zap.String("backend", b.name))
		},
	}
}

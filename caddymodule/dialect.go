package caddymodule

import (
	"go.uber.org/zap"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// streamDecoder returns the decoder for the backend's stream. An
// OpenAI-compatible backend's decoder is wrapped in the dialect parser,
// which reads the tool calls and reasoning a self-hosted server left in the
// text and restores the tool names and ids the request encoder rewrote.
// Another backend's is wrapped only when tool names were shortened for it,
// to restore them (the wrapper parses nothing for those: see
// translate.ToolNaming).
func (rw *responseWriter) streamDecoder() translate.StreamDecoder {
	return dialect.NewDialectDecoder(rw.backend.codec.NewStreamDecoder(), rw.dialectConfig())
}

// applyDialect does for a complete response what streamDecoder's parser
// does for a stream.
func (rw *responseWriter) applyDialect(resp *translate.Response) *translate.Response {
	return dialect.DialectResponse(resp, rw.dialectConfig())
}

func (rw *responseWriter) dialectConfig() dialect.DialectConfig {
	b, logger := rw.backend, rw.logger
	return dialect.DialectConfig{
		Dialect: translate.ToolNaming(b.Protocol, b.Dialect),
		Request: rw.clientReq,
		Warn: func(msg string) {
			logger.Warn("backend dialect: "+msg, zap.String("backend", b.name))
		},
	}
}

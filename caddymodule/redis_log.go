package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// go-redis logs through a logger of its own, one for the whole process,
// which wrote plain "redis: 2026/01/02 15:04:05 pool.go:770: ..." lines
// to stderr, among Caddy's JSON ones. routeRedisLogs sends them to Caddy's
// log instead.

// redisLogger is a go-redis logger writing to the zap logger that logger
// returns at each line: Caddy's current default logger, so a line
// written after a config reload goes where the new config says.
type redisLogger struct{ logger func() *zap.Logger }

// Printf implements go-redis's internal.Logging.
func (r redisLogger) Printf(_ context.Context, format string, v ...any) {
	msg := strings.TrimSpace(strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
	level := zapcore.WarnLevel
	if strings.Contains(format, "failed to dial") {
		// The breaker in front of the store logs the outage once, with
		// this error; a failed probe every cool-down is detail.
		level = zapcore.DebugLevel
	}
	if ce := r.logger().Check(level, msg); ce != nil {
		ce.Write()
	}
}

// routeRedisLogs sends go-redis's log lines to Caddy's log, as
// "louter.redis". go-redis's logger is process-wide: it is set once, by
// the first handler that configures Redis, and stays valid across
// reloads (it asks Caddy for its logger at each line).
var routeRedisLogs = sync.OnceFunc(func() { redis.SetLogger(caddyRedisLogger) })

var caddyRedisLogger = redisLogger{func() *zap.Logger { return caddy.Log().Named("louter.redis") }}

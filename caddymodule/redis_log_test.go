package caddymodule

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestRedisLogger: what go-redis logs — here a connection refused — goes
// to zap as a structured entry, not as a plain line on stderr; a failed
// dial, which the breaker reports once, at debug level.
func TestRedisLogger(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	redis.SetLogger(redisLogger{func() *zap.Logger { return zap.New(core).Named("louter.redis") }})
	t.Cleanup(func() { redis.SetLogger(caddyRedisLogger) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	client := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 250 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer client.Close()
	if err := client.Ping(context.Background()).Err(); err == nil {
		t.Fatal("ping to a closed port succeeded")
	}
	entries := logs.All()
	if len(entries) == 0 {
		t.Fatal("go-redis logged nothing through the adapter")
	}
	e := entries[0]
	if e.LoggerName != "louter.redis" || e.Level != zapcore.DebugLevel ||
		!strings.HasPrefix(e.Message, "connection pool: failed to dial") || !strings.Contains(e.Message, addr) {
		t.Errorf("entry %s %v %q, want louter.redis at debug: connection pool: failed to dial ... %s", e.LoggerName, e.Level, e.Message, addr)
	}

	// Anything else it says is a warning.
	redisLogger{func() *zap.Logger { return zap.New(core) }}.Printf(context.Background(), "sentinel: GetMasterAddrByName name=%q failed: %s\n", "m", "EOF")
	if e := logs.All()[len(logs.All())-1]; e.Level != zapcore.WarnLevel || e.Message != `sentinel: GetMasterAddrByName name="m" failed: EOF` {
		t.Errorf("entry %v %q, want a warning without the newline", e.Level, e.Message)
	}
}

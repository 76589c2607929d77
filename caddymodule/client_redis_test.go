package caddymodule

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/louter/louter/internal/testredis"
	"github.com/louter/louter/limits"
)

func TestRedisCountersLease(t *testing.T) {
	tests := []struct {
		name    string
		rc      RedisCounters
		want    time.Duration // the limiter's lease
		wantErr string
	}{
		{"default", RedisCounters{Address: "127.0.0.1:1"}, 0, ""},
		{"set", RedisCounters{Address: "127.0.0.1:1", Lease: caddy.Duration(2 * time.Second)}, 2 * time.Second, ""},
		{"shorter than three timeouts", RedisCounters{Address: "127.0.0.1:1", Lease: caddy.Duration(500 * time.Millisecond)}, 0, "at least three times the timeout (250ms)"},
		{"against a set timeout", RedisCounters{Address: "127.0.0.1:1", Timeout: caddy.Duration(time.Second), Lease: caddy.Duration(2 * time.Second)}, 0, "at least three times the timeout (1s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tt.rc.connect(zap.NewNop())
			if wantError(t, err, tt.wantErr) {
				return
			}
			defer conn.close()
			l := conn.limiter
			if l.Lease != tt.want {
				t.Errorf("lease %v, want %v", l.Lease, tt.want)
			}
			if _, ok := l.Store.(limits.Leaser); !ok {
				t.Error("the Redis store does not lease its concurrency slots")
			}
		})
	}
}

// A handler's Cleanup lets go of what its key table holds: the Redis
// connections and its reference to the process's counters. They were
// released through ctx.OnCancel on the module's copy of the context, which
// Caddy never runs: every reload left a Redis client open.
func TestCleanupReleasesCounters(t *testing.T) {
	srv := testredis.Start(t)
	refs := func() int { n, _ := countersPool.References(countersKey); return n }
	before := refs()
	l := &Louter{
		Backends: map[string]*Backend{"oai": {Protocol: "openai_chat"}},
		Models:   []ModelRoute{{Match: "*", Backend: "oai"}},
		ClientAccess: ClientAccess{
			Clients: []*ClientKey{{Name: "alice", KeySHA256: sha256HexForTest("k"), Limits: Limits{Requests: "10/1m"}}},
			Redis:   &RedisCounters{Address: srv.Addr},
		},
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := l.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	client := l.access.limiter.Store.(*limits.BreakerStore).Store.(*limits.RedisStore).Client
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping before Cleanup: %v", err)
	}
	if got := refs(); got != before+1 {
		t.Errorf("%d references to the counters while provisioned, want %d", got, before+1)
	}
	if err := l.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if err := client.Ping(context.Background()).Err(); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("ping after Cleanup: %v, want %v", err, redis.ErrClosed)
	}
	if got := refs(); got != before {
		t.Errorf("%d references to the counters after Cleanup, want %d", got, before)
	}
}

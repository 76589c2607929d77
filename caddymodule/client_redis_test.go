package caddymodule

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

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
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			l, err := tt.rc.limiter(ctx)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Lease != tt.want {
				t.Errorf("lease %v, want %v", l.Lease, tt.want)
			}
			if _, ok := l.Store.(limits.Leaser); !ok {
				t.Error("the Redis store does not lease its concurrency slots")
			}
		})
	}
}

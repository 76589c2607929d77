package stateful

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
)

// TestStoredResponsesPingInterval: websocket_ping_interval's default, a
// value, and off (a negative duration in JSON).
func TestStoredResponsesPingInterval(t *testing.T) {
	for _, tc := range []struct {
		caddyfile string
		want      time.Duration
	}{
		{"", defaultPingInterval},
		{"websocket_ping_interval 5s", 5 * time.Second},
		{"websocket_ping_interval off", 0},
	} {
		var c Config
		d := caddyfile.NewTestDispenser("stored_responses {\n" + tc.caddyfile + "\n}")
		d.Next()
		if err := c.UnmarshalCaddyfile(d); err != nil {
			t.Fatalf("%q: %v", tc.caddyfile, err)
		}
		sl, err := New(&c, nil, nil, Host{Logger: zap.NewNop()})
		if err != nil {
			t.Fatalf("%q: %v", tc.caddyfile, err)
		}
		if sl.s.wsPing != tc.want {
			t.Errorf("%q: pings every %v, want %v", tc.caddyfile, sl.s.wsPing, tc.want)
		}
		sl.Close()
	}
}

package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalStoredResponses(t *testing.T) {
	var l Louter
	err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`
	louter {
		stored_responses {
			max_stored_bytes 64MiB
			ttl 6h
			websocket off
			websocket_max_age 30m
			websocket_max_bytes 8MiB
			websocket_total_bytes 1GiB
			websocket_max_per_client 4
			websocket_ping_interval 15s
			background_max_per_client 2
			background_max 10
			background_timeout 5m
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := StoredResponses{MaxStoredBytes: 64 << 20, TTL: caddy.Duration(6 * time.Hour), WebSocket: "off",
		WebSocketMaxAge: caddy.Duration(30 * time.Minute), WebSocketMaxBytes: 8 << 20, WebSocketTotalBytes: 1 << 30, WebSocketMaxPerClient: 4, WebSocketPingInterval: caddy.Duration(15 * time.Second),
		BackgroundMaxPerClient: 2, BackgroundMax: 10, BackgroundTimeout: caddy.Duration(5 * time.Minute)}
	if l.State == nil || *l.State != want {
		t.Errorf("stored_responses = %+v, want %+v", l.State, want)
	}
	l = Louter{}
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("louter {\n stored_responses off\n}")); err != nil || !l.State.Disabled {
		t.Errorf("stored_responses off: %+v, %v", l.State, err)
	}
	for _, bad := range []string{
		"louter {\n stored_responses on\n}",
		"louter {\n stored_responses {\n websocket maybe\n }\n}",
		"louter {\n stored_responses {\n ttl -1s\n }\n}",
		"louter {\n stored_responses {\n max_stored_bytes lots\n }\n}",
		"louter {\n stored_responses {\n colour blue\n }\n}",
		"louter {\n stored_responses {\n background_max_per_client 0\n }\n}",
		"louter {\n stored_responses {\n websocket_max_per_client 0\n }\n}",
		"louter {\n stored_responses {\n websocket_total_bytes none\n }\n}",
		"louter {\n stored_responses {\n background_timeout soon\n }\n}",
		"louter {\n stored_responses {\n websocket_ping_interval 0s\n }\n}",
		"louter {\n stored_responses {\n websocket_ping_interval never\n }\n}",
		"louter {\n stored_responses\n stored_responses\n}",
	} {
		l = Louter{}
		if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(bad)); err == nil || !strings.Contains(err.Error(), "stored_responses") && !strings.Contains(err.Error(), "websocket") && !strings.Contains(err.Error(), "ttl") && !strings.Contains(err.Error(), "max_stored_bytes") && !strings.Contains(err.Error(), "background") && !strings.Contains(err.Error(), "websocket_ping_interval") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

package stateful

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/louter/louter/caddymodule/internal/httpx"
)

// UnmarshalCaddyfile parses the stored_responses subdirective into c:
//
//	stored_responses [off] {
//		max_stored_bytes    <size>
//		ttl                 <duration>
//		websocket           on|off
//		websocket_max_age   <duration>
//		websocket_max_bytes <size>
//		websocket_total_bytes <size>
//		websocket_max_per_client <n>
//		websocket_ping_interval <duration>|off
//		background_max_per_client <n>
//		background_max      <n>
//		background_timeout  <duration>
//	}
func (c *Config) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		if d.Val() != "off" {
			return d.Errf("stored_responses takes no argument but off, not %q", d.Val())
		}
		c.Disabled = true
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		switch opt {
		case "max_stored_bytes", "websocket_max_bytes", "websocket_total_bytes":
			n, err := httpx.ParseByteSize(d, opt, v) // internal/httpx
			if err != nil {
				return err
			}
			switch opt {
			case "max_stored_bytes":
				c.MaxStoredBytes = n
			case "websocket_max_bytes":
				c.WebSocketMaxBytes = n
			default:
				c.WebSocketTotalBytes = n
			}
		case "background_max_per_client", "background_max", "websocket_max_per_client":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return d.Errf("invalid %s %q: a positive integer", opt, v)
			}
			switch opt {
			case "background_max":
				c.BackgroundMax = n
			case "background_max_per_client":
				c.BackgroundMaxPerClient = n
			default:
				c.WebSocketMaxPerClient = n
			}
		case "ttl", "websocket_max_age", "background_timeout":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("invalid %s %q", opt, v)
			}
			switch opt {
			case "ttl":
				c.TTL = caddy.Duration(dur)
			case "websocket_max_age":
				c.WebSocketMaxAge = caddy.Duration(dur)
			default:
				c.BackgroundTimeout = caddy.Duration(dur)
			}
		case "websocket_ping_interval":
			if v == "off" {
				c.WebSocketPingInterval = -1
				break
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("invalid %s %q: a positive duration, or off", opt, v)
			}
			c.WebSocketPingInterval = caddy.Duration(dur)
		case "websocket":
			if v != "on" && v != "off" {
				return d.Errf("websocket must be on or off, not %q", v)
			}
			c.WebSocket = v
		default:
			return d.Errf("unrecognized stored_responses option '%s'", opt)
		}
	}
	return nil
}

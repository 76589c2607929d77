package caddymodule

import "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

// unmarshalFallback parses a fallback line of a model route's block; the
// dispenser is on "fallback". Syntax:
//
//	fallback <backend> [<rename>]
//
// Each line adds one backend to the route's chain, tried in the order
// written after the route's own backend.
func unmarshalFallback(d *caddyfile.Dispenser, route *ModelRoute) error {
	args := d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 {
		return d.ArgErr()
	}
	fb := RouteFallback{Backend: args[0]}
	if len(args) == 2 {
		fb.Rename = args[1]
	}
	route.Fallbacks = append(route.Fallbacks, fb)
	return nil
}

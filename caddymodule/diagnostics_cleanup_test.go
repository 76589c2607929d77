package caddymodule

import "testing"

// A handler whose config is unloaded, or fails to load, leaves the
// diagnostics endpoint's list: louter check and caddy validate load
// configurations and unload them, and a handler left listed was probed
// later through backends that never finished provisioning (a panic).
func TestDiagnosticsForgetUnloadedHandlers(t *testing.T) {
	for _, tt := range []struct{ name, cfg string }{
		{"valid", `{"apps": {"http": {"servers": {"s": {"listen": [":0"], "routes": [{"handle": [{"handler": "louter",
			"backends": {"m": {"protocol": "openai_chat", "upstream": {"handler": "reverse_proxy"}}},
			"models": [{"match": "*", "backend": "m"}]}]}]}}}}}`},
		{"invalid", `{"apps": {"http": {"servers": {"s": {"listen": [":0"], "routes": [{"handle": [{"handler": "louter",
			"backends": {"m": {"protocol": "openai", "upstream": {"handler": "reverse_proxy"}}},
			"models": [{"match": "*", "backend": "m"}]}]}]}}}}}`},
	} {
		before := len(liveHandlers.all())
		if _, err := CheckConfig([]byte(tt.cfg)); err != nil {
			t.Fatal(err)
		}
		after := len(liveHandlers.all())
		if after != before {
			t.Errorf("%s config: %d handlers listed after it was unloaded, were %d", tt.name, after, before)
		}
	}
}

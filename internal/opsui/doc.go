// Package opsui tests the usage page (http.handlers.louter_ui,
// caddymodule/ops_ui.go) in a real headless Chromium against a real Caddy:
// the rendered DOM of each view shows the spend, traffic, backend
// cooldowns, errors and recordings the test caused, and holds no key.
// It holds no code; see opsui_test.go.
package opsui

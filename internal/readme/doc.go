// Package readme tests what the README and the example configuration show:
// Caddyfile snippets are formatted as `caddy fmt` writes them (Caddy warns
// about any other) and adapt, whole configurations validate, and the
// recipes for sharing a site and the placeholder example work as written.
// It holds no code; see readme_test.go and snippets_test.go.
package readme

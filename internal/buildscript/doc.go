// Package buildscript tests xcaddy.sh, the script the README and
// docs/building-and-testing.md build Caddy with, both ways it builds: through
// a real xcaddy and with the go command alone. It holds no code; see buildscript_test.go.
package buildscript

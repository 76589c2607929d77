// Command caddy is Caddy with louter built in: the standard modules plus
// http.handlers.louter and the http.handlers.louter_mock test backend.
//
//	go build -o caddy ./cmd/caddy
//	./caddy run --config Caddyfile
//
// It is the binary ./xcaddy.sh build produces (with or without xcaddy),
// built by the go command alone.
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/louter/louter/caddymodule"
	_ "github.com/louter/louter/caddymodule/mock"
)

func main() {
	caddycmd.Main()
}

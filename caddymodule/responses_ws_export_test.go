package caddymodule

import "github.com/louter/louter/caddymodule/internal/stateful"

// WebSocketTurns is what all Responses WebSocket sessions of the process
// hold of their turns, in bytes as websocket_total_bytes counts them, and
// the sessions open (internal/stateful), for the integration tests.
func WebSocketTurns() (bytes int64, sessions int) { return stateful.WebSocketTurns() }

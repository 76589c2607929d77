package caddymodule

// WebSocketTurns is what all Responses WebSocket sessions of the process
// hold of their turns, in bytes as websocket_total_bytes counts them, and
// the sessions open (responses_ws_budget.go), for the integration tests.
func WebSocketTurns() (bytes int64, sessions int) { return wsSockets.held() }

package caddymodule_test

// The bounds of the Responses WebSocket through a real Caddy: the sessions
// one client may hold open (websocket_max_per_client) and what all
// sessions' turns may hold together (websocket_total_bytes).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
)

// dialKey opens a Responses WebSocket on base with the bearer key, the
// mock answering with scenario.
func dialKey(ctx context.Context, base, key, scenario string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	if scenario != "" {
		h.Set("X-Mock-Scenario", scenario)
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/responses", &websocket.DialOptions{HTTPHeader: h, HTTPClient: testcaddy.Client})
	if err == nil {
		c.SetReadLimit(4 << 20)
	}
	return c, resp, err
}

// waitSessions waits up to 5 s for the process to hold n sessions (a
// closed socket is let go of by the server a moment later).
func waitSessions(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, open := caddymodule.WebSocketTurns()
		if open == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d WebSocket sessions open, want %d", open, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIntegrationResponsesWebSocketPerClient: a client holds at most
// websocket_max_per_client sessions; one more is refused with 429 in the
// Responses error shape naming the limit; another client is not affected,
// and a closed session frees its place.
func TestIntegrationResponsesWebSocketPerClient(t *testing.T) {
	e := startStoredEnv(t, "websocket_max_per_client 2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitSessions(t, 0)
	var open []*websocket.Conn
	defer func() {
		for _, c := range open {
			_ = c.CloseNow()
		}
	}()
	for i := range 2 {
		c, _, err := dialKey(ctx, e.louter, "sk-ws-many", "echo")
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		open = append(open, c)
	}
	c, resp, err := dialKey(ctx, e.louter, "sk-ws-many", "echo")
	if err == nil {
		open = append(open, c)
		t.Fatal("a third session of the client was accepted, past websocket_max_per_client 2")
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || gjson.GetBytes(body, "error.code").Str != "websocket_connection_limit_reached" ||
		!strings.Contains(gjson.GetBytes(body, "error.message").Str, "websocket_max_per_client") || gjson.GetBytes(body, "error.type").Str == "" {
		t.Errorf("the refusal: %d %s", resp.StatusCode, body)
	}
	other, _, err := dialKey(ctx, e.louter, "sk-ws-other", "echo")
	if err != nil {
		t.Fatalf("another client's session: %v", err)
	}
	open = append(open, other)
	// The sessions held keep working.
	if evs := wsTurn(t, ctx, open[1], `{"type":"response.create","model":"m","store":false,"input":"still here"}`); evs[len(evs)-1].Get("type").Str != "response.completed" {
		t.Errorf("a held session's turn: %v", evs)
	}
	_ = open[0].Close(websocket.StatusNormalClosure, "")
	waitSessions(t, 2)
	c, _, err = dialKey(ctx, e.louter, "sk-ws-many", "echo")
	if err != nil {
		t.Fatalf("a session once another of the client closed: %v", err)
	}
	open = append(open, c)
}

// TestIntegrationResponsesWebSocketTotalBytes: all sessions' turns
// together stay within websocket_total_bytes, counted by the process's
// account: a session whose turns push the count past it drops those of
// the least recently used session, whole; that session stays open, and
// continuing its turn gets previous_response_not_found (on which Codex
// resends the whole conversation), while the sessions in use continue
// theirs. Closed sessions give their bytes back.
func TestIntegrationResponsesWebSocketTotalBytes(t *testing.T) {
	// A turn of 50 KB of input, echoed, holds about 100 KB: three
	// sessions' turns fit in 350 KB, a fourth's does not.
	e := startStoredEnv(t, "websocket_max_bytes 256KB\n\t\t\twebsocket_total_bytes 350KB")
	const total = 350_000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitSessions(t, 0)
	big := strings.Repeat("q", 50<<10)
	socks := make([]*websocket.Conn, 4)
	ids := make([]string, 4)
	for i := range socks {
		c, _, err := dialKey(ctx, e.louter, fmt.Sprintf("sk-ws-bytes-%d", i), "echo")
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		socks[i] = c
		evs := wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"input":"turn-%d %s"}`, i, big))
		final := evs[len(evs)-1]
		if final.Get("type").Str != "response.completed" {
			t.Fatalf("session %d: %s", i, final.Raw)
		}
		ids[i] = final.Get("response.id").Str
		held, open := caddymodule.WebSocketTurns()
		t.Logf("after session %d's turn: %d sessions hold %d bytes", i, open, held)
		if held > total {
			t.Errorf("after session %d's turn the sessions hold %d bytes, past websocket_total_bytes (%d)", i, held, total)
		}
		if i == 0 && held < 100_000 {
			t.Fatalf("one turn holds %d bytes; the test expects about 100 KB", held)
		}
	}
	// The least recently used session lost its turn, and stays open.
	evs := wsTurn(t, ctx, socks[0], fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"previous_response_id":%q,"input":"more"}`, ids[0]))
	if ev := evs[0]; ev.Get("type").Str != "error" || ev.Get("error.code").Str != "previous_response_not_found" {
		t.Errorf("continuing the least recently used session's turn: %s", evs[len(evs)-1].Raw)
	}
	evs = wsTurn(t, ctx, socks[0], `{"type":"response.create","model":"m","store":false,"input":"the whole conversation again"}`)
	if evs[len(evs)-1].Get("type").Str != "response.completed" {
		t.Errorf("a full request on the session whose turns were dropped: %s", evs[len(evs)-1].Raw)
	}
	// The session used last continues its own.
	evs = wsTurn(t, ctx, socks[3], fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"previous_response_id":%q,"input":"more"}`, ids[3]))
	if final := evs[len(evs)-1]; final.Get("type").Str != "response.completed" {
		t.Errorf("continuing the latest session's turn: %s", final.Raw)
	}
	if held, _ := caddymodule.WebSocketTurns(); held > total {
		t.Errorf("the sessions hold %d bytes, past websocket_total_bytes (%d)", held, total)
	}
	for _, c := range socks {
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
	waitSessions(t, 0)
	if held, _ := caddymodule.WebSocketTurns(); held != 0 {
		t.Errorf("no session is open and the account holds %d bytes", held)
	}
}

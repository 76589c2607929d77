package caddymodule_test

// The bounds of the Responses WebSocket through a real Caddy: the sessions
// one client may hold open (websocket_max_per_client), what all sessions'
// turns may hold together (websocket_total_bytes), and a session whose key
// is revoked or rotated, or whose config is reloaded, while it is open.

import (
	"context"
	"errors"
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

// readClose reads the socket until it closes, and returns the close code
// (-1: it did not close within 5 s, or not with a close frame).
func readClose(c *websocket.Conn) (websocket.StatusCode, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var frames []string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, frames
			}
			return -1, frames
		}
		frames = append(frames, string(data))
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
	if ev := evs[0]; ev.Get("type").Str != "error" || ev.Get("error.code").Str != "previous_response_not_found" || !strings.Contains(ev.Get("error.message").Str, "websocket_total_bytes") {
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

// TestIntegrationResponsesWebSocketRevoked: a session is served as HTTP
// would be now, frame by frame: once the keys API narrows its key's models
// the next frame for another model is refused (403), and once the key is
// revoked or rotated the next frame gets a 401 error frame, as an HTTP
// request with it gets at once, and the session closes (1008).
func TestIntegrationResponsesWebSocketRevoked(t *testing.T) {
	admin := testcaddy.FreePorts(t, 1)[0]
	ports := testcaddy.StartWith(t, testcaddy.Options{AdminPort: admin, StorageDir: t.TempDir()}, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		managed_keys`+keysBackend+`
	}
}
`+mockSite(":{PORT1}", "ws-revoke-mock", "default_scenario echo"))
	testcaddy.WaitListening(t, admin)
	testcaddy.WaitListening(t, ports[1])
	adminURL := fmt.Sprintf("http://127.0.0.1:%d/louter/keys", admin)
	base := testcaddy.URL(ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct{ name, method, path string }{
		{"revoked", http.MethodDelete, ""},
		{"rotated", http.MethodPost, "/rotate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "ws-" + tc.name
			s, created := testcaddy.Do(t, http.MethodPost, adminURL, `{"name":"`+name+`"}`)
			key := gjson.GetBytes(created, "key").Str
			if s != http.StatusCreated || key == "" {
				t.Fatalf("create: %d %s", s, created)
			}
			c, _, err := dialKey(ctx, base, key, "")
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			turn := func(model string) gjson.Result {
				evs := wsTurn(t, ctx, c, `{"type":"response.create","model":"`+model+`","store":false,"input":"hi"}`)
				return evs[len(evs)-1]
			}
			if final := turn("to-a"); final.Get("type").Str != "response.completed" {
				t.Fatalf("the first turn: %s", final.Raw)
			}
			// Narrowed to to-b: the open session is served under the
			// key's entry as it is now.
			if s, b := testcaddy.Do(t, http.MethodPut, adminURL+"/"+name, `{"models":["to-b"]}`); s != 200 {
				t.Fatalf("update: %d %s", s, b)
			}
			if final := turn("to-a"); final.Get("type").Str != "error" || final.Get("status").Int() != 403 || final.Get("error.code").Str != "model_not_allowed" {
				t.Errorf("a model the key may no longer use: %s", final.Raw)
			}
			if final := turn("to-b"); final.Get("type").Str != "response.completed" {
				t.Fatalf("a model the key may use: %s", final.Raw)
			}
			if s, b := testcaddy.Do(t, tc.method, adminURL+"/"+name+tc.path, ""); s != 200 {
				t.Fatalf("%s: %d %s", tc.name, s, b)
			}
			if s, _ := testcaddy.Do(t, http.MethodPost, base+"/v1/responses", `{"model":"to-b","input":"hi"}`, "Authorization", "Bearer "+key); s != 401 {
				t.Errorf("HTTP with the %s key: %d, want 401", tc.name, s)
			}
			if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"to-b","store":false,"input":"after"}`)); err != nil {
				t.Fatal(err)
			}
			code, frames := readClose(c)
			if len(frames) != 1 || gjson.Get(frames[0], "type").Str != "error" || gjson.Get(frames[0], "status").Int() != 401 ||
				gjson.Get(frames[0], "error.code").Str != "invalid_api_key" || !strings.Contains(gjson.Get(frames[0], "error.message").Str, "no longer valid") {
				t.Errorf("the frame after the key was %s: %q", tc.name, frames)
			}
			if code != websocket.StatusPolicyViolation {
				t.Errorf("the session's close: %d, want %d (policy violation)", code, websocket.StatusPolicyViolation)
			}
			if strings.Contains(strings.Join(frames, ""), key) {
				t.Error("the key is in a frame")
			}
		})
	}
}

// TestIntegrationResponsesWebSocketReloaded: a session outlives its
// config's reload (its connection was hijacked), but not its handler: it
// gets a websocket_connection_limit_reached error frame at once, idle, and
// closes (1012), so Codex reconnects, and the new socket is authenticated
// by the new config, which refuses the key it no longer has.
func TestIntegrationResponsesWebSocketReloaded(t *testing.T) {
	const site = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		client ws-reload {
			key_sha256 {SHA}
		}` + keysBackend + `
	}
}
`
	opts := testcaddy.Options{}
	caddyfile := func(key string) string {
		return strings.ReplaceAll(site, "{SHA}", sha256Hex(key)) + mockSite(":{PORT1}", "ws-reload-mock", "default_scenario echo")
	}
	ports := testcaddy.StartWith(t, opts, caddyfile("sk-reload-old"))
	testcaddy.WaitListening(t, ports[1])
	base := testcaddy.URL(ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := dialKey(ctx, base, "sk-reload-old", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if evs := wsTurn(t, ctx, c, `{"type":"response.create","model":"to-a","store":false,"input":"hi"}`); evs[len(evs)-1].Get("type").Str != "response.completed" {
		t.Fatalf("before the reload: %v", evs)
	}
	testcaddy.Reload(t, opts, caddyfile("sk-reload-new"), ports)
	code, frames := readClose(c)
	if len(frames) != 1 || gjson.Get(frames[0], "error.code").Str != "websocket_connection_limit_reached" || !strings.Contains(frames[0], "reloaded") {
		t.Errorf("the session after its config was reloaded: %q", frames)
	}
	if code != websocket.StatusServiceRestart {
		t.Errorf("the session's close: %d, want %d (service restart)", code, websocket.StatusServiceRestart)
	}
	if _, resp, err := dialKey(ctx, base, "sk-reload-old", ""); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("reconnecting with the key the new config does not have: %v %v", err, resp)
	}
	c2, _, err := dialKey(ctx, base, "sk-reload-new", "")
	if err != nil {
		t.Fatalf("reconnecting with the new config's key: %v", err)
	}
	defer c2.CloseNow()
	if evs := wsTurn(t, ctx, c2, `{"type":"response.create","model":"to-a","store":false,"input":"hi"}`); evs[len(evs)-1].Get("type").Str != "response.completed" {
		t.Errorf("after the reload: %v", evs)
	}
}

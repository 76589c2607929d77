package caddymodule_test

// The Responses API over a WebSocket through a real Caddy, as Codex speaks
// it: response.create frames, the stream's events as text frames,
// previous_response_id within the socket with store false, a prewarm
// (generate false), error frames; and the 426 that turns it off.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

// wsTurn sends one frame and reads the frames up to the turn's end: the
// terminal event or an error frame.
func wsTurn(t *testing.T, ctx context.Context, c *websocket.Conn, frame string) []gjson.Result {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	var got []gjson.Result
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v (after %d frames)", err, len(got))
		}
		if typ != websocket.MessageText {
			t.Fatalf("a binary frame")
		}
		if strings.HasPrefix(string(data), "event:") || strings.HasPrefix(string(data), "data:") {
			t.Fatalf("an SSE line in a frame: %s", data)
		}
		ev := gjson.ParseBytes(data)
		got = append(got, ev)
		switch ev.Get("type").Str {
		case "response.completed", "response.incomplete", "response.failed", "error":
			return got
		}
	}
}

func dialResponses(t *testing.T, ctx context.Context, e *env, scenario string) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-ws-client")
	h.Set("X-Mock-Scenario", scenario)
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	url := "ws" + strings.TrimPrefix(e.louter, "http") + "/codex/v1/responses"
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, HTTPClient: testcaddy.Client})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	return c
}

func TestIntegrationResponsesWebSocket(t *testing.T) {
	e := startResponsesEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, model := range []string{"resp-via-openai-1", "resp-via-anthropic-1", "resp-via-gemini-1"} {
		t.Run(model, func(t *testing.T) {
			e.clearJournals()
			c := dialResponses(t, ctx, e, "echo")
			defer c.CloseNow()
			// Codex copies its HTTP fields into the frame: stream and
			// store false included.
			evs := wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":%q,"store":false,"stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"alpha"}]}],"client_metadata":{"x-codex-window-id":"w"}}`, model))
			if evs[0].Get("type").Str != "response.created" || evs[len(evs)-1].Get("type").Str != "response.completed" {
				t.Fatalf("turn 1 frames: %v", evs)
			}
			id1 := evs[len(evs)-1].Get("response.id").Str
			// The next turn sends only the new items.
			evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":%q,"store":false,"previous_response_id":%q,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"beta"}]}]}`, model, id1))
			final := evs[len(evs)-1]
			if final.Get("type").Str != "response.completed" || final.Get("response.output.0.content.0.text").Str != "beta" {
				t.Fatalf("turn 2 frames: %v", evs)
			}
			reqs := e.backendRequests()
			body := reqs[len(reqs)-1].Get("body").Raw
			if strings.Count(body, "alpha") < 2 || !strings.Contains(body, "beta") || strings.Contains(body, "client_metadata") {
				t.Errorf("turn 2's backend request lacks the socket's history (alpha asked and answered): %s", body)
			}
			// An unknown id is an error frame Codex answers by resending
			// the whole request; the socket stays open.
			evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":%q,"previous_response_id":"resp_gone","input":"x"}`, model))
			if ev := evs[0]; ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 || ev.Get("error.code").Str != "previous_response_not_found" {
				t.Errorf("unknown previous id: %s", ev.Raw)
			}
			// A prewarm, then a turn continuing it.
			evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":%q,"generate":false,"store":false,"input":[{"type":"message","role":"user","content":"gamma"}]}`, model))
			warm := evs[len(evs)-1]
			if warm.Get("type").Str != "response.completed" || warm.Get("response.output.#").Int() != 0 {
				t.Fatalf("prewarm: %v", evs)
			}
			evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":%q,"store":false,"previous_response_id":%q,"input":[]}`, model, warm.Get("response.id").Str))
			if got := evs[len(evs)-1].Get("response.output.0.content.0.text").Str; got != "gamma" {
				t.Errorf("after the prewarm: %q, %v", got, evs)
			}
			if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	t.Run("bad frame", func(t *testing.T) {
		c := dialResponses(t, ctx, e, "echo")
		defer c.CloseNow()
		evs := wsTurn(t, ctx, c, `{"type":"response.steer","input":"x"}`)
		if evs[0].Get("type").Str != "error" || evs[0].Get("status").Int() != 400 {
			t.Errorf("unsupported message: %s", evs[0].Raw)
		}
		// Lanes (stream_id) and background are refused by name; the
		// socket stays open.
		evs = wsTurn(t, ctx, c, `{"type":"response.create","model":"resp-via-openai-1","stream_id":"lane-2","input":"x"}`)
		if evs[0].Get("type").Str != "error" || evs[0].Get("status").Int() != 400 || !strings.HasPrefix(evs[0].Get("error.message").Str, "louter: stream_id: ") ||
			evs[0].Get("stream_id").Str != "lane-2" {
			t.Errorf("stream_id: %s", evs[0].Raw)
		}
		evs = wsTurn(t, ctx, c, `{"type":"response.create","model":"resp-native-1","background":true,"input":"x"}`)
		if evs[0].Get("type").Str != "error" || evs[0].Get("status").Int() != 400 || evs[0].Get("error.param").Str != "background" {
			t.Errorf("background: %s", evs[0].Raw)
		}
		evs = wsTurn(t, ctx, c, `{"type":"response.create","model":"no-such-model","input":"x"}`)
		if evs[0].Get("type").Str != "error" || evs[0].Get("status").Int() != 404 {
			t.Errorf("unknown model: %s", evs[0].Raw)
		}
	})
}

// TestIntegrationResponsesWebSocketOff: turned off, the upgrade gets 426,
// the status that makes Codex use HTTP at once.
func TestIntegrationResponsesWebSocketOff(t *testing.T) {
	e := startStoredEnv(t, "websocket off")
	req, _ := http.NewRequest(http.MethodGet, e.louter+"/v1/responses", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUpgradeRequired || gjson.GetBytes(raw, "error.code").Str != "websocket_disabled" {
		t.Errorf("refusal: %d %s", resp.StatusCode, raw)
	}
}

// TestIntegrationResponsesWebSocketCancel: Codex 0.169 has no cancel
// frame; it stops a turn by dropping the socket. A socket closed in the
// middle of a turn cancels that turn's backend request.
func TestIntegrationResponsesWebSocketCancel(t *testing.T) {
	e := startResponsesEnv(t)
	e.clearJournals()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialResponses(t, ctx, e, "slow")
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"resp-via-anthropic-1","store":false,"input":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	if _, first, err := c.Read(ctx); err != nil || gjson.GetBytes(first, "type").Str != "response.created" {
		t.Fatalf("first frame: %s, %v", first, err)
	}
	_ = c.CloseNow()
	if !e.waitCancelled(1) {
		t.Fatal("closing the socket did not cancel the turn's backend request")
	}
}

// TestIntegrationResponsesWebSocketHeldFlat: one socket held open for 200
// turns of 10 KB (thousands of events) with store false, chained four at a
// time as Codex chains a turn's requests, keeps only websocket_max_bytes
// of its turns: the oldest is evicted (continuing it is
// previous_response_not_found), the latest continues, and the process's
// heap after the first 50 turns does not grow with the next 150.
func TestIntegrationResponsesWebSocketHeldFlat(t *testing.T) {
	e := startStoredEnv(t, "websocket_max_bytes 256KB")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-ws-held")
	h.Set("X-Mock-Scenario", "echo")
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.louter, "http")+"/v1/responses", &websocket.DialOptions{HTTPHeader: h, HTTPClient: testcaddy.Client})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	heap := func() uint64 {
		e.clearJournals() // the mock's journal holds every backend request
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	big := strings.Repeat("z", 10<<10)
	var first, prev string
	var events int
	var at50 uint64
	for i := range 200 {
		frame := fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"input":"held-%03d %s"}`, i, big)
		if i%4 != 0 {
			frame = fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"previous_response_id":%q,"input":"held-%03d %s"}`, prev, i, big)
		}
		evs := wsTurn(t, ctx, c, frame)
		final := evs[len(evs)-1]
		if final.Get("type").Str != "response.completed" {
			t.Fatalf("turn %d: %s", i, final.Raw)
		}
		events += len(evs)
		prev = final.Get("response.id").Str
		if i == 0 {
			first = prev
		}
		if i == 49 {
			at50 = heap()
		}
	}
	at200 := heap()
	t.Logf("%d events on one socket; heap after 50 turns %d KB, after 200 %d KB", events, at50>>10, at200>>10)
	if at200 > at50+2<<20 {
		t.Errorf("the heap grew by %d KB over 150 turns on a held socket; the session is bounded to 256 KB", (at200-at50)>>10)
	}
	evs := wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"previous_response_id":%q,"input":"x"}`, first))
	if evs[0].Get("error.code").Str != "previous_response_not_found" {
		t.Errorf("the socket's first turn is still held past websocket_max_bytes: %s", evs[len(evs)-1].Raw)
	}
	evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"m","store":false,"previous_response_id":%q,"input":"last"}`, prev))
	if evs[len(evs)-1].Get("type").Str != "response.completed" {
		t.Errorf("the latest turn does not continue: %s", evs[len(evs)-1].Raw)
	}
}

package caddymodule_test

// Keep-alive on the Responses WebSocket through a real Caddy, with
// websocket_ping_interval shortened: the client is pinged every interval;
// one that answers stays connected however long it is idle; one that stops
// answering is disconnected once a ping goes unanswered for an interval,
// and the turn it was running is cancelled at its backend.

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const testPingInterval = 200 * time.Millisecond

// pingedSocket is a client socket whose reader runs in the background, as
// every client's must for control frames to be answered: it counts the
// pings, answers them while answer is set, and passes text frames on.
type pingedSocket struct {
	c      *websocket.Conn
	pings  atomic.Int32
	answer atomic.Bool
	frames chan []byte
	closed chan error // the reader's error, once the connection is gone
}

func dialPinged(t *testing.T, ctx context.Context, e *env, scenario string) *pingedSocket {
	t.Helper()
	s := &pingedSocket{frames: make(chan []byte, 64), closed: make(chan error, 1)}
	s.answer.Store(true)
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-ws-ping")
	h.Set("X-Mock-Scenario", scenario)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.louter, "http")+"/v1/responses", &websocket.DialOptions{
		HTTPHeader: h, HTTPClient: testcaddy.Client,
		OnPingReceived: func(context.Context, []byte) bool {
			s.pings.Add(1)
			return s.answer.Load()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	s.c = c
	go func() {
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				s.closed <- err
				return
			}
			s.frames <- data
		}
	}()
	return s
}

func TestIntegrationResponsesWebSocketPing(t *testing.T) {
	e := startStoredEnv(t, "websocket_ping_interval 200ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("answered", func(t *testing.T) {
		s := dialPinged(t, ctx, e, "echo")
		idle := 8 * testPingInterval
		select {
		case err := <-s.closed:
			t.Fatalf("an idle socket whose client answers the pings was closed: %v", err)
		case <-time.After(idle):
		}
		if n := s.pings.Load(); n < 3 {
			t.Fatalf("%d pings in %v with websocket_ping_interval %v", n, idle, testPingInterval)
		}
		// Still open: a turn is served.
		if err := s.c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"m","store":false,"input":"still here"}`)); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case err := <-s.closed:
				t.Fatalf("closed during the turn: %v", err)
			case f := <-s.frames:
				if typ := gjson.GetBytes(f, "type").Str; typ == "response.completed" {
					if got := gjson.GetBytes(f, "response.output.0.content.0.text").Str; got != "still here" {
						t.Errorf("after %d pings: %s", s.pings.Load(), f)
					}
					return
				} else if typ == "error" {
					t.Fatalf("error frame: %s", f)
				}
			case <-ctx.Done():
				t.Fatal("no answer")
			}
		}
	})

	t.Run("unanswered", func(t *testing.T) {
		e.clearJournals()
		s := dialPinged(t, ctx, e, "slow")
		// A turn whose stream takes seconds, then silence: the client
		// reads its frames but answers no ping.
		s.answer.Store(false)
		if err := s.c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"m","store":false,"input":"hello"}`)); err != nil {
			t.Fatal(err)
		}
		var firstPing time.Time
		for firstPing.IsZero() {
			select {
			case err := <-s.closed:
				t.Fatalf("closed before any ping: %v", err)
			case <-s.frames:
			case <-time.After(10 * time.Millisecond):
			}
			if s.pings.Load() > 0 {
				firstPing = time.Now()
			}
		}
		var closedAfter time.Duration
	wait:
		for {
			select {
			case <-s.closed:
				closedAfter = time.Since(firstPing)
				break wait
			case f := <-s.frames:
				if typ := gjson.GetBytes(f, "type").Str; typ == "response.completed" || typ == "error" {
					t.Fatalf("the turn ended (%s) on a socket whose client answers no ping", f)
				}
			case <-ctx.Done():
				t.Fatal("a socket whose client answers no ping stays open")
			}
		}
		t.Logf("closed %v after the first unanswered ping (%d pings)", closedAfter, s.pings.Load())
		// Not before the pong's time is up (less the 10ms this loop polls at).
		if closedAfter < testPingInterval-20*time.Millisecond {
			t.Errorf("closed %v after an unanswered ping: before websocket_ping_interval (%v) was up", closedAfter, testPingInterval)
		}
		if closedAfter > 25*testPingInterval {
			t.Errorf("closed only %v after an unanswered ping (websocket_ping_interval %v)", closedAfter, testPingInterval)
		}
		if !e.waitCancelled(1) {
			t.Error("the turn's backend request was not cancelled when its socket was closed")
		}
	})
}

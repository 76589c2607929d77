package caddymodule_test

// Stored responses on a Responses backend (passthrough) through a real
// Caddy: which ids reach the backend, and what DELETE ends. Under the
// backend's one api_key, an id louter does not hold for the client is the
// API's not-found, over HTTP, SSE and the WebSocket, and never reaches the
// backend; with pass_client_auth it goes on, as the backend's own. DELETE
// ends a chain for good, and reaches the backend that kept the turn.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
)

const chainCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		backend shared {
			protocol openai_responses
			api_key shared-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend own {
			protocol openai_responses
			pass_client_auth
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model shared-* shared
		model own-* own
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name mock-chain
	}
}
`

// chainCall sends method path with the client's key and reads the answer:
// for a stream, the terminal event's response; for an error, its JSON.
func chainCall(t *testing.T, e *env, method, path, key, scenario, body string) (int, gjson.Result) {
	t.Helper()
	req, _ := http.NewRequest(method, e.louter+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Mock-Scenario", scenario)
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, gjson.ParseBytes(raw)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var last gjson.Result
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if ev := gjson.Parse(data); ev.Get("response").Exists() {
				last = ev.Get("response")
			}
		}
	}
	return resp.StatusCode, last
}

// notContinued checks the answer to a continuation louter must refuse:
// the 400 an id that never existed gets, naming previous_response_id.
func notContinued(t *testing.T, what string, status int, got gjson.Result) {
	t.Helper()
	if status != 400 || got.Get("error.code").Str != "previous_response_not_found" || got.Get("error.param").Str != "previous_response_id" {
		t.Errorf("%s: %d %s, want 400 previous_response_not_found", what, status, got.Raw)
	}
}

// backendGot reports whether a backend request's body holds marker.
func backendGot(e *env, marker string) bool {
	for _, r := range e.backendRequests() {
		if strings.Contains(r.Get("body").Raw, marker) {
			return true
		}
	}
	return false
}

func dialAs(t *testing.T, ctx context.Context, e *env, key string) *websocket.Conn {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + key}, "X-Mock-Scenario": {"echo"}}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.louter, "http")+"/v1/responses", &websocket.DialOptions{HTTPHeader: h, HTTPClient: testcaddy.Client})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	return c
}

func TestIntegrationResponsesBackendChain(t *testing.T) {
	e := startMockEnv(t, testcaddy.Options{}, chainCaddyfile, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn := func(key, body string) (int, gjson.Result) {
		t.Helper()
		return chainCall(t, e, "POST", "/v1/responses", key, "echo", body)
	}

	t.Run("another client's id", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			e.clearJournals()
			status, a := turn("sk-alice", `{"model":"shared-1","input":"alice-first"}`)
			if status != 200 || a.Get("id").Str == "" {
				t.Fatalf("alice: %d %s", status, a.Raw)
			}
			id := a.Get("id").Str
			marker := fmt.Sprintf("bob-stream-%v", stream)
			status, got := turn("sk-bob", fmt.Sprintf(`{"model":"shared-1","stream":%v,"previous_response_id":%q,"input":%q}`, stream, id, marker))
			notContinued(t, fmt.Sprintf("bob continuing alice's response (stream %v)", stream), status, got)
			// An id louter never saw, the backend's own perhaps, is not
			// asked of the backend under its shared key either.
			status, got = turn("sk-bob", fmt.Sprintf(`{"model":"shared-1","stream":%v,"previous_response_id":"resp_elsewhere","input":%q}`, stream, marker))
			notContinued(t, "an unknown id", status, got)
			if backendGot(e, marker) {
				t.Errorf("the backend got bob's continuation (stream %v)", stream)
			}
			// The owner continues through the backend, which keeps the
			// chain (the mock keeps none, and refuses the id: its answer
			// does not matter here).
			turn("sk-alice", fmt.Sprintf(`{"model":"shared-1","stream":%v,"previous_response_id":%q,"input":"alice-second"}`, stream, id))
			reqs := e.backendRequests()
			if body := reqs[len(reqs)-1].Get("body"); body.Get("previous_response_id").Str != id {
				t.Errorf("alice's continuation did not go to the backend's chain: %s", body.Raw)
			}
		}
		// Over the WebSocket likewise.
		status, a := turn("sk-alice", `{"model":"shared-1","input":"alice-ws"}`)
		if status != 200 {
			t.Fatalf("alice: %d %s", status, a.Raw)
		}
		c := dialAs(t, ctx, e, "sk-bob")
		defer c.CloseNow()
		evs := wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"shared-1","previous_response_id":%q,"input":"bob-on-ws"}`, a.Get("id").Str))
		if ev := evs[0]; ev.Get("type").Str != "error" || ev.Get("status").Int() != 400 || ev.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("bob on the socket: %s", ev.Raw)
		}
		if backendGot(e, "bob-on-ws") {
			t.Error("the backend got bob's continuation on the socket")
		}
	})

	t.Run("pass_client_auth", func(t *testing.T) {
		// The backend authenticates the client: an id louter does not
		// hold is the backend's to answer for (the mock refuses it).
		e.clearJournals()
		turn("sk-alice", `{"model":"own-1","previous_response_id":"resp_made_elsewhere","input":"own-unknown"}`)
		reqs := e.backendRequests()
		if len(reqs) != 1 {
			t.Fatalf("the backend got %d requests, want the continuation", len(reqs))
		}
		r := reqs[0]
		if r.Get("body.previous_response_id").Str != "resp_made_elsewhere" || r.Get("headers.Authorization").Str != "Bearer sk-alice" {
			t.Errorf("the backend did not get the id with the client's own key: %s", r.Raw)
		}
	})

	t.Run("delete", func(t *testing.T) {
		for _, tc := range []struct{ model, cred string }{{"shared-1", "Bearer shared-backend-key"}, {"own-1", "Bearer sk-alice"}} {
			e.clearJournals()
			status, a := turn("sk-alice", fmt.Sprintf(`{"model":%q,"input":"to-delete"}`, tc.model))
			if status != 200 {
				t.Fatalf("%s: %d %s", tc.model, status, a.Raw)
			}
			id := a.Get("id").Str
			status, got := chainCall(t, e, "DELETE", "/v1/responses/"+id, "sk-alice", "echo", "")
			if status != 200 || !got.Get("deleted").Bool() {
				t.Fatalf("%s: DELETE: %d %s", tc.model, status, got.Raw)
			}
			// The backend kept the turn: it was asked to delete it, with
			// the credential it was asked to keep it with.
			reqs := e.backendRequests()
			if d := reqs[len(reqs)-1]; d.Get("method").Str != "DELETE" || d.Get("path").Str != "/v1/responses/"+id || d.Get("headers.Authorization").Str != tc.cred {
				t.Errorf("%s: the backend's last request is not the DELETE: %s", tc.model, d.Raw)
			}
			marker := "after-delete-" + tc.model
			for _, stream := range []bool{false, true} {
				status, got = turn("sk-alice", fmt.Sprintf(`{"model":%q,"stream":%v,"previous_response_id":%q,"input":%q}`, tc.model, stream, id, marker))
				notContinued(t, tc.model+": continuing a deleted response", status, got)
			}
			if backendGot(e, marker) {
				t.Errorf("%s: a deleted response was continued through the backend", tc.model)
			}
			if status, _ := chainCall(t, e, "GET", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 404 {
				t.Errorf("%s: GET after DELETE: %d", tc.model, status)
			}
			if status, _ := chainCall(t, e, "DELETE", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 404 {
				t.Errorf("%s: DELETE again: %d", tc.model, status)
			}
		}
	})

	t.Run("delete a rebuilt turn", func(t *testing.T) {
		// A turn continuing another backend's chain gets its history
		// from louter; the backend still keeps it, store being true, and
		// is asked to delete it.
		e.clearJournals()
		_, a := turn("sk-alice", `{"model":"shared-1","input":"on-shared"}`)
		status, b := turn("sk-alice", fmt.Sprintf(`{"model":"own-1","previous_response_id":%q,"input":"on-own"}`, a.Get("id").Str))
		if status != 200 {
			t.Fatalf("continuing on the other backend: %d %s", status, b.Raw)
		}
		reqs := e.backendRequests()
		if body := reqs[len(reqs)-1].Get("body"); body.Get("previous_response_id").Exists() || !strings.Contains(body.Raw, "on-shared") {
			t.Fatalf("the turn was not rebuilt: %s", body.Raw)
		}
		id := b.Get("id").Str
		if status, got := chainCall(t, e, "DELETE", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 200 {
			t.Fatalf("DELETE: %d %s", status, got.Raw)
		}
		reqs = e.backendRequests()
		if d := reqs[len(reqs)-1]; d.Get("method").Str != "DELETE" || d.Get("path").Str != "/v1/responses/"+id || d.Get("headers.Authorization").Str != "Bearer sk-alice" {
			t.Errorf("the backend's last request is not the DELETE: %s", d.Raw)
		}
	})

	t.Run("delete while a socket holds the turn", func(t *testing.T) {
		e.clearJournals()
		c := dialAs(t, ctx, e, "sk-alice")
		defer c.CloseNow()
		evs := wsTurn(t, ctx, c, `{"type":"response.create","model":"shared-1","store":true,"input":"stored-on-ws"}`)
		id := evs[len(evs)-1].Get("response.id").Str
		if status, got := chainCall(t, e, "DELETE", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 200 {
			t.Fatalf("DELETE: %d %s", status, got.Raw)
		}
		evs = wsTurn(t, ctx, c, fmt.Sprintf(`{"type":"response.create","model":"shared-1","previous_response_id":%q,"input":"ws-after-delete"}`, id))
		if ev := evs[0]; ev.Get("type").Str != "error" || ev.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("continuing a deleted turn on the socket: %s", ev.Raw)
		}
		if backendGot(e, "ws-after-delete") {
			t.Error("the backend got the deleted turn's continuation")
		}
	})

	t.Run("conversation", func(t *testing.T) {
		// Under the shared key louter keeps the conversation; the backend
		// gets the history, not the id.
		e.clearJournals()
		for _, in := range []string{"conv-one", "conv-two"} {
			if status, got := turn("sk-alice", fmt.Sprintf(`{"model":"shared-1","conversation":"conv_team","input":%q}`, in)); status != 200 {
				t.Fatalf("%s: %d %s", in, status, got.Raw)
			}
		}
		reqs := e.backendRequests()
		if body := reqs[len(reqs)-1].Get("body").Raw; strings.Contains(body, "conv_team") || !strings.Contains(body, "conv-one") {
			t.Errorf("the conversation's second turn: %s", body)
		}
		if status, got := turn("sk-bob", `{"model":"shared-1","conversation":"conv_team","input":"bob-conv"}`); status != 200 {
			t.Fatalf("bob: %d %s", status, got.Raw)
		}
		reqs = e.backendRequests()
		if body := reqs[len(reqs)-1].Get("body").Raw; strings.Contains(body, "conv-one") || strings.Contains(body, "conv_team") {
			t.Errorf("bob reached alice's conversation: %s", body)
		}
		// A backend that authenticates the client owns its conversations
		// (the mock refuses them).
		turn("sk-alice", `{"model":"own-1","conversation":"conv_own","input":"own-conv"}`)
		reqs = e.backendRequests()
		if body := reqs[len(reqs)-1].Get("body"); body.Get("conversation").Str != "conv_own" {
			t.Errorf("the conversation did not reach the backend that owns it: %s", body.Raw)
		}
	})

	t.Run("background", func(t *testing.T) {
		e.clearJournals()
		status, got := turn("sk-alice", `{"model":"shared-1","background":true,"previous_response_id":"resp_elsewhere","input":"bg-unknown"}`)
		notContinued(t, "a background continuation of an unknown id", status, got)
		// Deleted while it runs, a background turn stops and stays deleted.
		status, q := chainCall(t, e, "POST", "/v1/responses", "sk-alice", "slow", `{"model":"shared-1","background":true,"input":"bg-slow"}`)
		if status != 200 || q.Get("status").Str != "queued" {
			t.Fatalf("background: %d %s", status, q.Raw)
		}
		id := q.Get("id").Str
		for deadline := time.Now().Add(5 * time.Second); !backendGot(e, "bg-slow"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the background turn did not reach the backend")
			}
		}
		if status, got := chainCall(t, e, "DELETE", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 200 {
			t.Fatalf("DELETE: %d %s", status, got.Raw)
		}
		if !e.waitCancelled(1) {
			t.Error("the deleted background turn's backend request was not cancelled")
		}
		time.Sleep(300 * time.Millisecond)
		if status, got := chainCall(t, e, "GET", "/v1/responses/"+id, "sk-alice", "echo", ""); status != 404 {
			t.Errorf("the deleted background response came back: %d %s", status, got.Raw)
		}
		// The backend knows a background turn by an id of its own, not
		// this one: it is not asked to delete this one.
		for _, r := range e.backendRequests() {
			if r.Get("method").Str == "DELETE" {
				t.Errorf("the backend was asked to delete a background turn: %s", r.Raw)
			}
		}
	})
}

package caddymodule_test

// Codex calls the Responses API both under .../v1 and without it (its base
// URL may end at the gateway's prefix): every Responses endpoint louter
// serves answers on both forms.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/louter/louter/internal/testcaddy"
)

func TestIntegrationResponsesPathsWithoutV1(t *testing.T) {
	e := startResponsesEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct{ name, base string }{
		{"with /v1", "/codex/v1"},
		{"without /v1", "/codex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := func(scenario string) openai.Client {
				return openai.NewClient(ooption.WithBaseURL(e.louter+tc.base+"/"), ooption.WithAPIKey("sk-paths-client"),
					ooption.WithMaxRetries(0), ooption.WithRequestTimeout(30*time.Second), ooption.WithHeader("X-Mock-Scenario", scenario))
			}
			c := client("echo")
			// POST create, stored.
			created, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"paths-alpha"}`))
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			// GET and GET input_items.
			if got, err := c.Responses.Get(ctx, created.ID, responses.ResponseGetParams{}); err != nil || got.ID != created.ID {
				t.Errorf("GET: %v %+v", err, got)
			}
			if items, err := c.Responses.InputItems.List(ctx, created.ID, responses.InputItemListParams{}); err != nil || len(items.Data) != 1 {
				t.Errorf("GET input_items: %v %+v", err, items)
			}
			// The WebSocket upgrade and one response.create frame,
			// continuing the stored turn.
			h := http.Header{}
			h.Set("Authorization", "Bearer sk-paths-client")
			h.Set("X-Mock-Scenario", "echo")
			ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.louter, "http")+tc.base+"/responses",
				&websocket.DialOptions{HTTPHeader: h, HTTPClient: testcaddy.Client})
			if err != nil {
				t.Fatalf("WebSocket dial: %v (%v)", err, resp)
			}
			evs := wsTurn(t, ctx, ws, fmt.Sprintf(`{"type":"response.create","model":"resp-via-openai-1","previous_response_id":%q,"input":"paths-beta"}`, created.ID))
			if last := evs[len(evs)-1]; last.Get("type").Str != "response.completed" {
				t.Errorf("WebSocket turn: %v", evs)
			}
			ws.Close(websocket.StatusNormalClosure, "")
			// POST /responses/compact.
			compacted, err := c.Responses.Compact(ctx, responses.ResponseCompactParams{
				Model: "resp-via-openai-1",
				Input: responses.ResponseCompactParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{
					responses.ResponseInputItemParamOfMessage("remember zebra", responses.EasyInputMessageRoleUser),
				}},
			})
			if err != nil || compacted.Object != "response.compaction" {
				t.Errorf("compact: %v %+v", err, compacted)
			}
			// DELETE, then the turn is gone.
			if err := c.Responses.Delete(ctx, created.ID); err != nil {
				t.Errorf("DELETE: %v", err)
			}
			if _, err := c.Responses.Get(ctx, created.ID, responses.ResponseGetParams{}); statusOf(err) != 404 {
				t.Errorf("GET after DELETE: %v", err)
			}
			// POST cancel of a background turn.
			slow := client("slow")
			q, err := slow.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"slow","background":true}`))
			if err != nil || q.Status != "queued" {
				t.Fatalf("background create: %v %+v", err, q)
			}
			if got, err := slow.Responses.Cancel(ctx, q.ID); err != nil || got.Status != "cancelled" {
				t.Errorf("cancel: %v %+v", err, got)
			}
		})
	}
}

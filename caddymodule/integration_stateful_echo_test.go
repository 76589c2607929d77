package caddymodule_test

// A live answer to a request with previous_response_id echoes it, as
// OpenAI's does: the non-streaming body, every response object of the
// stream (response.created, .in_progress, .completed), and the same events
// over the WebSocket; on every backend protocol.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
)

func TestIntegrationStoredResponsesEchoPrevious(t *testing.T) {
	e := startResponsesEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// resp-native-1 passes through to a Responses backend: the turn it
	// continues was answered by another backend, so louter puts the
	// history back and the backend, not given the id, answers null.
	for _, model := range []string{"resp-via-openai-1", "resp-via-anthropic-1", "resp-via-gemini-1", "resp-native-1"} {
		t.Run(model, func(t *testing.T) {
			c := statefulClient(e, "echo", "sk-echo-prev")
			firstModel := model
			if model == "resp-native-1" {
				firstModel = "resp-via-openai-1"
			}
			first, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model: firstModel, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("one")}})
			if err != nil {
				t.Fatal(err)
			}
			if first.PreviousResponseID != "" {
				t.Errorf("a first turn echoes previous_response_id %q", first.PreviousResponseID)
			}
			// store true is the API's default, and the turn is kept: the
			// answer says so, as OpenAI's does (a passthrough's backend
			// speaks for itself).
			translated := model != "resp-native-1"
			if !gjson.Get(first.RawJSON(), "store").Bool() {
				t.Error("a stored turn echoes store false")
			}
			// Non-streaming.
			second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: model, PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("two")}})
			if err != nil {
				t.Fatal(err)
			}
			if second.PreviousResponseID != first.ID || second.OutputText() != "two" {
				t.Errorf("Create: previous_response_id = %q, want %q (%q)", second.PreviousResponseID, first.ID, second.OutputText())
			}
			if translated && !gjson.Get(second.RawJSON(), "store").Bool() {
				t.Error("Create: a stored turn echoes store false")
			}
			// Streaming: every event that carries the response object.
			s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: model, PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("three")}})
			seen := map[string]bool{}
			for s.Next() {
				ev := s.Current()
				switch ev.Type {
				case "response.created", "response.in_progress", "response.completed":
					seen[ev.Type] = true
					if ev.Response.PreviousResponseID != first.ID {
						t.Errorf("%s: previous_response_id = %q, want %q", ev.Type, ev.Response.PreviousResponseID, first.ID)
					}
					if translated && !gjson.Get(ev.Response.RawJSON(), "store").Bool() {
						t.Errorf("%s: a stored turn echoes store false", ev.Type)
					}
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 3 {
				t.Errorf("stream events with a response object: %v", seen)
			}
			// The WebSocket, store false, as Codex chains its turns: a
			// first turn, a prewarm and turns continuing the socket's own.
			ws := dialResponses(t, ctx, e, "echo")
			defer ws.CloseNow()
			prev := ""
			for i, frame := range []string{
				`{"type":"response.create","model":%q,"store":false%s,"input":"ws-0"}`,
				`{"type":"response.create","model":%q,"store":false%s,"input":"ws-1"}`,
				`{"type":"response.create","model":%q,"store":false,"generate":false%s,"input":"ws-2"}`,
				`{"type":"response.create","model":%q,"store":false%s,"input":"ws-3"}`,
			} {
				cont := ""
				if prev != "" {
					cont = fmt.Sprintf(`,"previous_response_id":%q`, prev)
				}
				evs := wsTurn(t, ctx, ws, fmt.Sprintf(frame, model, cont))
				for _, ev := range evs {
					if r := ev.Get("response"); r.Exists() && (r.Get("previous_response_id").Str != prev || prev == "" && r.Get("previous_response_id").Type.String() != "Null") {
						t.Errorf("WebSocket turn %d, %s: previous_response_id = %s, want %q", i, ev.Get("type").Str, r.Get("previous_response_id").Raw, prev)
					}
					if r := ev.Get("response"); r.Exists() && r.Get("store").Raw != "false" {
						t.Errorf("WebSocket turn %d, %s: a turn sent with store false echoes store %s", i, ev.Get("type").Str, r.Get("store").Raw)
					}
				}
				if last := evs[len(evs)-1]; last.Get("type").Str != "response.completed" {
					t.Fatalf("WebSocket turn %d: %s", i, last.Raw)
				}
				prev = evs[len(evs)-1].Get("response.id").Str
			}
		})
	}
}

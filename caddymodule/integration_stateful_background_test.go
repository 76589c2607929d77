package caddymodule_test

// Background responses through a real Caddy with the official openai-go
// client: queued at once, run detached from the client's connection,
// polled with GET, cancelled with POST .../cancel, bounded per client.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// pollResponse polls GET /v1/responses/{id} until its status is not
// queued or in_progress.
func pollResponse(t *testing.T, c openai.Client, id string) *responses.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		got, err := c.Responses.Get(ctx, id, responses.ResponseGetParams{})
		if err != nil {
			t.Fatalf("GET %s: %v", id, err)
		}
		if got.Status != "queued" && got.Status != "in_progress" {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestResponsesBackground(t *testing.T) {
	e := startResponsesEnv(t)
	ctx := context.Background()
	for _, model := range []string{"resp-via-anthropic-1", "resp-via-gemini-1", "resp-native-1"} {
		t.Run(model, func(t *testing.T) {
			e.clearJournals()
			c := responsesClient(e, "echo")
			// The client's connection ends with the queued answer; the
			// turn runs on.
			queued, err := c.Responses.New(ctx, rawParams(fmt.Sprintf(`{"model":%q,"input":"bg-alpha","background":true}`, model)))
			if err != nil || queued.Status != "queued" || !queued.Background || queued.ID == "" {
				t.Fatalf("create: %v %+v", err, queued)
			}
			done := pollResponse(t, c, queued.ID)
			if done.Status != "completed" || done.ID != queued.ID || done.OutputText() != "bg-alpha" || !done.Background {
				t.Fatalf("polled: %s %q %q", done.Status, done.ID, done.OutputText())
			}
			for _, r := range e.backendRequests() {
				if strings.Contains(r.Get("body").Raw, `"background"`) {
					t.Errorf("background reached the backend: %s", r.Get("body").Raw)
				}
			}
			// It continues as any stored response.
			next, err := c.Responses.New(ctx, rawParams(fmt.Sprintf(`{"model":%q,"input":"bg-beta","previous_response_id":%q}`, model, queued.ID)))
			if err != nil || next.OutputText() != "bg-beta" {
				t.Fatalf("continuing: %v", err)
			}
			reqs := e.backendRequests()
			if body := reqs[len(reqs)-1].Get("body").Raw; strings.Count(body, "bg-alpha") < 2 {
				t.Errorf("the continuation's backend request lacks the background turn: %s", body)
			}
			// Cancelling an ended one changes nothing.
			if got, err := c.Responses.Cancel(ctx, queued.ID); err != nil || got.Status != "completed" {
				t.Errorf("cancel after the end: %v %+v", err, got)
			}
		})
	}

	t.Run("cancel and bound", func(t *testing.T) {
		e.clearJournals()
		c := responsesClient(e, "slow")
		var ids []string
		for range 4 { // background_max_per_client's default
			q, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"slow","background":true}`))
			if err != nil || q.Status != "queued" {
				t.Fatalf("create: %v", err)
			}
			ids = append(ids, q.ID)
		}
		_, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"slow","background":true}`))
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Param != "background" {
			t.Errorf("a fifth at once: %v", err)
		}
		// Another client is not bounded by this one's turns.
		other := responsesClient(e, "echo")
		if q, err := other.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"x","background":true}`), ooption.WithAPIKey("sk-other-client")); err != nil {
			t.Errorf("another client: %v", err)
		} else if _, err := other.Responses.Get(ctx, q.ID, responses.ResponseGetParams{}); err == nil {
			t.Errorf("a client read another's background response")
		}
		// Cancelled while queued, a turn never reaches the backend: wait
		// for the four to be there, so the cancels have requests to end.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			n := 0
			for _, r := range e.backendRequests() {
				if strings.Contains(r.Get("body").Raw, "slow") {
					n++
				}
			}
			if n >= len(ids) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d background turns reached the backend", n, len(ids))
			}
		}
		for _, id := range ids {
			got, err := c.Responses.Cancel(ctx, id)
			if err != nil || got.Status != "cancelled" {
				t.Fatalf("cancel: %v %+v", err, got)
			}
		}
		// The backend requests were cancelled, and the responses stay
		// cancelled.
		if !e.waitCancelled(len(ids)) {
			t.Fatalf("the %d backend requests were not cancelled", len(ids))
		}
		time.Sleep(100 * time.Millisecond)
		for _, id := range ids {
			if got := pollResponse(t, c, id); got.Status != "cancelled" {
				t.Errorf("after cancel: %s", got.Status)
			}
		}
		// The bound is free again.
		q, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"slow","background":true}`))
		if err != nil {
			t.Fatalf("after the cancels: %v", err)
		}
		_, _ = c.Responses.Cancel(ctx, q.ID)
	})

	t.Run("failed", func(t *testing.T) {
		c := responsesClient(e, "error_500")
		q, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-anthropic-1","input":"x","background":true}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := pollResponse(t, c, q.ID); got.Status != "failed" || got.Error.Message == "" {
			t.Errorf("a failing turn: %s %+v", got.Status, got.Error)
		}
	})

	t.Run("refused", func(t *testing.T) {
		c := responsesClient(e, "echo")
		for _, tc := range []struct{ body, param string }{
			{`{"model":"resp-via-openai-1","input":"x","background":true,"stream":true}`, "stream"},
			{`{"model":"resp-via-openai-1","input":"x","background":true,"store":false}`, "store"},
			{`{"model":"resp-via-openai-1","input":"x","background":true,"previous_response_id":"resp_gone"}`, "previous_response_id"},
		} {
			_, err := c.Responses.New(ctx, rawParams(tc.body))
			var ae *openai.Error
			if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != tc.param {
				t.Errorf("%s: %v", tc.body, err)
			}
		}
		// A response not made in the background cannot be cancelled.
		plain, err := c.Responses.New(ctx, rawParams(`{"model":"resp-via-openai-1","input":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Responses.Cancel(ctx, plain.ID)
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 {
			t.Errorf("cancelling a foreground response: %v", err)
		}
	})
}

// TestResponsesBackgroundTimeout: a background turn that runs past
// background_timeout is cancelled and stored failed, saying so.
func TestResponsesBackgroundTimeout(t *testing.T) {
	e := startStoredEnv(t, "background_timeout 150ms")
	c := openai.NewClient(ooption.WithBaseURL(e.louter+"/v1/"), ooption.WithAPIKey("sk-bg-timeout"), ooption.WithMaxRetries(0),
		ooption.WithHeader("X-Mock-Scenario", "slow"))
	q, err := c.Responses.New(context.Background(), rawParams(`{"model":"m","input":"slow","background":true}`))
	if err != nil {
		t.Fatal(err)
	}
	got := pollResponse(t, c, q.ID)
	if got.Status != "failed" || !strings.Contains(got.Error.Message, "background_timeout") {
		t.Errorf("past background_timeout: %s %+v", got.Status, got.Error)
	}
}

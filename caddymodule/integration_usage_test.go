package caddymodule_test

// Usage up front: an Anthropic stream's message_start carries an input-token
// figure whatever the backend (the backend's own when it announces one, else
// louter's estimate), and the final message_delta carries the backend's
// exact counts; a Gemini stream's first chunk carries a promptTokenCount.

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// usageBackends are the routes of tokensCaddyfile with the token framing
// of their backend protocols; estimated is whether louter announces its
// own estimate (the backend reports input only at the end).
var usageBackends = []struct {
	model     string
	framing   *tokencount.Framing
	estimated bool
}{
	{"count-oai", tokencount.OpenAI, true},  // openai_chat
	{"count-resp", tokencount.OpenAI, true}, // openai_responses
	{"count-gem", tokencount.Gemini, false},
	{"count-anth", tokencount.Anthropic, false},
}

// backendInput is the input count the mock reports: a quarter of the body
// it received.
func backendInput(t *testing.T, e *env) int64 {
	t.Helper()
	reqs := e.backendRequests()
	if len(reqs) != 1 {
		t.Fatalf("backend saw %d requests, want 1", len(reqs))
	}
	return max(1, int64(len(reqs[0].Get("body").Raw))/4)
}

// estimateFor is what louter announces for an Anthropic request body sent
// to a backend of framing f.
func estimateFor(t *testing.T, body []byte, f *tokencount.Framing) int64 {
	t.Helper()
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return int64(tokencount.Quick(req, f))
}

func TestAnthropicStreamUsageUpFrontSDK(t *testing.T) {
	e := startTokensEnv(t)
	for _, tt := range usageBackends {
		t.Run(tt.model, func(t *testing.T) {
			e.clearJournals()
			client := anthropicClient(e, "text")
			s := client.Messages.NewStreaming(context.Background(), anthropicParams(tt.model))
			var start, final int64 = -1, -1
			var msg anthropic.Message
			for s.Next() {
				ev := s.Current()
				switch ev.Type {
				case "message_start":
					start = ev.Message.Usage.InputTokens
				case "message_delta":
					final = ev.Usage.InputTokens
				}
				if err := msg.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if start <= 0 {
				t.Errorf("message_start input_tokens %d, want a figure", start)
			}
			want := backendInput(t, e)
			if final != want || msg.Usage.InputTokens != want {
				t.Errorf("message_delta input_tokens %d, accumulated %d, want the backend's %d", final, msg.Usage.InputTokens, want)
			}
			if !tt.estimated && start != want {
				t.Errorf("message_start input_tokens %d, want the backend's own %d", start, want)
			}
		})
	}
}

func TestAnthropicStreamUsageUpFrontRaw(t *testing.T) {
	e := startTokensEnv(t)
	for _, tt := range usageBackends {
		t.Run(tt.model, func(t *testing.T) {
			e.clearJournals()
			body := `{"model":"` + tt.model + `","max_tokens":100,"stream":true,"system":"You are terse.",` +
				`"messages":[{"role":"user","content":"Summarise the plot of Hamlet in two sentences, please."}]}`
			resp := post(t, e.louter+"/v1/messages", body, "X-Mock-Scenario", "text")
			defer resp.Body.Close()
			var start, final gjson.Result
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				switch gjson.Get(data, "type").Str {
				case "message_start":
					start = gjson.Get(data, "message.usage")
				case "message_delta":
					final = gjson.Get(data, "usage")
				}
			}
			want := backendInput(t, e)
			if final.Get("input_tokens").Int() != want {
				t.Errorf("message_delta usage %s, want input_tokens %d", final.Raw, want)
			}
			switch got := start.Get("input_tokens").Int(); {
			case tt.estimated && got != estimateFor(t, []byte(body), tt.framing):
				t.Errorf("message_start usage %s, want louter's estimate %d", start.Raw, estimateFor(t, []byte(body), tt.framing))
			case !tt.estimated && got != want:
				t.Errorf("message_start usage %s, want the backend's %d", start.Raw, want)
			}
		})
	}
}

// TestGeminiStreamUsageUpFront checks that a Gemini client's first chunk
// reports a prompt count through a backend that reports usage only at the
// end, and the last chunk the backend's.
func TestGeminiStreamUsageUpFront(t *testing.T) {
	e := startTokensEnv(t)
	for _, model := range []string{"count-oai", "count-resp"} {
		t.Run(model, func(t *testing.T) {
			e.clearJournals()
			c := geminiClient(t, e, "text")
			var counts []int32
			for chunk, err := range c.Models.GenerateContentStream(context.Background(), model, genai.Text("Summarise the plot of Hamlet."), nil) {
				if err != nil {
					t.Fatal(err)
				}
				if chunk.UsageMetadata != nil {
					counts = append(counts, chunk.UsageMetadata.PromptTokenCount)
				} else {
					counts = append(counts, 0)
				}
			}
			if len(counts) < 2 || counts[0] <= 0 {
				t.Fatalf("prompt counts per chunk %v, want a figure from the first", counts)
			}
			if want := backendInput(t, e); int64(counts[len(counts)-1]) != want {
				t.Errorf("last chunk's promptTokenCount %d, want the backend's %d", counts[len(counts)-1], want)
			}
		})
	}
}

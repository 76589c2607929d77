package caddymodule_test

// Context overflow through a real Caddy: every client protocol × every
// backend server wording (louter_mock's overflow scenarios), as a 400
// before anything was sent and in the middle of a stream, passthrough pairs
// included; then the official SDKs see the error as their own.

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/internal/testcaddy"
)

const overflowCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Overflow
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-anthropic anth
		model to-openai_chat oai
		model to-openai_responses resp
		model to-gemini gem
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name overflow-mock
	}
}
`

// overflowServers are the mock's wordings, with the backend protocol that
// speaks each and whether it gives both figures (250000 > 200000).
var overflowServers = []struct {
	wording, backend string
	figures          bool
}{
	{"anthropic", "anthropic", true},
	{"openai", "openai_chat", true},
	{"llamacpp", "openai_chat", true},
	{"vllm", "openai_chat", true},
	{"responses", "openai_responses", false},
	{"gemini", "gemini", true},
}

// overflowNative is the wording of each protocol's reference server.
var overflowNative = map[string]string{"anthropic": "anthropic", "openai_chat": "openai", "openai_responses": "responses", "gemini": "gemini"}

// overflowRequest is a client's request in its protocol: the URL path and
// body for the model.
func overflowRequest(client, model string, stream bool) (path, body string) {
	s := "false"
	if stream {
		s = "true"
	}
	switch client {
	case "anthropic":
		return "/v1/messages", `{"model":"` + model + `","max_tokens":100,"stream":` + s + `,"messages":[{"role":"user","content":"a very long prompt"}]}`
	case "openai_chat":
		return "/v1/chat/completions", `{"model":"` + model + `","stream":` + s + `,"messages":[{"role":"user","content":"a very long prompt"}]}`
	case "openai_responses":
		return "/v1/responses", `{"model":"` + model + `","stream":` + s + `,"input":"a very long prompt"}`
	}
	method := ":generateContent"
	if stream {
		method = ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + model + method, `{"contents":[{"role":"user","parts":[{"text":"a very long prompt"}]}]}`
}

// TestIntegrationContextOverflow sends each client protocol's request to
// each server wording, as a plain request, a streaming one refused up
// front, and a stream the error interrupts, and checks the client gets the
// overflow as its own provider words it.
func TestIntegrationContextOverflow(t *testing.T) {
	ports := testcaddy.Start(t, overflowCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	louter := testcaddy.URL(ports[0])
	for _, client := range []string{"anthropic", "openai_chat", "openai_responses", "gemini"} {
		for _, srv := range overflowServers {
			for _, mode := range []string{"json", "stream", "midstream"} {
				t.Run(client+"/"+srv.wording+"/"+mode, func(t *testing.T) {
					scenario := "overflow"
					if mode == "midstream" {
						scenario = "overflow_midstream"
					}
					path, body := overflowRequest(client, "to-"+srv.backend, mode != "json")
					resp := post(t, louter+path, body, "X-Mock-Scenario", scenario, "X-Mock-Overflow", srv.wording)
					raw, _ := io.ReadAll(resp.Body)
					if mode == "midstream" {
						if resp.StatusCode != 200 {
							t.Fatalf("status %d: %s", resp.StatusCode, raw)
						}
						raw = overflowStreamError(t, client, raw)
						if client == srv.backend && srv.wording != overflowNative[client] {
							// A passthrough stream goes on byte for byte,
							// its error event included (llama.cpp and vLLM
							// check the prompt before they stream: their
							// 400 is reworded, see the json and stream
							// modes).
							if !strings.Contains(string(raw), `"code":400`) {
								t.Errorf("passthrough stream error changed: %s", raw)
							}
							return
						}
					} else if resp.StatusCode != 400 {
						t.Fatalf("status %d, want 400: %s", resp.StatusCode, raw)
					}
					checkOverflowBody(t, client, srv.figures, raw)
				})
			}
		}
	}
}

// overflowStreamError returns the error a client's stream ended with: the
// data of the error event (the response of Responses' response.failed).
func overflowStreamError(t *testing.T, client string, stream []byte) []byte {
	t.Helper()
	var last []byte
	event := ""
	for _, line := range strings.Split(string(stream), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			event = name
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		switch {
		case client == "openai_responses" && event == "response.failed":
			return []byte(gjson.Get(data, "response").Raw)
		case client != "openai_responses" && gjson.Get(data, "error").Exists():
			last = []byte(data)
		}
	}
	if last == nil {
		t.Fatalf("no error event in the stream:\n%s", stream)
	}
	return last
}

// checkOverflowBody checks an error body (or a Responses response object)
// is the client's own overflow error.
func checkOverflowBody(t *testing.T, client string, figures bool, body []byte) {
	t.Helper()
	root := gjson.ParseBytes(body)
	switch client {
	case "anthropic":
		msg := root.Get("error.message").Str
		if root.Get("error.type").Str != "invalid_request_error" || !strings.HasPrefix(msg, "prompt is too long") {
			t.Errorf("not Anthropic's overflow: %s", body)
		}
		if figures && msg != "prompt is too long: 250000 tokens > 200000 maximum" {
			t.Errorf("message %q", msg)
		}
	case "openai_chat":
		if root.Get("error.code").Str != "context_length_exceeded" || root.Get("error.type").Str != "invalid_request_error" {
			t.Errorf("not OpenAI's overflow: %s", body)
		}
	case "openai_responses":
		if root.Get("error.code").Str != "context_length_exceeded" {
			t.Errorf("not the Responses overflow: %s", body)
		}
	case "gemini":
		if root.Get("error.code").Int() != 400 || root.Get("error.status").Str != "INVALID_ARGUMENT" {
			t.Errorf("not Gemini's error: %s", body)
		}
		if msg := root.Get("error.message").Str; figures && msg != "The input token count (250000) exceeds the maximum number of tokens allowed (200000)." {
			t.Errorf("message %q", msg)
		}
	}
}

// TestIntegrationContextOverflowSDKs checks the SDKs raise the overflow as
// their error type with the message and code their agents test.
func TestIntegrationContextOverflowSDKs(t *testing.T) {
	ports := testcaddy.Start(t, overflowCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, wording := range []string{"openai", "llamacpp", "gemini"} {
		model := "to-openai_chat"
		if wording == "gemini" {
			model = "to-gemini"
		}
		t.Run("anthropic/"+wording, func(t *testing.T) {
			c := anthropicClient(e, "overflow")
			_, err := c.Messages.New(ctx, anthropicParams(model), overflowHeader(wording))
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != 400 || gjson.Get(ae.RawJSON(), "error.message").Str != "prompt is too long: 250000 tokens > 200000 maximum" {
				t.Fatalf("got %v", err)
			}
		})
		t.Run("anthropic-stream-mid/"+wording, func(t *testing.T) {
			c := anthropicClient(e, "overflow_midstream")
			s := c.Messages.NewStreaming(ctx, anthropicParams(model), overflowHeader(wording))
			for s.Next() {
			}
			if err := s.Err(); err == nil || !strings.Contains(err.Error(), "prompt is too long: 250000 tokens > 200000 maximum") {
				t.Fatalf("stream error %v", err)
			}
		})
	}
	t.Run("openai_chat/vllm passthrough", func(t *testing.T) {
		c := openaiClient(e, "overflow")
		_, err := c.Chat.Completions.New(ctx, openaiParams("to-openai_chat"), overflowHeaderOpenAI("vllm"))
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "context_length_exceeded" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("openai_chat/anthropic", func(t *testing.T) {
		c := openaiClient(e, "overflow")
		_, err := c.Chat.Completions.New(ctx, openaiParams("to-anthropic"))
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "context_length_exceeded" || oe.Param != "messages" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("responses-stream-mid/llamacpp", func(t *testing.T) {
		c := responsesClient(e, "overflow_midstream")
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: "to-openai_chat",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("a very long prompt")},
		}, overflowHeaderOpenAI("llamacpp"))
		for s.Next() {
		}
		// The SDK stops at the error event that precedes response.failed.
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), `"code":"context_length_exceeded"`) {
			t.Fatalf("stream error %v", err)
		}
	})
	for _, model := range []string{"to-anthropic", "to-openai_chat"} {
		t.Run("gemini/"+model, func(t *testing.T) {
			c := geminiClient(t, e, "overflow")
			_, err := c.Models.GenerateContent(ctx, model, genai.Text("a very long prompt"), nil)
			var ae genai.APIError
			if !errors.As(err, &ae) || ae.Code != 400 || ae.Status != "INVALID_ARGUMENT" ||
				ae.Message != "The input token count (250000) exceeds the maximum number of tokens allowed (200000)." {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func overflowHeader(wording string) aoption.RequestOption {
	return aoption.WithHeader("X-Mock-Overflow", wording)
}

func overflowHeaderOpenAI(wording string) ooption.RequestOption {
	return ooption.WithHeader("X-Mock-Overflow", wording)
}

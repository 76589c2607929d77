package caddymodule_test

// Integration tests of live streams through silence and of watched
// passthrough streams, through a real Caddy against louter_mock: the
// clients' keep-alives while a backend stalls (and that each official SDK
// still parses the stream), the stream idle and first-byte timeouts, and
// same-protocol streams that end early or carry a malformed event, for
// every client protocol.

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// The timers are short so the tests are: a stall of stallShort sees
// several keep-alives and no timeout; one of stallLong outlasts both
// timeouts.
const (
	stallShort = "300ms"
	stallLong  = "5s"
)

const timersCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario X-Mock-Stall X-Mock-Stall-Before X-Mock-Truncate
		keepalive_interval 50ms
		stream_idle_timeout 700ms
		first_byte_timeout 700ms
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend anth {
			protocol anthropic
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
		model *-oai oai
		model *-anth anth
		model *-resp resp
		model *-gem gem
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name timers-mock
	}
}
`

func startTimersEnv(t *testing.T) *env {
	t.Helper()
	ports := testcaddy.Start(t, timersCaddyfile)
	testcaddy.WaitListening(t, ports[1])
	return &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
}

// timerPair is a client protocol talking to a model whose backend speaks
// the same protocol (passthrough) or another one (translated).
type timerPair struct {
	client translate.Protocol
	model  string
}

func (p timerPair) name() string { return string(p.client) + "/" + p.model }

var timerPairs = []timerPair{
	{translate.ProtocolAnthropic, "m-anth"},
	{translate.ProtocolAnthropic, "m-oai"},
	{translate.ProtocolOpenAIChat, "m-oai"},
	{translate.ProtocolOpenAIChat, "m-anth"},
	{translate.ProtocolOpenAIResponses, "m-resp"},
	{translate.ProtocolOpenAIResponses, "m-anth"},
	{translate.ProtocolGemini, "m-gem"},
	{translate.ProtocolGemini, "m-oai"},
}

// rawStream posts a streaming request in the client's protocol and returns
// the response with its whole body.
func rawStream(t *testing.T, e *env, client translate.Protocol, model string, headers ...string) (*http.Response, string) {
	t.Helper()
	var path, body string
	switch client {
	case translate.ProtocolAnthropic:
		path, body = "/v1/messages", `{"model":"`+model+`","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	case translate.ProtocolOpenAIChat:
		path, body = "/v1/chat/completions", `{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	case translate.ProtocolOpenAIResponses:
		path, body = "/v1/responses", `{"model":"`+model+`","stream":true,"input":"hi"}`
	case translate.ProtocolGemini:
		path, body = "/v1beta/models/"+model+":streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	}
	resp := post(t, e.louter+path, body, append([]string{mock.ScenarioHeader, "text"}, headers...)...)
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

// streamEnd decodes a client stream with its protocol's own decoder and
// returns the error it ends with ("" when it ends well) and the events.
func streamEnd(t *testing.T, client translate.Protocol, body string, jsonArray bool) (string, []translate.Event) {
	t.Helper()
	codec, _ := translate.Lookup(client)
	dec := codec.NewStreamDecoder()
	var framer stream.Framer = &stream.SSEParser{}
	if jsonArray {
		framer = &stream.JSONArrayParser{}
	}
	var evs []translate.Event
	fn := func(name string, data []byte) { evs = dec.Decode(evs, name, data) }
	if err := framer.Feed([]byte(body), fn); err != nil {
		t.Fatalf("the client stream does not frame: %v\n%s", err, body)
	}
	_ = framer.Close(fn)
	evs = dec.End(evs)
	for i, ev := range evs {
		if ev.Type == translate.EventError {
			if i != len(evs)-1 {
				t.Errorf("an error event before the end of the stream:\n%s", body)
			}
			return ev.Err.Message, evs
		}
	}
	return "", evs
}

// keepalives counts louter's keep-alives in a client stream: Anthropic
// pings (louter_mock sends none) and SSE comments.
func keepalives(body string) int {
	return strings.Count(body, "event: ping\ndata: {\"type\": \"ping\"}\n\n") + strings.Count(body, ": keep-alive\n\n")
}

func TestIntegrationKeepalivesDuringStall(t *testing.T) {
	e := startTimersEnv(t)
	for _, p := range timerPairs {
		t.Run(p.name(), func(t *testing.T) {
			resp, body := rawStream(t, e, p.client, p.model, mock.StallHeader, stallShort)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d:\n%s", resp.StatusCode, body)
			}
			if msg, _ := streamEnd(t, p.client, body, false); msg != "" {
				t.Fatalf("the stream ended with %q:\n%s", msg, body)
			}
			n := keepalives(body)
			if p.client == translate.ProtocolGemini {
				// The genai SDK fails on comments and event lines.
				if n != 0 || strings.Contains(body, "\n:") || strings.HasPrefix(body, ":") || strings.Contains(body, "event:") {
					t.Fatalf("a Gemini client got a keep-alive:\n%s", body)
				}
			} else if n < 2 {
				t.Fatalf("%d keep-alives during a %s stall with keepalive_interval 50ms:\n%s", n, stallShort, body)
			}
			t.Logf("%d keep-alives", n)
			// The official SDK still parses the stream.
			if text, err := sdkStream(t, e, p.client, p.model, mock.StallHeader, stallShort); err != nil || text == "" {
				t.Fatalf("the SDK read %q, error %v", text, err)
			}
		})
	}
}

// sdkStream streams a text answer with the client protocol's official SDK,
// sending one extra header, and returns the text it read.
func sdkStream(t *testing.T, e *env, client translate.Protocol, model, header, value string) (string, error) {
	t.Helper()
	ctx := context.Background()
	var text strings.Builder
	switch client {
	case translate.ProtocolAnthropic:
		c := anthropicClient(e, "text", aoption.WithHeader(header, value))
		s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 50,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
		var msg anthropic.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				return "", err
			}
		}
		if err := s.Err(); err != nil {
			return "", err
		}
		for _, b := range msg.Content {
			text.WriteString(b.Text)
		}
	case translate.ProtocolOpenAIChat:
		c := openaiClient(e, "text")
		s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}, ooption.WithHeader(header, value))
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return "", err
		}
		if len(acc.Choices) > 0 {
			text.WriteString(acc.Choices[0].Message.Content)
		}
	case translate.ProtocolOpenAIResponses:
		c := responsesClient(e, "text")
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: model,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}, ooption.WithHeader(header, value))
		completed := false
		for s.Next() {
			ev := s.Current()
			switch ev.Type {
			case "response.output_text.delta":
				text.WriteString(ev.Delta)
			case "response.completed":
				completed = true
			}
		}
		if err := s.Err(); err != nil {
			return "", err
		}
		if !completed {
			return "", io.ErrUnexpectedEOF
		}
	case translate.ProtocolGemini:
		c := geminiClient(t, e, "text")
		cfg := &genai.GenerateContentConfig{HTTPOptions: &genai.HTTPOptions{Headers: http.Header{header: {value}}}}
		for resp, err := range c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), cfg) {
			if err != nil {
				return "", err
			}
			text.WriteString(resp.Text())
		}
	}
	return text.String(), nil
}

func TestIntegrationStreamIdleTimeout(t *testing.T) {
	e := startTimersEnv(t)
	for _, p := range timerPairs {
		t.Run(p.name(), func(t *testing.T) {
			resp, body := rawStream(t, e, p.client, p.model, mock.StallHeader, stallLong)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d:\n%s", resp.StatusCode, body)
			}
			msg, evs := streamEnd(t, p.client, body, false)
			if !strings.Contains(msg, "stream_idle_timeout") {
				t.Fatalf("the stream ended with %q, want the idle timeout:\n%s", msg, body)
			}
			// What came before the stall reached the client.
			if len(evs) < 2 {
				t.Fatalf("only %d events before the timeout:\n%s", len(evs), body)
			}
			if _, err := sdkStream(t, e, p.client, p.model, mock.StallHeader, stallLong); err == nil {
				t.Fatal("the SDK took a timed-out stream for a complete answer")
			}
		})
	}
}

func TestIntegrationFirstByteTimeout(t *testing.T) {
	e := startTimersEnv(t)
	for _, p := range timerPairs {
		t.Run(p.name(), func(t *testing.T) {
			resp, body := rawStream(t, e, p.client, p.model, mock.StallBeforeHeader, stallLong)
			if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, %s:\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			// The error body is the client protocol's own.
			codec, _ := translate.Lookup(p.client)
			if e := codec.DecodeError(resp.StatusCode, []byte(body)); !strings.Contains(e.Message, "first_byte_timeout") {
				t.Fatalf("error %q:\n%s", e.Message, body)
			}
			if keepalives(body) != 0 {
				t.Fatalf("a keep-alive before the response began:\n%s", body)
			}
		})
	}
}

// TestIntegrationPassthroughTruncation: a same-protocol stream that the
// backend closes cleanly before its end, or that carries a malformed
// event, ends with the protocol's own error event, and the SDK reports an
// error.
func TestIntegrationPassthroughTruncation(t *testing.T) {
	e := startTimersEnv(t)
	faults := []struct {
		name    string
		headers []string
		want    string
	}{
		{"closed early", []string{mock.TruncateHeader, "3"}, "ended before the response was complete"},
		{"malformed event", []string{mock.ScenarioHeader, "stream_malformed"}, "malformed upstream event"},
	}
	for _, p := range timerPairs {
		if !strings.HasSuffix(p.model, map[translate.Protocol]string{
			translate.ProtocolAnthropic: "-anth", translate.ProtocolOpenAIChat: "-oai",
			translate.ProtocolOpenAIResponses: "-resp", translate.ProtocolGemini: "-gem"}[p.client]) {
			continue // passthrough pairs only
		}
		for _, f := range faults {
			t.Run(p.name()+"/"+f.name, func(t *testing.T) {
				resp, body := rawStream(t, e, p.client, p.model, f.headers...)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d:\n%s", resp.StatusCode, body)
				}
				if msg, _ := streamEnd(t, p.client, body, false); !strings.Contains(msg, f.want) {
					t.Fatalf("the stream ended with %q, want %q:\n%s", msg, f.want, body)
				}
				if strings.Contains(body, "{not json") {
					t.Fatalf("the malformed event was forwarded:\n%s", body)
				}
				if _, err := sdkStream(t, e, p.client, p.model, f.headers[0], f.headers[1]); err == nil {
					t.Fatal("the SDK took a broken stream for a complete answer")
				}
			})
		}
	}
	// Gemini without alt=sse streams a JSON array: the error goes inside it.
	resp := post(t, e.louter+"/v1beta/models/m-gem:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		mock.ScenarioHeader, "text", mock.TruncateHeader, "2")
	body, _ := io.ReadAll(resp.Body)
	if !gjson.ValidBytes(body) || !strings.Contains(gjson.GetBytes(body, "@reverse.0.error.message").Str, "ended before") {
		t.Fatalf("JSON-array stream closed early:\n%s", body)
	}
}

package caddymodule_test

// Integration tests of the bedrock_converse backend through a real Caddy,
// against a loopback Converse server that checks each request's SigV4
// signature with the mock's verifier (which signs again with the SDK's
// signer) and answers with scripted Converse JSON or ConverseStream
// event-stream frames written with the SDK's encoder.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule/mock"
	"github.com/louter/louter/internal/testcaddy"
)

// converseServer is a scripted Bedrock Converse endpoint.
type converseServer struct {
	mu    sync.Mutex
	calls []converseCall
}

type converseCall struct {
	path string
	body gjson.Result
}

func (s *converseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	creds := aws.Credentials{AccessKeyID: bedrockTestAKID, SecretAccessKey: bedrockTestSecret, SessionToken: bedrockTestSession}
	if err := mock.VerifySigV4(r, body, creds, "bedrock", "us-west-2", time.Now()); err != nil {
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": err.Error()})
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, converseCall{r.URL.EscapedPath(), gjson.ParseBytes(body)})
	s.mu.Unlock()
	if r.Header.Get("X-Mock-Scenario") == "error_429" {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message":"Too many requests, please wait before trying again."}`))
		return
	}
	// A tool result in the last message gets a text answer quoting it;
	// anything else a call of get_weather.
	var result string
	for _, b := range gjson.GetBytes(body, "messages.@reverse.0.content").Array() {
		if tr := b.Get("toolResult"); tr.Exists() {
			result = tr.Get("content.0.text").Str
		}
	}
	stream := strings.HasSuffix(r.URL.Path, "/converse-stream")
	if !stream {
		content := `[{"text":"Checking."},{"toolUse":{"toolUseId":"tooluse_cv1","name":"get_weather","input":{"city":"Paris"}}}]`
		stop := "tool_use"
		if result != "" {
			content, stop = `[{"text":"The tool said: `+result+`"}]`, "end_turn"
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"output":{"message":{"role":"assistant","content":` + content + `}},"stopReason":"` + stop + `","usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},"metrics":{"latencyMs":3}}`))
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	send := func(typ, payload string, exception bool) {
		var h eventstream.Headers
		if exception {
			h.Set(":message-type", eventstream.StringValue("exception"))
			h.Set(":exception-type", eventstream.StringValue(typ))
		} else {
			h.Set(":message-type", eventstream.StringValue("event"))
			h.Set(":event-type", eventstream.StringValue(typ))
		}
		h.Set(":content-type", eventstream.StringValue("application/json"))
		var buf bytes.Buffer
		_ = enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(payload)})
		// Each frame in two writes, split inside its prelude.
		_, _ = w.Write(buf.Bytes()[:5])
		w.(http.Flusher).Flush()
		_, _ = w.Write(buf.Bytes()[5:])
		w.(http.Flusher).Flush()
	}
	send("messageStart", `{"role":"assistant","p":"abc"}`, false)
	if result != "" {
		send("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"The tool said: "}}`, false)
		send("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":`+jsonString(result)+`}}`, false)
		send("contentBlockStop", `{"contentBlockIndex":0}`, false)
		send("messageStop", `{"stopReason":"end_turn"}`, false)
	} else {
		send("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Checking."}}`, false)
		if r.Header.Get("X-Mock-Scenario") == "stream_error" {
			send("throttlingException", `{"message":"Too many tokens, please wait before trying again."}`, true)
			return
		}
		send("contentBlockStop", `{"contentBlockIndex":0}`, false)
		send("contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_cv1","name":"get_weather"}}}`, false)
		send("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}`, false)
		send("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`, false)
		send("contentBlockStop", `{"contentBlockIndex":1}`, false)
		send("messageStop", `{"stopReason":"tool_use"}`, false)
	}
	send("metadata", `{"usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},"metrics":{"latencyMs":3}}`, false)
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func (s *converseServer) take() []converseCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

var converseCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {` +
	bedrockBackend("converse", "bedrock_converse", "{CONVERSE}", sigv4Auth("us-west-2", "{env.LOUTER_TEST_AWS_SECRET}")) +
	backupBackend("{PORT1}") + `
		model llama-* converse us.meta.llama4-maverick-17b-instruct-v1:0 {
			fallback backup claude-backup
		}
	}
}
` + backupMock(":{PORT1}")

func startConverseEnv(t *testing.T) (*env, *converseServer) {
	t.Helper()
	setBedrockEnv(t)
	cs := &converseServer{}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	return startMockEnv(t, testcaddy.Options{}, strings.ReplaceAll(converseCaddyfile, "{CONVERSE}", strings.TrimPrefix(srv.URL, "http://")), 1), cs
}

// TestIntegrationBedrockConverse drives the Converse backend with each
// client protocol's SDK, streaming and not: a tool call comes back, with
// usage.
func TestIntegrationBedrockConverse(t *testing.T) {
	e, cs := startConverseEnv(t)
	for _, c := range bedrockClientCalls {
		for _, st := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "/json", true: "/stream"}[st], func(t *testing.T) {
				cs.take()
				r, err := c.call(e, "llama-4", "tool", st)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.toolNames) != 1 || r.toolNames[0] != "get_weather" || gjson.Get(r.toolArgs[0], "city").Str != "Paris" || r.stop != "tool_use" || r.in != 12 || r.out != 7 {
					t.Errorf("result %+v", r)
				}
				calls := cs.take()
				op := map[bool]string{false: "converse", true: "converse-stream"}[st]
				if len(calls) != 1 || calls[0].path != "/model/us.meta.llama4-maverick-17b-instruct-v1%3A0/"+op {
					t.Fatalf("calls %+v", calls)
				}
				b := calls[0].body
				if b.Get("messages.0.role").Str != "user" || !strings.Contains(b.Get("messages.0.content.0.text").Str, "Paris") ||
					b.Get("toolConfig.tools.0.toolSpec.name").Str != "get_weather" || b.Get("model").Exists() {
					t.Errorf("body %s", b.Raw)
				}
			})
		}
	}
}

// TestIntegrationBedrockConverseToolRoundTrip sends the tool result back
// from an Anthropic client, and checks the Converse body carries the call
// and its result; then an exception mid-stream and a throttled backend.
func TestIntegrationBedrockConverseToolRoundTrip(t *testing.T) {
	e, cs := startConverseEnv(t)
	for _, st := range []bool{false, true} {
		cs.take()
		r, err := callAnthropic(e, "llama-4", "", st,
			anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?")),
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("tooluse_cv1", map[string]any{"city": "Paris"}, "get_weather")),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("tooluse_cv1", "sunny, 21C", false)),
		)
		if err != nil || r.text != "The tool said: sunny, 21C" || r.stop != "end_turn" {
			t.Fatalf("stream %v: %v %+v", st, err, r)
		}
		msgs := cs.take()[0].body.Get("messages").Array()
		if len(msgs) != 3 || msgs[1].Get("content.0.toolUse.toolUseId").Str != "tooluse_cv1" || msgs[1].Get("content.0.toolUse.input.city").Str != "Paris" ||
			msgs[2].Get("content.0.toolResult.toolUseId").Str != "tooluse_cv1" || msgs[2].Get("content.0.toolResult.content.0.text").Str != "sunny, 21C" {
			t.Errorf("messages %v", msgs)
		}
	}
	resp := post(t, e.louter+"/v1/messages", `{"model":"llama-4","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Scenario", "stream_error")
	raw, _ := io.ReadAll(resp.Body)
	if s := string(raw); !strings.Contains(s, "Checking.") || !strings.Contains(s, "event: error") || !strings.Contains(s, "rate_limit_error") || !strings.Contains(s, "Too many tokens") {
		t.Errorf("anthropic client stream after a throttlingException:\n%s", raw)
	}
	r, err := callOpenAI(e, "llama-4", "error_429", false)
	if err != nil || !strings.Contains(r.text, "backup-mock") {
		t.Errorf("fallback after a throttled Converse: %v %+v", err, r)
	}
}

package caddymodule

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// These tests drive ServeHTTP with the real Anthropic and OpenAI Chat codecs
// and captured provider streams, through a fake upstream that writes like
// reverse_proxy.

// realLouter routes "to-openai*" to an OpenAI Chat backend (renamed to
// gpt-4o) and "to-anthropic*" to an Anthropic backend (renamed to
// claude-sonnet-4-5); "claude*" and "gpt*" go to the backend of their own
// protocol, unrenamed (passthrough).
func realLouter(t testing.TB, upstream upstreamFunc) *Louter {
	t.Helper()
	l := &Louter{
		Backends: map[string]*Backend{
			"oai":  {Protocol: translate.ProtocolOpenAIChat, APIKey: "oai-key"},
			"anth": {Protocol: translate.ProtocolAnthropic, APIKey: "anth-key"},
		},
		Models: []ModelRoute{
			{Match: "to-openai*", Backend: "oai", Rename: "gpt-4o"},
			{Match: "to-anthropic*", Backend: "anth", Rename: "claude-sonnet-4-5"},
			{Match: "claude*", Backend: "anth"},
			{Match: "gpt*", Backend: "oai"},
		},
	}
	return newLouter(t, l, map[string]caddyhttp.MiddlewareHandler{"oai": upstream, "anth": upstream})
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func codec(t *testing.T, p translate.Protocol) translate.Codec {
	t.Helper()
	c, ok := translate.Lookup(p)
	if !ok {
		t.Fatalf("codec %s not registered", p)
	}
	return c
}

// decodeStream folds an SSE body of protocol p into a response, the way a
// client of that protocol would read it.
func decodeStream(t *testing.T, p translate.Protocol, body string) (*translate.Response, *translate.Error) {
	t.Helper()
	var acc translate.Accumulator
	tc := stream.NewTranscoder(&stream.SSEParser{}, codec(t, p).NewStreamDecoder(), discardEncoder{}, &stream.SSEOutput{})
	tc.Observe = acc.Add
	tc.Write([]byte(body))
	tc.Close()
	return acc.Result()
}

const (
	anthropicStreamRequest = `{"model":"to-openai-1","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"weather?"}]}`
	openaiStreamRequest    = `{"model":"to-anthropic-1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"weather?"}]}`
)

func TestRealStreamTranslation(t *testing.T) {
	tests := []struct {
		name            string
		path, body      string
		fixture         string
		client, backend translate.Protocol
		clientModel     string
		backendModel    string
		backendPath     string
		backendKey      [2]string
	}{
		{"anthropic client, openai backend", "/anthropic/v1/messages?beta=true", anthropicStreamRequest, "captured/openai_chat_parallel_tools.sse",
			translate.ProtocolAnthropic, translate.ProtocolOpenAIChat, "to-openai-1", "gpt-4o", "/v1/chat/completions", [2]string{"Authorization", "Bearer oai-key"}},
		{"openai client, anthropic backend", "/v1/chat/completions", openaiStreamRequest, "captured/anthropic_tool_use.sse",
			translate.ProtocolOpenAIChat, translate.ProtocolAnthropic, "to-anthropic-1", "claude-sonnet-4-5", "/v1/messages", [2]string{"X-Api-Key", "anth-key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstreamBody := readFixture(t, tt.fixture)
			var got sent
			rec := newFlushRecorder()
			l := realLouter(t, recordingUpstream(&got, proxyLike(200, sseHeader(), splitEvery(upstreamBody, 7)...)))
			r := newRequest("POST", tt.path, tt.body)
			r.Header.Set("X-Api-Key", "client-key")
			r.Header.Set("Authorization", "Bearer client-key")
			r.Header.Set("Anthropic-Version", "2023-06-01")
			if err, p := serve(l, rec, r, nil); err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}

			// The backend got a request of its own protocol.
			if got.path != tt.backendPath || got.query != "" || got.header.Get(tt.backendKey[0]) != tt.backendKey[1] ||
				strings.Contains(strings.Join(append(got.header.Values("Authorization"), got.header.Values("X-Api-Key")...), ","), "client-key") {
				t.Errorf("backend request: %s?%s %v", got.path, got.query, got.header)
			}
			if _, err := codec(t, tt.backend).DecodeRequest([]byte(got.body)); err != nil || gjson.Get(got.body, "model").String() != tt.backendModel {
				t.Errorf("backend body %s: %v", got.body, err)
			}

			// The client got the same answer, in its own protocol, with its
			// own model name, flushed as it came.
			want, werr := decodeStream(t, tt.backend, upstreamBody)
			have, herr := decodeStream(t, tt.client, rec.Body.String())
			if werr != nil || herr != nil {
				t.Fatalf("stream errors: upstream %v, client %v\n%s", werr, herr, rec.Body)
			}
			if have.Model != tt.clientModel {
				t.Errorf("client saw model %q, want %q", have.Model, tt.clientModel)
			}
			if !reflect.DeepEqual(have.Parts, want.Parts) || have.StopReason != want.StopReason || have.Usage.OutputTokens != want.Usage.OutputTokens {
				t.Errorf("client answer differs:\n got %+v\nwant %+v", have, want)
			}
			if rec.Header().Get("Content-Type") != "text/event-stream" || len(rec.flushedAt) < 10 {
				t.Errorf("headers %v, %d flushes", rec.Header(), len(rec.flushedAt))
			}
		})
	}
}

func TestRealStreamCutMidStream(t *testing.T) {
	tests := []struct {
		name, path, body, fixture string
		wantEnd                   func(body string) bool
	}{
		{"anthropic client, openai backend", "/v1/messages", anthropicStreamRequest, "captured/openai_chat_parallel_tools.sse", func(b string) bool {
			i := strings.LastIndex(b, "event: error\ndata: ")
			return i >= 0 && strings.HasSuffix(b, "\n\n") && gjson.Get(b[i+len("event: error\ndata: "):], "error.type").String() == "api_error"
		}},
		{"openai client, anthropic backend", "/v1/chat/completions", openaiStreamRequest, "captured/anthropic_tool_use.sse", func(b string) bool {
			return strings.Contains(b, "data: {\"error\"") && strings.Contains(b, "upstream connection failed mid-stream")
		}},
		{"anthropic passthrough", "/v1/messages", strings.Replace(anthropicStreamRequest, "to-openai-1", "claude-x", 1), "captured/anthropic_tool_use.sse", func(b string) bool {
			return strings.HasSuffix(b, "\n\n") && strings.Contains(b, "event: error\ndata: {\"type\":\"error\"")
		}},
		{"openai passthrough", "/v1/chat/completions", strings.Replace(openaiStreamRequest, "to-anthropic-1", "gpt-x", 1), "captured/openai_chat_parallel_tools.sse", func(b string) bool {
			return strings.Contains(b, "data: {\"error\"")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := readFixture(t, tt.fixture)
			half := upstream[:len(upstream)/2]
			rec := newFlushRecorder()
			l := realLouter(t, abortingUpstream(200, sseHeader(), splitEvery(half, 11)...))
			if err, p := serve(l, rec, newRequest("POST", tt.path, tt.body), nil); err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}
			if !tt.wantEnd(rec.Body.String()) {
				t.Errorf("the client stream does not end with its protocol's error:\n%s", rec.Body)
			}
			_, e := decodeStream(t, translate.Protocol(map[bool]string{true: "anthropic", false: "openai_chat"}[strings.HasSuffix(tt.path, "messages")]), rec.Body.String())
			if e == nil {
				t.Error("a client reading the stream takes the cut answer for a complete one")
			}
		})
	}
}

func TestRealPassthroughStreamEndedBeforeTheCut(t *testing.T) {
	full := readFixture(t, "captured/anthropic_tool_use.sse")
	rec := newFlushRecorder()
	l := realLouter(t, abortingUpstream(200, sseHeader(), splitEvery(full, 100)...))
	serve(l, rec, newRequest("POST", "/v1/messages", `{"model":"claude-x","max_tokens":5,"stream":true,"messages":[]}`), nil)
	if rec.Body.String() != full {
		t.Errorf("a complete passthrough stream was changed:\n%s", rec.Body)
	}
}

func TestRealErrorTranslation(t *testing.T) {
	tests := []struct {
		name, path, body string
		status           int
		upstreamBody     string
		check            func(body string) bool
	}{
		{"openai 429 to an anthropic client", "/v1/messages", anthropicStreamRequest, 429,
			`{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			func(b string) bool {
				return gjson.Get(b, "type").String() == "error" && gjson.Get(b, "error.type").String() == "rate_limit_error" &&
					gjson.Get(b, "error.message").String() == "Rate limit reached for gpt-4o"
			}},
		{"anthropic 529 to an openai client", "/v1/chat/completions", openaiStreamRequest, 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			func(b string) bool {
				return gjson.Get(b, "error.message").String() == "Overloaded" && gjson.Get(b, "error.type").String() == "server_error"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newFlushRecorder()
			hdr := jsonHeader(tt.upstreamBody)
			hdr.Set("Retry-After", "12")
			l := realLouter(t, proxyLike(tt.status, hdr, tt.upstreamBody))
			serve(l, rec, newRequest("POST", tt.path, tt.body), nil)
			if rec.Code != tt.status || rec.Header().Get("Retry-After") != "12" || !tt.check(rec.Body.String()) ||
				rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("got %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}

func TestRealJSONTranslation(t *testing.T) {
	openaiResp := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`
	anthropicResp := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi there"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":3}}`
	tests := []struct {
		name, path, body, upstream string
		check                      func(b string) bool
	}{
		{"anthropic client, openai backend", "/v1/messages", `{"model":"to-openai-1","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, openaiResp,
			func(b string) bool {
				return gjson.Get(b, "type").String() == "message" && gjson.Get(b, "model").String() == "to-openai-1" &&
					gjson.Get(b, "content.0.text").String() == "Hi there" && gjson.Get(b, "stop_reason").String() == "end_turn" &&
					gjson.Get(b, "usage.output_tokens").Int() == 3
			}},
		{"openai client, anthropic backend", "/v1/chat/completions", `{"model":"to-anthropic-1","messages":[{"role":"user","content":"hi"}]}`, anthropicResp,
			func(b string) bool {
				return gjson.Get(b, "object").String() == "chat.completion" && gjson.Get(b, "model").String() == "to-anthropic-1" &&
					gjson.Get(b, "choices.0.message.content").String() == "Hi there" && gjson.Get(b, "choices.0.finish_reason").String() == "stop" &&
					gjson.Get(b, "usage.prompt_tokens").Int() == 9
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newFlushRecorder()
			l := realLouter(t, proxyLike(200, jsonHeader(tt.upstream), splitEvery(tt.upstream, 16)...))
			serve(l, rec, newRequest("POST", tt.path, tt.body), nil)
			if rec.Code != 200 || !tt.check(rec.Body.String()) || rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("got %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}

func TestRealClientErrorShapes(t *testing.T) {
	l := realLouter(t, func(w http.ResponseWriter, r *http.Request) error { t.Error("reached the upstream"); return nil })
	for _, tt := range []struct {
		path, body string
		status     int
		check      func(b string) bool
	}{
		{"/v1/messages", `{"model":"nope","max_tokens":5,"messages":[]}`, 404, func(b string) bool {
			return gjson.Get(b, "type").String() == "error" && gjson.Get(b, "error.type").String() == "not_found_error"
		}},
		{"/v1/chat/completions", `{"model":"nope","messages":[]}`, 404, func(b string) bool {
			return gjson.Get(b, "error.code").String() == "model_not_found" && strings.Contains(gjson.Get(b, "error.message").String(), `"nope"`)
		}},
		{"/v1/messages", `{"model":"to-openai-1","max_tokens":5,"messages":"hi"}`, 400, func(b string) bool {
			return gjson.Get(b, "error.type").String() == "invalid_request_error"
		}},
	} {
		rec := newFlushRecorder()
		serve(l, rec, newRequest("POST", tt.path, tt.body), nil)
		if rec.Code != tt.status || !tt.check(rec.Body.String()) {
			t.Errorf("%s %s: got %d %s", tt.path, tt.body, rec.Code, rec.Body)
		}
	}
}

// BenchmarkServeHTTPStream measures a whole translated streaming exchange —
// request translation, rewrite, and the captured OpenAI stream translated
// for an Anthropic client in reverse_proxy's 32 KiB writes — per upstream
// byte.
func BenchmarkServeHTTPStream(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "captured", "openai_chat_parallel_tools.sse"))
	if err != nil {
		b.Fatal(err)
	}
	l := realLouter(b, proxyLike(200, sseHeader(), splitEvery(string(raw), 32<<10)...))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := l.ServeHTTP(rec, newRequest("POST", "/v1/messages", anthropicStreamRequest), &nextRecorder{}); err != nil || rec.Code != 200 {
			b.Fatal(err, rec.Code)
		}
	}
}

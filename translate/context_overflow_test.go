package translate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// overflowFrames collects a client stream's frames.
type overflowFrames struct{ names, data []string }

func (f *overflowFrames) WriteFrame(name string, data []byte) {
	f.names = append(f.names, name)
	f.data = append(f.data, string(data))
}

// claudeCodeOverflow is the pattern Claude Code reads the figures with
// (found in its bundled cli.js).
var claudeCodeOverflow = regexp.MustCompile(`(?i)prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)`)

// TestContextOverflowFixtures decodes every server's published overflow
// error (testdata/context_overflow) with its protocol's codec, as a
// response body or inside a stream, and checks what each client protocol
// gets: the kind, the figures, and the client's own wording.
func TestContextOverflowFixtures(t *testing.T) {
	cases := []struct {
		file    string
		backend Protocol
		n, m    int
	}{
		{"anthropic.json", ProtocolAnthropic, 208656, 200000},
		{"anthropic_stream.sse", ProtocolAnthropic, 203284, 200000},
		{"openai_chat.json", ProtocolOpenAIChat, 8227, 8192},
		{"openai_chat_stream.sse", ProtocolOpenAIChat, 204308, 128000},
		{"openai_responses.json", ProtocolOpenAIResponses, 0, 0},
		{"openai_responses_failed.sse", ProtocolOpenAIResponses, 0, 0},
		{"gemini.json", ProtocolGemini, 1200293, 1048576},
		{"gemini_stream.sse", ProtocolGemini, 132478, 131072},
		{"llamacpp.json", ProtocolOpenAIChat, 4476, 4096},
		{"llamacpp_stream.sse", ProtocolOpenAIChat, 33012, 32768},
		{"vllm.json", ProtocolOpenAIChat, 122946, 16384},
		{"vllm_stream.sse", ProtocolOpenAIChat, 6616, 6048},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "context_overflow", tc.file)
			codec, _ := Lookup(tc.backend)
			var e *Error
			if strings.HasSuffix(tc.file, ".sse") {
				dec := codec.NewStreamDecoder()
				var evs []Event
				for _, ev := range readSSE(t, path) {
					evs = dec.Decode(evs, ev.name, ev.data)
				}
				evs = dec.End(evs)
				for i := range evs {
					if evs[i].Type == EventError {
						e = evs[i].Err
					}
				}
				if e == nil {
					t.Fatalf("no error event in %v", evString(evs))
				}
			} else {
				body, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				e = codec.DecodeError(400, body)
			}
			if e.Kind != ErrContextOverflow || e.PromptTokens != tc.n || e.ContextLimit != tc.m {
				t.Fatalf("decoded %+v, want overflow %d > %d", e, tc.n, tc.m)
			}
			if StatusForKind(e.Kind) != 400 || e.Status != 400 {
				t.Errorf("status %d", e.Status)
			}
			overflowCheckClients(t, e)
		})
	}
}

// overflowCheckClients encodes e for every client protocol, as a response
// and as a stream's error, and checks each carries the client's wording.
func overflowCheckClients(t *testing.T, e *Error) {
	t.Helper()
	for _, p := range []Protocol{ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses, ProtocolGemini} {
		codec, _ := Lookup(p)
		bodies := map[string]string{"response": string(codec.EncodeError(e))}
		var f overflowFrames
		codec.NewStreamEncoder(&Request{Model: "m", Stream: true}).Encode(&f, &Event{Type: EventError, Err: e})
		if len(f.data) == 0 {
			t.Fatalf("%s: the stream encoder wrote nothing", p)
		}
		bodies["stream"] = f.data[len(f.data)-1]
		if p == ProtocolOpenAIChat {
			bodies["stream"] = f.data[0] // then [DONE]
		}
		if p == ProtocolOpenAIResponses {
			// The error event comes before response.failed.
			bodies["stream error event"] = f.data[len(f.data)-2]
			if f.names[len(f.names)-1] != "response.failed" {
				t.Errorf("responses stream ends with %q", f.names[len(f.names)-1])
			}
		}
		for where, body := range bodies {
			root := gjson.Parse(body)
			switch p {
			case ProtocolAnthropic:
				msg := root.Get("error.message").Str
				if root.Get("error.type").Str != "invalid_request_error" || !strings.HasPrefix(msg, "prompt is too long: ") {
					t.Errorf("%s %s: %s", p, where, body)
				}
				sub := claudeCodeOverflow.FindStringSubmatch(msg)
				if sub == nil && (e.PromptTokens > 0 || e.ContextLimit > 0) {
					t.Errorf("%s %s: Claude Code cannot read the figures of %q", p, where, msg)
				} else if sub != nil && e.PromptTokens > e.ContextLimit && e.ContextLimit > 0 && (sub[1] != itoa(e.PromptTokens) || sub[2] != itoa(e.ContextLimit)) {
					t.Errorf("%s %s: figures %v, want %d > %d", p, where, sub[1:], e.PromptTokens, e.ContextLimit)
				}
			case ProtocolOpenAIChat:
				if root.Get("error.code").Str != "context_length_exceeded" || root.Get("error.type").Str != "invalid_request_error" || root.Get("error.param").Str != "messages" {
					t.Errorf("%s %s: %s", p, where, body)
				}
			case ProtocolOpenAIResponses:
				code := root.Get("error.code").Str
				if where == "stream" {
					code = root.Get("response.error.code").Str
				}
				if code != "context_length_exceeded" {
					t.Errorf("%s %s: %s", p, where, body)
				}
			case ProtocolGemini:
				msg := root.Get("error.message").Str
				if root.Get("error.code").Int() != 400 || root.Get("error.status").Str != "INVALID_ARGUMENT" {
					t.Errorf("%s %s: %s", p, where, body)
				}
				if e.PromptTokens > 0 && e.ContextLimit > 0 && msg != "The input token count ("+itoa(e.PromptTokens)+") exceeds the maximum number of tokens allowed ("+itoa(e.ContextLimit)+")." {
					t.Errorf("%s %s: message %q", p, where, msg)
				}
			}
		}
	}
}

func itoa(n int) string { return string(appendJSONInt(nil, int64(n))) }

// TestContextOverflowNotOther checks that errors that merely resemble an
// overflow stay what they are.
func TestContextOverflowNotOther(t *testing.T) {
	cases := []struct {
		name    string
		backend Protocol
		status  int
		body    string
	}{
		{"5xx mentioning the context", ProtocolOpenAIChat, 500, `{"error":{"message":"maximum context length is 4096 tokens","type":"server_error"}}`},
		{"max_tokens too large", ProtocolAnthropic, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 300000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4"}}`},
		{"rate limit", ProtocolGemini, 429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`},
		{"body too large", ProtocolAnthropic, 413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			codec, _ := Lookup(tc.backend)
			if e := codec.DecodeError(tc.status, []byte(tc.body)); e.Kind == ErrContextOverflow {
				t.Fatalf("taken for an overflow: %+v", e)
			}
		})
	}
}

// TestAnthOverflowMessage checks the Anthropic wording with figures missing.
func TestAnthOverflowMessage(t *testing.T) {
	cases := []struct {
		upstream string
		n, m     int
		want     string
	}{
		{"x", 10, 5, "prompt is too long: 10 tokens > 5 maximum"},
		{"x", 0, 4096, "prompt is too long: 4097 tokens > 4096 maximum"},
		{"x", 3500, 4096, "prompt is too long: 4097 tokens > 4096 maximum"}, // vLLM: input fits, max_tokens does not
		{"x", 9000, 0, "prompt is too long: 9000 tokens > 8999 maximum"},
		{"Your input exceeds the context window of this model.", 0, 0, "prompt is too long: Your input exceeds the context window of this model."},
		{"Prompt is too long", 0, 0, "Prompt is too long"},
	}
	for _, tc := range cases {
		if got := anthOverflowMessage(tc.upstream, tc.n, tc.m); got != tc.want {
			t.Errorf("anthOverflowMessage(%q, %d, %d) = %q, want %q", tc.upstream, tc.n, tc.m, got, tc.want)
		}
	}
}

package stream_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// passWatch runs a whole body through a PassWatcher in writes of size n
// (all at once when n <= 0) and returns what the client receives, how much
// of it was forwarded from the body, and the error the stream ended with.
func passWatch(p translate.Protocol, jsonArray bool, body []byte, n int) ([]byte, int, *translate.Error) {
	w := stream.NewPassWatcher(p, jsonArray)
	var out []byte
	if n <= 0 {
		n = len(body) + 1
	}
	for rest := body; len(rest) > 0; {
		k := min(n, len(rest))
		out = append(out, w.Write(rest[:k])...)
		rest = rest[k:]
	}
	tail, err := w.Close()
	out = append(out, tail...)
	forwarded := len(out)
	if err != nil {
		codec, _ := translate.Lookup(p)
		out = append(out, w.End(codec.NewStreamEncoder(&translate.Request{Model: "m", Stream: true}), err)...)
	}
	return out, forwarded, err
}

// decodeAll decodes a client stream with the protocol's own decoder.
func decodeAll(t *testing.T, p translate.Protocol, jsonArray bool, body []byte) []translate.Event {
	t.Helper()
	codec, _ := translate.Lookup(p)
	dec := codec.NewStreamDecoder()
	var framer stream.Framer = &stream.SSEParser{}
	if jsonArray {
		framer = &stream.JSONArrayParser{}
	}
	var events []translate.Event
	fn := func(name string, data []byte) { events = dec.Decode(events, name, data) }
	if err := framer.Feed(body, fn); err != nil {
		t.Fatalf("the client stream does not frame: %v\n%s", err, body)
	}
	_ = framer.Close(fn)
	return dec.End(events)
}

func TestPassWatcher(t *testing.T) {
	tests := []struct {
		name      string
		proto     translate.Protocol
		file      string
		jsonArray bool
		body      string // used when file is empty
		wantErr   string // "" when the stream is complete
		keep      string // for a broken stream, the last bytes the client must still get
	}{
		{name: "anthropic complete", proto: translate.ProtocolAnthropic, file: "anthropic/stream_text_ping.sse"},
		{name: "anthropic backend error", proto: translate.ProtocolAnthropic, file: "anthropic/stream_error.sse"},
		{name: "anthropic cut", proto: translate.ProtocolAnthropic, file: "anthropic/stream_cut.sse", wantErr: "ended before", keep: `"The answer is"}}` + "\n\n"},
		{name: "anthropic malformed", proto: translate.ProtocolAnthropic, file: "anthropic/stream_malformed_event.sse", wantErr: "malformed", keep: `"Hello"}}` + "\n\n"},
		{name: "chat complete", proto: translate.ProtocolOpenAIChat, file: "openai_chat/parallel_tool_calls.sse"},
		{name: "chat finish without DONE", proto: translate.ProtocolOpenAIChat, body: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"},
		{name: "chat cut", proto: translate.ProtocolOpenAIChat, file: "openai_chat/cut_stream.sse", wantErr: "ended before"},
		{name: "chat malformed", proto: translate.ProtocolOpenAIChat, file: "openai_chat/malformed_chunk.sse", wantErr: "malformed", keep: `"Hello"},"logprobs":null,"finish_reason":null}]}` + "\n\n"},
		{name: "chat comments pass", proto: translate.ProtocolOpenAIChat, body: ": PROCESSING\n\ndata: {\"choices\":[]}\n\n: PROCESSING\n\ndata: [DONE]\n\n"},
		{name: "responses complete", proto: translate.ProtocolOpenAIResponses, file: "openai_responses/text.sse"},
		{name: "responses failed", proto: translate.ProtocolOpenAIResponses, file: "openai_responses/error_failed.sse"},
		{name: "responses cut", proto: translate.ProtocolOpenAIResponses, body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n", wantErr: "ended before", keep: `"delta":"hi"}` + "\n\n"},
		{name: "gemini complete", proto: translate.ProtocolGemini, file: "gemini/stream_text.sse"},
		{name: "gemini cut", proto: translate.ProtocolGemini, file: "gemini/stream_cut.sse", wantErr: "ended before", keep: `"responseId": "Y3V0"}` + "\n\n"},
		{name: "gemini not json", proto: translate.ProtocolGemini, body: "data: {\"candidates\":[]}\n\ndata: <html>\n\n", wantErr: "malformed", keep: "data: {\"candidates\":[]}\n\n"},
		{name: "gemini array complete", proto: translate.ProtocolGemini, file: "gemini/stream_array.json", jsonArray: true},
		{name: "gemini array cut", proto: translate.ProtocolGemini, jsonArray: true, body: "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n,{\"candidates\":[{\"content\":{\"parts\":[{\"te", wantErr: "ended before", keep: `"a"}]}}]}`},
		{name: "gemini array closed without finish", proto: translate.ProtocolGemini, jsonArray: true, body: "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n]", wantErr: "ended before", keep: `"a"}]}}]}`},
		{name: "gemini array empty", proto: translate.ProtocolGemini, jsonArray: true, body: "[", wantErr: "ended before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			if tt.file != "" {
				var err error
				if body, err = os.ReadFile(filepath.Join("..", "testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			whole, n, err := passWatch(tt.proto, tt.jsonArray, body, 0)
			// Any write boundaries give the same client stream.
			for _, k := range []int{1, 7, 64} {
				if got, m, _ := passWatch(tt.proto, tt.jsonArray, body, k); m != n || !bytes.Equal(got[:m], whole[:n]) {
					t.Fatalf("writes of %d bytes give\n%s\nwhole writes give\n%s", k, got, whole)
				}
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("complete stream reported %q", err.Message)
				}
				if !bytes.Equal(whole, body) {
					t.Fatalf("complete stream changed:\n%s", whole)
				}
				return
			}
			if err == nil || !strings.Contains(err.Message, tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			// The client gets a prefix of the body that ends at an event
			// boundary, then one error event it decodes as an error.
			if !bytes.Equal(whole[:n], body[:n]) {
				t.Fatalf("forwarded bytes are not the body's first %d:\n%s", n, whole[:n])
			}
			if tt.keep != "" && !bytes.HasSuffix(whole[:n], []byte(tt.keep)) {
				t.Fatalf("forwarded part ends with %q, want %q", whole[max(0, n-40):n], tt.keep)
			}
			events := decodeAll(t, tt.proto, tt.jsonArray, whole)
			last := events[len(events)-1]
			if last.Type != translate.EventError || !strings.Contains(last.Err.Message, tt.wantErr) {
				t.Fatalf("the client stream ends with %v %+v, want the error; stream:\n%s", last.Type, last.Err, whole)
			}
			for _, ev := range events[:len(events)-1] {
				if ev.Type == translate.EventError {
					t.Fatalf("an error before the end: %+v", ev.Err)
				}
			}
		})
	}
}

func TestPassWatcherUsage(t *testing.T) {
	tests := []struct {
		proto      translate.Protocol
		file       string
		jsonArray  bool
		in, output int
	}{
		{translate.ProtocolAnthropic, "anthropic/stream_text_ping.sse", false, 11, 6},
		{translate.ProtocolOpenAIChat, "openai_chat/parallel_tool_calls.sse", false, 149, 60},
		{translate.ProtocolOpenAIResponses, "openai_responses/text.sse", false, 37, 11},
		{translate.ProtocolGemini, "gemini/stream_array.json", true, 7, 16},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			w := stream.NewPassWatcher(tt.proto, tt.jsonArray)
			w.Write(body)
			if _, e := w.Close(); e != nil {
				t.Fatal(e.Message)
			}
			u, ok := w.Usage()
			if !ok || u.InputTokens != tt.in || u.OutputTokens != tt.output {
				t.Fatalf("usage = %+v (%v), want %d in, %d out", u, ok, tt.in, tt.output)
			}
		})
	}
}

// TestPassWatcherBoundary: between writes the client stream is at an event
// boundary, and Done tells when no keep-alive may follow.
func TestPassWatcherBoundary(t *testing.T) {
	w := stream.NewPassWatcher(translate.ProtocolOpenAIChat, false)
	if got := w.Write([]byte("data: {\"choices\":[]}\n\ndata: {\"cho")); string(got) != "data: {\"choices\":[]}\n\n" {
		t.Fatalf("forwarded %q", got)
	}
	if got := w.Write([]byte("ices\":[]}\n")); len(got) != 0 {
		t.Fatalf("forwarded half an event: %q", got)
	}
	if got := w.Write([]byte("\ndata: [DONE]\n\n")); string(got) != "data: {\"choices\":[]}\n\ndata: [DONE]\n\n" {
		t.Fatalf("forwarded %q", got)
	}
	if !w.Done() {
		t.Fatal("not done after [DONE]")
	}
}

// TestPassWatcherResponsesResume: the error event that ends a cut
// Responses stream carries on its sequence numbers and its response id,
// as clients that check them (openai-go's users, Codex) expect.
func TestPassWatcherResponsesResume(t *testing.T) {
	body := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_abc\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"hi\"}\n\n"
	whole, n, err := passWatch(translate.ProtocolOpenAIResponses, false, []byte(body), 0)
	if err == nil || n != len(body) {
		t.Fatalf("error %v, %d bytes forwarded", err, n)
	}
	var seqs []int64
	var ids []string
	fn := func(name string, data []byte) {
		seqs = append(seqs, gjson.GetBytes(data, "sequence_number").Int())
		if id := gjson.GetBytes(data, "response.id"); id.Exists() {
			ids = append(ids, id.Str)
		}
	}
	var p stream.SSEParser
	_ = p.Feed(whole[n:], fn)
	if len(seqs) != 2 || seqs[0] != 2 || seqs[1] != 3 {
		t.Fatalf("the tail's sequence numbers are %v, want [2 3]:\n%s", seqs, whole[n:])
	}
	if len(ids) != 1 || ids[0] != "resp_abc" {
		t.Fatalf("response.failed carries id %v, want resp_abc", ids)
	}
}

// TestPassWatcherErrored: a stream that ends with the backend's own error
// is complete (passed on as it is) but reported as errored; a finished
// stream is not.
func TestPassWatcherErrored(t *testing.T) {
	tests := []struct {
		proto translate.Protocol
		body  string
		want  bool
	}{
		{translate.ProtocolAnthropic, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"x\"}}\n\n", true},
		{translate.ProtocolAnthropic, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", false},
		{translate.ProtocolOpenAIChat, "data: {\"error\":{\"message\":\"x\"}}\n\n", true},
		{translate.ProtocolOpenAIChat, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", false},
		{translate.ProtocolOpenAIResponses, "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\"}}\n\n", true},
		{translate.ProtocolOpenAIResponses, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n", false},
		{translate.ProtocolGemini, "data: {\"error\":{\"code\":500,\"message\":\"x\"}}\n\n", true},
	}
	for _, tt := range tests {
		w := stream.NewPassWatcher(tt.proto, false)
		w.Write([]byte(tt.body))
		if _, e := w.Close(); e != nil {
			t.Errorf("%s %q: closed with %s", tt.proto, tt.body, e.Message)
		}
		if got := w.Errored(); got != tt.want {
			t.Errorf("%s %q: Errored() = %v, want %v", tt.proto, tt.body, got, tt.want)
		}
	}
}

// TestPassWatcherHideUsageOnly: the usage chunk louter asked an OpenAI Chat
// backend for, for a client that did not, is left out of the client's
// stream at any write boundaries and line endings, with a comment before
// it or without the blank line after it; its usage is read all the same,
// and every other byte passes as it came.
func TestPassWatcherHideUsageOnly(t *testing.T) {
	const (
		content = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}],\"usage\":null}\n\n"
		finish  = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
		usage   = "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n"
		done    = "data: [DONE]\n\n"
		// Azure's first chunk: no choices, no usage; it is content filter
		// results, and passes.
		azure = "data: {\"id\":\"\",\"choices\":[],\"prompt_filter_results\":[]}\n\n"
	)
	tests := []struct {
		name, body, want string
	}{
		{"before DONE", content + finish + usage + done, content + finish + done},
		{"comment before it", content + finish + ": keep-alive\n\n" + usage + done, content + finish + ": keep-alive\n\n" + done},
		{"CRLF", strings.ReplaceAll(content+finish+usage+done, "\n", "\r\n"), strings.ReplaceAll(content+finish+done, "\n", "\r\n")},
		{"last, without its blank line", content + finish + strings.TrimSuffix(usage, "\n"), content + finish},
		{"last, without DONE", content + finish + usage, content + finish},
		{"Azure's filter chunk passes", azure + content + finish + usage + done, azure + content + finish + done},
	}
	for _, tt := range tests {
		for _, n := range []int{0, 1, 7, 64} {
			w := stream.NewPassWatcher(translate.ProtocolOpenAIChat, false)
			w.HideUsageOnly()
			var out []byte
			body := []byte(tt.body)
			k := n
			if k <= 0 {
				k = len(body)
			}
			for rest := body; len(rest) > 0; rest = rest[min(k, len(rest)):] {
				out = append(out, w.Write(rest[:min(k, len(rest))])...)
				w.Release()
			}
			tail, e := w.Close()
			if e != nil {
				t.Fatalf("%s, writes of %d: %s", tt.name, n, e.Message)
			}
			out = append(out, tail...)
			if string(out) != tt.want {
				t.Errorf("%s, writes of %d: the client got\n%q\nwant\n%q", tt.name, n, out, tt.want)
			}
			if u, ok := w.Usage(); !ok || u.InputTokens != 12 || u.OutputTokens != 3 {
				t.Errorf("%s, writes of %d: usage %+v (%v)", tt.name, n, u, ok)
			}
		}
	}
}

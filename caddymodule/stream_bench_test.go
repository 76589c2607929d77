package caddymodule

import (
	"fmt"
	"testing"
)

// benchOpenAIEvents is the upstream stream of e2e's BenchmarkProcessCPUPerStream:
// 200 text deltas and a tool call with streamed arguments, one event per
// element.
func benchOpenAIEvents() []string {
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	events := []string{chunk(`{"role":"assistant","content":""}`, "null")}
	for i := 0; i < 200; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"word%d "}`, i), "null"))
	}
	events = append(events, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}`, "null"))
	for _, frag := range []string{`{\"comm`, `and\":\"go`, ` test\"}`} {
		events = append(events, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+frag+`"}}]}`, "null"))
	}
	events = append(events, chunk(`{}`, `"tool_calls"`))
	return append(events, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":210,"total_tokens":220}}`+"\n\n", "data: [DONE]\n\n")
}

// BenchmarkServeHTTPStreamPerEvent is BenchmarkServeHTTPStream with the
// upstream writing and flushing one event at a time, as real servers do:
// the in-process share of e2e's BenchmarkProcessCPUPerStream.
func BenchmarkServeHTTPStreamPerEvent(b *testing.B) {
	events := benchOpenAIEvents()
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	l := realLouter(b, proxyLike(200, sseHeader(), events...))
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		rec := newFlushRecorder()
		if err := l.ServeHTTP(rec, newRequest("POST", "/v1/messages", anthropicStreamRequest), &nextRecorder{}); err != nil || rec.Code != 200 {
			b.Fatal(err, rec.Code)
		}
		if len(rec.flushedAt) < len(events) {
			b.Fatalf("%d flushes for %d events", len(rec.flushedAt), len(events))
		}
	}
}

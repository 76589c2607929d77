package translate

import (
	"bytes"
	"testing"
)

// swapChunk is an OpenAI Chat chunk with the given delta and finish reason.
func swapChunk(delta, finish string) string {
	return watchResumeHead + `"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}`
}

// swapNext are events judged after swapChunk(`{"content":"a"}`, "null"),
// the template: those the swap may take and those it must not (it then
// scans them in full).
var swapNext = []struct {
	event   string
	swapped bool
}{
	{swapChunk(`{"content":"bcd"}`, "null"), true},
	{swapChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}`, "null"), true},
	{swapChunk(`{}`, "null"), true},
	{swapChunk(`"x"`, "null"), true}, // any value: the scan never reads a delta
	// Broken deltas: the swap declines, the full scan finds them malformed.
	{swapChunk(`{"content":"a`+"\x01"+`"}`, "null"), false},
	{swapChunk(`{"content":"a"`, "null"), false},
	{swapChunk(`{"content":"a"}}`, "null"), false},
	{swapChunk(`{"content":"\q"}`, "null"), false},
	{swapChunk(`{"content":"a"},"x":{`, "null"), false},
	// A value that ends before the tail: more members follow it.
	{swapChunk(`{"content":"a"},"extra":1`, "null"), false},
	{swapChunk(`{"content":"a"},"finish_reason":"stop","x":`+`{}`, "null"), false},
	// What the tail says changes: a finish reason, an error, usage.
	{swapChunk(`{}`, `"stop"`), false},
	{swapChunk(`{}`, `""`), false},
	{watchResumeHead + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}],"error":{"message":"x"}}`, false},
	{watchResumeHead + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3}}`, false},
	{watchResumeHead + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null},{"index":1,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`, false},
	{watchResumeHead + `"choices":[]}`, false},
	// A head that differs by one byte.
	{`{"id":"d","object":"chat.completion.chunk","created":17,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}]}`, false},
	{`{"id":"c","object":"chat.completion.chunk","created":17,"model":"m","choices":[{"index":0,"delta" {},"logprobs":null,"finish_reason":null}]}`, false},
	{`{"id":"c","object":"chat.completion.chunk","created":17,"model":"m","choices":[{"index":0,"delta":,"logprobs":null,"finish_reason":null}]}`, false},
}

// swapUsageNull is a chunk of a stream asked for its usage
// (stream_options.include_usage): "usage":null until the last chunk.
func swapUsageNull(delta string) string {
	return watchResumeHead + `"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}],"usage":null}`
}

// TestStreamWatchSwapUsageNull: chunks with "usage":null are kept and
// swapped; the usage chunk after them is read.
func TestStreamWatchSwapUsageNull(t *testing.T) {
	first := swapUsageNull(`{"content":"a"}`)
	next := swapUsageNull(`{"content":"a longer text than the first"}`)
	w := &oaiStreamWatch{}
	w.Check("", []byte(first))
	var top watchTop
	if !w.resume.swap.swapped([]byte(next), &top) || top.usage.kind != jsonNull {
		t.Fatalf("not swapped, or usage kind %d", top.usage.kind)
	}
	last := watchResumeHead + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`
	watchVerdicts(t, []string{first, next, next, last})
	for _, ev := range []string{next, next, last} {
		if w.Check("", []byte(ev)) != WatchContinue {
			t.Fatalf("%s: not continued", ev)
		}
	}
	if u, ok := w.Usage(); !ok || u.InputTokens != 3 || u.OutputTokens != 2 {
		t.Fatalf("usage %+v %v, want 3 and 2", u, ok)
	}
}

// TestStreamWatchSwap holds the swap to the full scan: each event, judged
// after the template, gets what a fresh watch gives it; and the swap is
// taken exactly where it may be.
func TestStreamWatchSwap(t *testing.T) {
	first := swapChunk(`{"content":"a"}`, "null")
	for _, c := range swapNext {
		w := &oaiStreamWatch{}
		if w.Check("", []byte(first)) != WatchContinue || w.resume.swap.head == 0 {
			t.Fatal("the first chunk was not kept as the template")
		}
		var top watchTop
		if got := w.resume.swap.swapped([]byte(c.event), &top); got != c.swapped {
			t.Errorf("%s: swapped %v, want %v", c.event, got, c.swapped)
		}
		watchVerdicts(t, []string{first, c.event, c.event})
	}
}

// TestStreamWatchSwapNotKept: events whose outcome holds offsets or ends
// the stream, several choices, and oversized heads leave no template.
func TestStreamWatchSwapNotKept(t *testing.T) {
	big := `{"id":"` + string(bytes.Repeat([]byte("x"), maxWatchPrefix)) + `","choices":[{"index":0,"delta":{},"finish_reason":null}]}`
	for _, ev := range []string{
		watchResumeHead + `"choices":[{"index":0,"delta":{},"finish_reason":null}],"usage":{"prompt_tokens":3}}`,
		watchResumeHead + `"choices":[{"index":0,"delta":{},"finish_reason":null}],"usage":{}}`,
		watchResumeHead + `"choices":[{"index":0,"delta":{},"finish_reason":null},{"index":1,"delta":{}}]}`,
		watchResumeHead + `"choices":[{"index":0,"finish_reason":null}]}`,
		`{"type":"x","choices":[{"index":0,"delta":{},"finish_reason":null}]}`,
		big,
	} {
		w := &oaiStreamWatch{}
		w.Check("", []byte(swapChunk(`{}`, "null")))
		if v := w.Check("", []byte(ev)); v != WatchContinue {
			t.Fatalf("%.80s: verdict %d", ev, v)
		}
		if w.resume.swap.head != 0 {
			t.Errorf("%.80s: kept as the template", ev)
		}
	}
}

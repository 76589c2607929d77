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

package harness

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	join := func(evs [][]byte) []byte { return bytes.Join(evs, nil) }
	openai, anthropic := join(OpenAIChatStream()), join(AnthropicStream())
	tests := []struct {
		name    string
		p       Protocol
		body    []byte
		wantErr string
	}{
		{"openai complete", OpenAIChat, openai, ""},
		{"anthropic complete", Anthropic, anthropic, ""},
		{"openai cut before [DONE]", OpenAIChat, openai[:len(openai)-len("data: [DONE]\n\n")], "does not end with"},
		{"anthropic cut before message_stop", Anthropic, anthropic[:bytes.LastIndex(anthropic, []byte("event: message_stop"))], "does not end with message_stop"},
		{"openai without the tool call", OpenAIChat, join(OpenAIChatStream()[:TextDeltas+1]), "does not end with"},
		{"anthropic stream read as openai", OpenAIChat, anthropic, "does not end with"},
		{"openai text only but ended", OpenAIChat, []byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"), "lacks the Bash tool call"},
		{"anthropic ended without a tool", Anthropic, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), "lacks the Bash tool call"},
		{"empty", Anthropic, nil, "does not end with message_stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate(tt.body)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ds(7), 99, 7},
		{"median of odd", ds(1, 2, 3), 50, 2},
		{"median of even, nearest rank", ds(1, 2, 3, 4), 50, 2},
		{"p99 of 100", hundred, 99, 99},
		{"p100", hundred, 100, 100},
	}
	for _, tt := range tests {
		if got := Percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: Percentile(p%v) = %v, want %v", tt.name, tt.p, got, tt.want)
		}
	}
}

// TestLoadAgainstUpstream drives the upstream directly, as a proxy would
// be driven: both streams arrive complete, and a stalled stream waits
// for Release and then completes.
func TestLoadAgainstUpstream(t *testing.T) {
	up, err := StartUpstream()
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	client := NewClient(4, 10*time.Second)
	for _, r := range []Request{
		{URL: "http://" + up.Addr + "/v1/chat/completions", Protocol: OpenAIChat},
		{URL: "http://" + up.Addr + "/v1/messages", Protocol: Anthropic},
	} {
		if res := Load(client, r, 8, 4); res.Errors != 0 || len(res.Latencies) != 8 || len(res.TTFBs) != 8 {
			t.Errorf("%s: %d errors (%s), %d latencies", r.URL, res.Errors, res.FirstError, len(res.Latencies))
		}
	}

	up.Stall(3)
	done := make(chan error, 1)
	go func() {
		var buf bytes.Buffer
		_, _, err := Do(client, Request{URL: "http://" + up.Addr + "/v1/messages", Protocol: Anthropic}, &buf)
		done <- err
	}()
	for i := 0; i < 500 && up.Stalled() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if up.Stalled() != 1 {
		t.Fatalf("%d streams stalled, want 1", up.Stalled())
	}
	select {
	case err := <-done:
		t.Fatalf("the stalled stream ended before Release: %v", err)
	default:
	}
	up.Release()
	if err := <-done; err != nil {
		t.Errorf("the released stream: %v", err)
	}
	if up.Stalled() != 0 {
		t.Errorf("%d streams stalled after Release", up.Stalled())
	}
}

// TestWorkersTally runs jobs on several workers into one Tally: every
// job runs once, each worker keeps its buffer, the durations come back
// sorted and the first error is kept.
func TestWorkersTally(t *testing.T) {
	var tally Tally
	var mu sync.Mutex
	bufs := map[*bytes.Buffer]bool{}
	n := 0
	Workers(50, 4, func(buf *bytes.Buffer) {
		mu.Lock()
		n++
		i := n
		bufs[buf] = true
		mu.Unlock()
		if i%10 == 0 {
			tally.Add(0, 0, errors.New("failed"))
			return
		}
		tally.Add(time.Duration(100-i), time.Duration(i), nil)
	})
	res := tally.Result()
	if n != 50 || len(bufs) > 4 {
		t.Fatalf("%d jobs on %d buffers, want 50 on at most 4", n, len(bufs))
	}
	if res.Requests != 50 || res.Errors != 5 || res.FirstError != "failed" || len(res.Latencies) != 45 || len(res.TTFBs) != 45 {
		t.Fatalf("got %+v", res)
	}
	if !slices.IsSorted(res.Latencies) || !slices.IsSorted(res.TTFBs) {
		t.Errorf("unsorted: %v %v", res.Latencies, res.TTFBs)
	}
}

package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stream shape: the workload, a coding agent's turn.
const (
	// TextDeltas is the number of text deltas in a stream.
	TextDeltas = 198
	// ToolFragments is the number of pieces a stream's tool call
	// arguments arrive in.
	ToolFragments = 40
	// ToolName is the name of a stream's tool call, which every
	// validated response must carry.
	ToolName = "Bash"
)

// toolArguments is the tool call's arguments, streamed in ToolFragments
// pieces.
const toolArguments = `{"command":"go test ./translate ./stream -run 'TestOpenAIChat|TestAnthropic' -count=1 -race","description":"Run the codec tests with the race detector","timeout":600000}`

// Upstream is a loopback backend that answers every POST with a streamed
// turn: TextDeltas text deltas and a tool call whose arguments come in
// ToolFragments pieces, one event per write, flushed after each, as model
// servers send them. Requests to a path ending in /messages get the
// Anthropic Messages stream, others the OpenAI Chat one (243 events with
// its usage chunk and [DONE]). It can pace the events and stall streams
// midway (SetPace, Stall).
type Upstream struct {
	// Addr is the host:port the upstream listens on.
	Addr string

	srv       *http.Server
	openai    [][]byte
	anthropic [][]byte

	pace       atomic.Int64 // time.Duration between events; 0 = none
	stallAfter atomic.Int64 // events sent before a stream stalls; 0 = never
	stalled    atomic.Int64 // streams stalled now

	mu      sync.Mutex
	release chan struct{} // closed by Release
}

// StartUpstream starts an Upstream on a loopback port. Close it when done.
func StartUpstream() (*Upstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &Upstream{Addr: l.Addr().String(), openai: OpenAIChatStream(), anthropic: AnthropicStream(), release: make(chan struct{})}
	u.srv = &http.Server{Handler: http.HandlerFunc(u.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = u.srv.Serve(l) }()
	return u, nil
}

// Close stops the upstream, ending the streams it still serves.
func (u *Upstream) Close() error {
	u.Release()
	return u.srv.Close()
}

// SetPace sets the time between two events of a stream (0: none).
func (u *Upstream) SetPace(d time.Duration) { u.pace.Store(int64(d)) }

// Stall makes the streams that start from now on stop after n events
// until Release (n = 0: never stall).
func (u *Upstream) Stall(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.release = make(chan struct{})
	u.stallAfter.Store(int64(n))
}

// Stalled is the number of streams stalled now.
func (u *Upstream) Stalled() int { return int(u.stalled.Load()) }

// Release lets the stalled streams finish, and stops stalling new ones.
func (u *Upstream) Release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stallAfter.Store(0)
	select {
	case <-u.release:
	default:
		close(u.release)
	}
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	events := u.openai
	if strings.HasSuffix(r.URL.Path, "/messages") {
		events = u.anthropic
	}
	u.mu.Lock()
	release, stallAfter := u.release, int(u.stallAfter.Load())
	u.mu.Unlock()
	pace := time.Duration(u.pace.Load())

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for i, ev := range events {
		if i == stallAfter && stallAfter > 0 {
			u.stalled.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			u.stalled.Add(-1)
		}
		if pace > 0 && i > 0 {
			time.Sleep(pace)
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// toolFragments splits toolArguments into ToolFragments pieces, each as
// the contents of a JSON string.
func toolFragments() []string {
	frags := make([]string, 0, ToolFragments)
	for i := 0; i < ToolFragments; i++ {
		piece := toolArguments[i*len(toolArguments)/ToolFragments : (i+1)*len(toolArguments)/ToolFragments]
		q, _ := json.Marshal(piece)
		frags = append(frags, string(q[1:len(q)-1]))
	}
	return frags
}

// OpenAIChatStream is the OpenAI Chat stream Upstream serves, one event
// per element: a role chunk, TextDeltas text deltas, the tool call's
// start and ToolFragments argument pieces, the finish chunk, the usage
// chunk and [DONE] (243 events).
func OpenAIChatStream() [][]byte {
	chunk := func(delta, finish string) []byte {
		return []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n")
	}
	events := [][]byte{chunk(`{"role":"assistant","content":""}`, "null")}
	for i := 0; i < TextDeltas; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"word%d "}`, i), "null"))
	}
	events = append(events, chunk(`{"tool_calls":[{"index":0,"id":"call_bench","type":"function","function":{"name":"`+ToolName+`","arguments":""}}]}`, "null"))
	for _, frag := range toolFragments() {
		events = append(events, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+frag+`"}}]}`, "null"))
	}
	events = append(events, chunk(`{}`, `"tool_calls"`),
		[]byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":25000,"completion_tokens":250,"total_tokens":25250}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
	return events
}

// AnthropicStream is the same turn as an Anthropic Messages stream:
// message_start, the text block with TextDeltas deltas, the tool_use block
// with ToolFragments input_json_delta pieces, message_delta and
// message_stop (245 events).
func AnthropicStream() [][]byte {
	ev := func(name, data string) []byte { return []byte("event: " + name + "\ndata: " + data + "\n\n") }
	events := [][]byte{
		ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25000,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	}
	for i := 0; i < TextDeltas; i++ {
		events = append(events, ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word%d "}}`, i)))
	}
	events = append(events,
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_bench","name":"`+ToolName+`","input":{}}}`))
	for _, frag := range toolFragments() {
		events = append(events, ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"`+frag+`"}}`))
	}
	events = append(events,
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":250}}`),
		ev("message_stop", `{"type":"message_stop"}`))
	return events
}

package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// anthFeed decodes "name data" lines (name may be "-" for none) and ends
// the stream.
func anthFeed(lines ...string) []Event {
	d := &anthropicStreamDecoder{}
	var evs []Event
	for _, l := range lines {
		name, data, _ := strings.Cut(l, " ")
		if name == "-" {
			name = ""
		}
		evs = d.Decode(evs, name, []byte(data))
	}
	return d.End(evs)
}

const anthStart = `message_start {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3,"output_tokens":1}}}`

func TestAnthropicStreamDecodeEdges(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{
			name: "input given whole in the start is used when no fragments follow",
			lines: []string{anthStart,
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":1}}}`,
				`content_block_stop {"type":"content_block_stop","index":0}`,
				`message_stop {"type":"message_stop"}`},
			want: "start(m) open0:tool_calln d0={\"a\":1} close0 stop(tool_use)",
		},
		{
			name: "streamed fragments win over input in the start",
			lines: []string{anthStart,
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":1}}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"b\":2}"}}`,
				`content_block_stop {"type":"content_block_stop","index":0}`,
				`message_stop {"type":"message_stop"}`},
			want: "start(m) open0:tool_calln d0={\"b\":2} close0 stop(tool_use)",
		},
		{
			name: "two text blocks without a stop between stay two blocks",
			lines: []string{anthStart,
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a"}}`,
				`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"b"}}`,
				`message_delta {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
				`message_stop {"type":"message_stop"}`},
			want: "start(m) open0:text d0=a close0 open1:text d1=b close1 stop(end_turn)",
		},
		{
			name: "error event that is not JSON",
			lines: []string{anthStart,
				`error upstream exploded`},
			want: "start(m) error(500)",
		},
		{
			name: "bare error object without a type or name",
			lines: []string{anthStart,
				`- {"error":{"type":"rate_limit_error","message":"slow"}}`},
			want: "start(m) error(429)",
		},
		{
			name: "bare Anthropic error envelope without a name",
			lines: []string{anthStart,
				`- {"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`},
			want: "start(m) error(429)",
		},
		{
			name: "nothing after the end, unknown events and ping ignored",
			lines: []string{anthStart,
				`ping {"type":"ping"}`,
				`brand_new_event {"type":"brand_new_event","x":1}`,
				`message_stop {"type":"message_stop"}`,
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"late"}}`},
			want: "start(m) stop(end_turn)",
		},
		{
			name: "deltas without a start open a block",
			lines: []string{anthStart,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
				`message_stop {"type":"message_stop"}`},
			want: "start(m) open0:text d0=x close0 stop(end_turn)",
		},
		{
			name: "no message_start at all",
			lines: []string{
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"S"}}`},
			want: "start() open0:thinking d0=hm sig0=S error(502)",
		},
		{
			name: "stray argument fragment without a tool call",
			lines: []string{anthStart,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				`message_stop {"type":"message_stop"}`},
			want: "start(m) stop(end_turn)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evString(anthFeed(tt.lines...)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestAnthropicStreamDecodeUsage checks the cumulative usage rules: counts
// in message_delta replace earlier ones, absent ones keep theirs.
func TestAnthropicStreamDecodeUsage(t *testing.T) {
	evs := anthFeed(
		`message_start {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":7}}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":9,"cache_read_input_tokens":null,"output_tokens_details":{"thinking_tokens":4}}}`,
		`message_stop {"type":"message_stop"}`,
	)
	last := evs[len(evs)-1]
	want := Usage{InputTokens: 115, OutputTokens: 9, CacheReadTokens: 100, CacheWriteTokens: 5, ReasoningTokens: 4}
	if last.Type != EventMessageStop || last.Stop != StopMaxTokens || last.Usage == nil || *last.Usage != want {
		t.Errorf("last event = %+v usage %+v, want max_tokens with %+v", last, last.Usage, want)
	}
	if u := evs[0].Usage; u == nil || *u != (Usage{InputTokens: 115, OutputTokens: 1, CacheReadTokens: 100, CacheWriteTokens: 5}) {
		t.Errorf("start usage = %+v", u)
	}
}

// FuzzAnthropicStreamDecode: any sequence of events yields a stream that
// ends exactly once, and the encoder turns it into valid JSON events.
func FuzzAnthropicStreamDecode(f *testing.F) {
	f.Add("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":[1]}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x"}}`)
	f.Add("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"q"}}`)
	f.Add("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"s","content":[{"type":"web_search_result","url":"u","encrypted_content":"e"}]}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`)
	f.Add("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"web_fetch_tool_result","tool_use_id":"s","content":{"type":"web_fetch_tool_error","error_code":"x"}}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`)
	f.Add("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"u","title":null,"cited_text":"\ud800","encrypted_index":7}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location"}}}`)
	f.Add("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":"many"}}`,
		"", `{"type":"error","error":{"type":"overloaded_error","message":"o"}}`)
	f.Fuzz(func(t *testing.T, n1, d1, n2, d2 string) {
		d := &anthropicStreamDecoder{}
		var evs []Event
		evs = d.Decode(evs, "message_start", []byte(`{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}`))
		evs = d.Decode(evs, n1, []byte(d1))
		evs = d.Decode(evs, n2, []byte(d2))
		evs = d.End(evs)
		ends := 0
		for _, e := range evs {
			if e.Type == EventMessageStop || e.Type == EventError {
				ends++
			}
		}
		if ends != 1 || (evs[len(evs)-1].Type != EventMessageStop && evs[len(evs)-1].Type != EventError) {
			t.Fatalf("stream does not end exactly once: %s", evString(evs))
		}
		enc := &anthropicStreamEncoder{model: "m"}
		w := anthFrameCheck{t: t}
		for i := range evs {
			enc.Encode(&w, &evs[i])
		}
	})
}

// anthFrameCheck is a FrameWriter that checks every frame is valid JSON
// whose type is the event name.
type anthFrameCheck struct{ t *testing.T }

func (w *anthFrameCheck) WriteFrame(name string, data []byte) {
	if !gjson.ValidBytes(data) || gjson.GetBytes(data, "type").Str != name {
		w.t.Fatalf("bad frame %s: %s", name, data)
	}
}

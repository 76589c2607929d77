package translate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The stream decoders have a fast path (one validating scan, see
// json_scan.go) and the gjson path, which defines their behaviour. These
// tests hold the two to each other on every fixture, on the shapes the
// scanner takes or refuses, and under fuzzing.

// sseEvent is one event of a fixture.
type sseEvent struct {
	name string
	data []byte
}

// readSSE splits a fixture into events. The fixtures are simple (LF line
// ends, one data line per event); the stream package's tests cover framing.
func readSSE(t testing.TB, path string) []sseEvent {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []sseEvent
	for _, block := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n") {
		var ev sseEvent
		has := false
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				if has {
					ev.data = append(ev.data, '\n')
				}
				ev.data = append(ev.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
				has = true
			case strings.HasPrefix(line, "{"):
				ev.data, has = append(ev.data, line...), true
			}
		}
		if has {
			out = append(out, ev)
		}
	}
	return out
}

// decodeBoth runs events through a decoder on the fast path and one on the
// gjson path and returns both event lists.
func decodeBoth(p Protocol, events []sseEvent) (fast, slow []Event) {
	type twoPath interface {
		StreamDecoder
		decode(dst []Event, name string, data []byte, fast bool) []Event
	}
	codec, _ := Lookup(p)
	f, s := codec.NewStreamDecoder().(twoPath), codec.NewStreamDecoder().(twoPath)
	for _, ev := range events {
		// Each decoder gets its own copy, which is then scribbled over, as
		// the SSE parser reuses its buffer: no string may alias it.
		buf := append([]byte(nil), ev.data...)
		fast = f.decode(fast, ev.name, buf, true)
		clear(buf)
		buf = append(buf[:0], ev.data...)
		slow = s.decode(slow, ev.name, buf, false)
		clear(buf)
	}
	return f.End(fast), s.End(slow)
}

// sameEvents compares two decodings. Tool call ids the decoders generated
// for calls without one are random, so two generated ids count as equal.
func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type == EventBlockStart && x.ID != y.ID && generatedID(x.ID) && generatedID(y.ID) {
			x.ID, y.ID = "", ""
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func generatedID(id string) bool {
	return (strings.HasPrefix(id, "call_") || strings.HasPrefix(id, "toolu_")) && len(id) >= 29
}

func TestStreamDecodeFastPathMatchesFixtures(t *testing.T) {
	for _, tt := range []struct {
		p    Protocol
		dirs []string
	}{
		{ProtocolOpenAIChat, []string{"openai_chat", "captured"}},
		{ProtocolAnthropic, []string{"anthropic", "captured"}},
	} {
		for _, dir := range tt.dirs {
			paths, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.sse"))
			for _, path := range paths {
				base := filepath.Base(path)
				if dir == "captured" && !strings.HasPrefix(base, string(tt.p)) {
					continue
				}
				fast, slow := decodeBoth(tt.p, readSSE(t, path))
				if len(fast) == 0 || !sameEvents(fast, slow) {
					t.Errorf("%s %s:\nfast %+v\nslow %+v", tt.p, base, fast, slow)
				}
			}
		}
	}
}

// TestOAIChunkScanShapes lists which chunks the fast path takes, and checks
// that both paths decode each alike, in a fresh stream and inside an open
// tool call.
func TestOAIChunkScanShapes(t *testing.T) {
	const call = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`
	tests := []struct {
		chunk string
		fast  bool
	}{
		{`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`, true},
		{`{"choices":[{"index":0,"delta":{"content":"hi \"there\"\n\u00e9\ud83d\ude00"}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":"x"}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"alt"}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"reasoning_content":null}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"content":null,"refusal":null},"finish_reason":"stop"}]}`, true},
		{`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}`, true},
		{`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, true},
		{`{"choices":[{"index":1,"delta":{"content":"other"}}]}`, true},
		{`{"choices":[{"index":null,"delta":{"content":"null index"}}]}`, true},
		{`{"choices":null,"usage":null,"error":null}`, true},
		{`{"choices":[{"delta":null}]}`, true},
		{call, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"g","arguments":{"x":1}}}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":null}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":"odd"}]}}]}`, true},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[]}}]}`, true},
		{` {"choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } } ] } `, true},
		// Left to the gjson path.
		{`{"error":{"message":"boom","type":"server_error"}}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"r"}]}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"tool_calls":null}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","function":{"arguments":"x"}}]}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"tool_calls":[null]}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"\u0063ontent":"escaped name"}}]}`, false},
		{`{"choices":[{"index":1.0,"delta":{"content":"x"}}]}`, false},
		{`{"choices":[{"index":true,"delta":{"content":"x"}}]}`, false},
		{`{"choices":[{"index":0,"delta":"str"}]}`, false},
		{`{"choices":{"0":{"delta":{"content":"x"}}}}`, false},
		{`{"choices":[1]}`, false},
		{`{"id":"a","id":"b","choices":[]}`, false},
		{`["not an object"]`, false},
		{`"str"`, false},
		{`{"choices":[{"index":0,"delta":{"content":"x"}}]`, false},
		{`{"choices":[{"index":0,"delta":{"content":"x\q"}}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"x"}}]}}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"x"}},]}`, false},
	}
	for _, tt := range tests {
		var c oaiChunkScan
		if got := c.scan([]byte(tt.chunk)); got != tt.fast {
			t.Errorf("%s: fast path %v, want %v", tt.chunk, got, tt.fast)
		}
		for _, prefix := range [][]sseEvent{nil, {{data: []byte(call)}}} {
			evs := append(prefix, sseEvent{data: []byte(tt.chunk)}, sseEvent{data: []byte(`{"choices":[{"index":0,"delta":{"content":"after"},"finish_reason":"stop"}]}`)})
			if fast, slow := decodeBoth(ProtocolOpenAIChat, evs); !sameEvents(fast, slow) {
				t.Errorf("%s:\nfast %+v\nslow %+v", tt.chunk, fast, slow)
			}
		}
	}
}

func TestAnthropicEventScanShapes(t *testing.T) {
	start := []sseEvent{
		{"message_start", []byte(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`)},
		{"content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)},
	}
	toolStart := sseEvent{"content_block_start", []byte(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`)}
	thinkStart := sseEvent{"content_block_start", []byte(`{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}`)}
	tests := []struct {
		name, data string
		fast       bool
	}{
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi \u00e9\n"}}`, true},
		{"", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unnamed"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"text":"no type"}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":0}`, true},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`, true},
		{"ping", `{"type": "ping"}`, true},
		{"message_stop", `{"type":"message_stop"}`, true},
		// Left to the gjson path.
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`, true}, // scanned, then handed over
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":12}}`, true},
		{"content_block_delta", `{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"x"}}`, false},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}`, false},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":"x"}`, false},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}`, false},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\x"}}`, false},
		{"", `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`, false},
		{"", `{"error":{"type":"overloaded_error","message":"busy"}}`, false},
		{"error", `{"type":"error","error":{"type":"api_error","message":"x"}}`, false},
		{"error", `not json`, false},
	}
	for _, tt := range tests {
		var e anthEventScan
		if got := e.scan([]byte(tt.data)); got != tt.fast {
			t.Errorf("%s %s: scanned %v, want %v", tt.name, tt.data, got, tt.fast)
		}
		for _, open := range []sseEvent{start[1], toolStart, thinkStart} {
			evs := append([]sseEvent{start[0], open}, sseEvent{tt.name, []byte(tt.data)}, sseEvent{"message_stop", []byte(`{"type":"message_stop"}`)})
			if fast, slow := decodeBoth(ProtocolAnthropic, evs); !sameEvents(fast, slow) {
				t.Errorf("%s %s:\nfast %+v\nslow %+v", tt.name, tt.data, fast, slow)
			}
		}
	}
}

// gjsonKind is the jsonKind of a gjson result.
func gjsonKind(r gjson.Result) jsonKind {
	switch {
	case !r.Exists():
		return jsonAbsent
	case r.Type == gjson.Null:
		return jsonNull
	case r.Type == gjson.True || r.Type == gjson.False:
		return jsonBool
	case r.Type == gjson.Number:
		return jsonNumber
	case r.Type == gjson.String:
		return jsonString
	case r.IsObject():
		return jsonObject
	}
	return jsonArray
}

// sameAsGJSON reports whether a scanned span holds the value gjson finds.
func sameAsGJSON(t *testing.T, what string, data []byte, sp jsonSpan, r gjson.Result) {
	t.Helper()
	if k := gjsonKind(r); sp.kind != k {
		t.Fatalf("%s: kind %d, gjson %d", what, sp.kind, k)
	}
	var scratch []byte
	switch sp.kind {
	case jsonAbsent:
	case jsonString:
		if got := sp.str(data, &scratch); got != r.Str {
			t.Fatalf("%s: %q, gjson %q", what, got, r.Str)
		}
	default:
		if got := string(sp.bytes(data)); got != r.Raw {
			t.Fatalf("%s: %q, gjson %q", what, got, r.Raw)
		}
	}
}

func FuzzOpenAIChunkScan(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"\ud83d\ude00 \u00e9\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
		`{"error":{"message":"boom"}}`,
		`[1,-2.5e3,true,false,null,"s",{}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := gjson.ValidBytes(data)
		if got := jsonValid(data); got != valid {
			t.Fatalf("scanner accepts %v, gjson.ValidBytes %v", got, valid)
		}
		var c oaiChunkScan
		if c.scan(data) {
			if !valid {
				t.Fatal("the fast path took invalid JSON")
			}
			root := gjson.ParseBytes(data)
			sameAsGJSON(t, "id", data, c.id, root.Get("id"))
			sameAsGJSON(t, "model", data, c.model, root.Get("model"))
			sameAsGJSON(t, "usage", data, c.usage, root.Get("usage"))
			if n := root.Get("choices.#").Int(); c.hasChoice != (n == 1) {
				t.Fatalf("hasChoice %v, gjson counts %d choices", c.hasChoice, n)
			}
			if c.hasChoice {
				ch := root.Get("choices.0")
				if idx := ch.Get("index").Int(); c.index != idx {
					t.Fatalf("index %d, gjson %d", c.index, idx)
				}
				sameAsGJSON(t, "finish_reason", data, c.finish, ch.Get("finish_reason"))
				delta := ch.Get("delta")
				sameAsGJSON(t, "content", data, c.content, delta.Get("content"))
				sameAsGJSON(t, "refusal", data, c.refusal, delta.Get("refusal"))
				sameAsGJSON(t, "reasoning_content", data, c.reasoning, delta.Get("reasoning_content"))
				sameAsGJSON(t, "reasoning", data, c.reasonAlt, delta.Get("reasoning"))
				calls := delta.Get("tool_calls").Array()
				if len(calls) != len(c.calls) {
					t.Fatalf("%d tool calls, gjson %d", len(c.calls), len(calls))
				}
				var scratch []byte
				for i, call := range calls {
					got := &c.calls[i]
					if idx := call.Get("index"); got.hasIndex != (idx.Type == gjson.Number) || got.index != idx.Int() {
						t.Fatalf("call %d index %v %d, gjson %v", i, got.hasIndex, got.index, idx)
					}
					sameAsGJSON(t, "call id", data, got.id, call.Get("id"))
					fn := call.Get("function")
					if fn.IsObject() {
						sameAsGJSON(t, "call name", data, got.name, fn.Get("name"))
						if args := got.arguments(data, &scratch); args != oaiArguments(fn.Get("arguments")) {
							t.Fatalf("call arguments %q, gjson %q", args, oaiArguments(fn.Get("arguments")))
						}
					}
				}
			}
		}
		// Whichever path a chunk takes, the decoding is the same, in a
		// fresh stream and in one with a tool call open.
		open := []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{"}}]}}]}`)
		for _, prefix := range [][]sseEvent{nil, {{data: open}}} {
			evs := append(prefix, sseEvent{data: data}, sseEvent{data: data})
			if fast, slow := decodeBoth(ProtocolOpenAIChat, evs); !sameEvents(fast, slow) {
				t.Fatalf("fast %+v\nslow %+v", fast, slow)
			}
		}
	})
}

func FuzzAnthropicEventScan(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":\u0031"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\ud83d\ude00"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_stop"}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`,
	} {
		f.Add("", []byte(s))
		f.Add("content_block_delta", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if strings.ContainsAny(name, "\r\n") || bytes.ContainsAny(data, "\r\n") {
			return // not one SSE event
		}
		var e anthEventScan
		if e.scan(data) && !gjson.ValidBytes(data) {
			t.Fatal("the fast path took invalid JSON")
		}
		prefix := []sseEvent{
			{"message_start", []byte(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}`)},
			{"content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)},
		}
		evs := append(prefix, sseEvent{name, data}, sseEvent{name, data})
		if fast, slow := decodeBoth(ProtocolAnthropic, evs); !sameEvents(fast, slow) {
			t.Fatalf("fast %+v\nslow %+v", fast, slow)
		}
	})
}

// TestOAIChunkScanResume checks that a chunk read from the state an earlier
// chunk left (when the two share the bytes before the delta) is read as a
// fresh scanner reads it.
func TestOAIChunkScanResume(t *testing.T) {
	const head = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":2,"finish_reason":null,"delta":`
	tails := []string{
		`{"content":"a"}}]}`,
		`{"content":"b"},"logprobs":null}],"usage":{"prompt_tokens":3}}`,
		`{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"content":"c"},"finish_reason":"stop"}]}`,
		`{"content":"d"}},{"index":1,"delta":{}}]}`,
		`{"content":"e"}}],"choices":[]}`,
		`{"content":"f"},"delta":{}}]}`,
		`{"content":"g"}}]`,
		`{"content":"h"}}]} x`,
		` {"content":"i"}}]}`,
		`"str"}]}`,
		`{"content":"j"}}]}`,
	}
	var resumed oaiChunkScan
	for _, tail := range tails {
		data := []byte(head + tail)
		var fresh oaiChunkScan
		want := fresh.scan(data)
		got := resumed.scan(data)
		if got != want {
			t.Fatalf("%s: resumed scan %v, fresh %v", tail, got, want)
		}
		if !want {
			continue
		}
		sameReading(t, tail, &resumed, &fresh)
	}
	if string(resumed.memo.prefix) != head {
		t.Fatalf("memo prefix %q, want %q", resumed.memo.prefix, head)
	}
}

// TestOAIChunkScanTail checks that a chunk whose bytes after the delta are
// those of the last resumed chunk is read as a fresh scanner reads it:
// deltas of other lengths move the tail's spans, a tail that differs in a
// byte (another finish reason, a member that repeats, a second choice,
// trailing garbage) is scanned again, and a new prefix forgets the tail.
func TestOAIChunkScanTail(t *testing.T) {
	const head = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	const head2 = `{"id":"d","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	const head3 = `{"id":"e","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":2,"delta":`
	const tail = `,"logprobs":null,"finish_reason":null}],"usage":null,"system_fingerprint":"fp"}`
	chunks := []string{
		head + `{"content":"a"}` + tail,
		head + `{"content":"bbbbbbbbbb"}` + tail, // the tail is memoised from here
		head + `{"content":"c"}` + tail,
		head + `{"content":"\u00e9 and more"}` + tail,
		head + `{"content":"d"},"logprobs":null,"finish_reason":"stop"}],"usage":null,"system_fingerprint":"fp"}`,
		head + `{"content":"eee"},"logprobs":null,"finish_reason":"stop"}],"usage":null,"system_fingerprint":"fp"}`,
		head + `{"content":"f"}` + tail,
		head + `{"content":"g"},"logprobs":null,"finish_reason":null,"delta":{}}],"usage":null}`,
		head + `{"content":"h"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3}}`,
		head + `{"content":"i"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3}}`,
		head + `{"content":"j"},"logprobs":null,"finish_reason":null},{"index":1,"delta":{}}]}`,
		head + `{"content":"k"}` + tail + ` x`,
		head + `{"content":"l"}` + tail,
		head2 + `{"content":"m"}` + tail, // another prefix: a fresh scan
		head2 + `{"content":"n"}` + tail,
		head2 + `{"content":"oo"}` + tail,
		head2 + `{"content":"pp"}` + tail, // a delta of the same length: nothing moves
		head2 + `{"content":"q"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3},"system_fingerprint":"fp"}`,
		head2 + `{"content":"rr"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3},"system_fingerprint":"fp"}`,
		head2 + `{"content":"s"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3},"system_fingerprint":"fp"}`,
		head3 + `{"content":"t"}` + tail, // a choice index other than 0, read from the tail
		head3 + `{"content":"u"}` + tail,
		head3 + `{"content":"vv"}` + tail,
	}
	var resumed oaiChunkScan
	hits := 0
	for _, chunk := range chunks {
		data := []byte(chunk)
		var fresh oaiChunkScan
		want := fresh.scan(data)
		hadTail := resumed.tail.at > 0 && bytes.HasSuffix(data, resumed.tail.bytes)
		got := resumed.scan(data)
		if got != want {
			t.Fatalf("%s: resumed scan %v, fresh %v", chunk, got, want)
		}
		if hadTail && got {
			hits++
		}
		if !want {
			continue
		}
		sameReading(t, chunk, &resumed, &fresh)
	}
	if hits < 6 {
		t.Fatalf("%d chunks read from the tail, want at least 6", hits)
	}
}

// sameReading fails the test unless the two scanners read the same,
// leaving their own state (memos, buffers' capacities) aside.
func sameReading(t *testing.T, label string, resumed, fresh *oaiChunkScan) {
	t.Helper()
	got, want := resumed.oaiChunkRead, fresh.oaiChunkRead
	got.calls, want.calls = slices.Clip(append([]oaiCallScan{}, got.calls...)), slices.Clip(append([]oaiCallScan{}, want.calls...))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nresumed %+v\nfresh   %+v", label, got, want)
	}
}

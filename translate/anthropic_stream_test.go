package translate_test

// Stream-level tests of the Anthropic codec. They live in the external test
// package because they frame bytes with package stream, which imports
// translate.

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

func anthCodec(t testing.TB) translate.Codec {
	t.Helper()
	c, ok := translate.Lookup(translate.ProtocolAnthropic)
	if !ok {
		t.Fatal("anthropic codec not registered")
	}
	return c
}

// anthDecodeSSE frames body as SSE in chunks of the given size (0: whole)
// and decodes it into IR events, End included.
func anthDecodeSSE(t testing.TB, body []byte, chunk int) []translate.Event {
	t.Helper()
	dec := anthCodec(t).NewStreamDecoder()
	var evs []translate.Event
	fn := func(name string, data []byte) { evs = dec.Decode(evs, name, data) }
	var p stream.SSEParser
	if chunk <= 0 {
		chunk = len(body) + 1
	}
	for i := 0; i < len(body); i += chunk {
		if err := p.Feed(body[i:min(i+chunk, len(body))], fn); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(fn); err != nil {
		t.Fatal(err)
	}
	return dec.End(evs)
}

// anthCheckGrammar asserts the well-formed stream grammar of event.go
// (an error may come anywhere and leave a block open).
func anthCheckGrammar(t *testing.T, evs []translate.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	open, next, ended := -1, 0, false
	for i, e := range evs {
		if ended {
			t.Fatalf("event %d (%s) after the end", i, e.Type)
		}
		switch e.Type {
		case translate.EventMessageStart:
			if i != 0 {
				t.Errorf("message_start at %d", i)
			}
		case translate.EventBlockStart:
			if open >= 0 || e.Index != next {
				t.Errorf("block_start %d at %d: open=%d next=%d", e.Index, i, open, next)
			}
			open, next = e.Index, next+1
		case translate.EventBlockDelta:
			if e.Index != open {
				t.Errorf("delta for block %d while %d is open", e.Index, open)
			}
		case translate.EventBlockStop:
			if e.Index != open {
				t.Errorf("stop for block %d while %d is open", e.Index, open)
			}
			open = -1
		case translate.EventMessageStop:
			if open >= 0 {
				t.Errorf("%s with block %d open", e.Type, open)
			}
			ended = true
		case translate.EventError:
			ended = true // an error may leave a block open
		}
	}
	if !ended {
		t.Error("stream does not end with message_stop or error")
	}
}

var anthGenerated = regexp.MustCompile(`^(msg|toolu)_[0-9a-f]{24}$`)

// anthMaskResponse replaces generated ids so a Response can be compared.
func anthMaskResponse(r *translate.Response) {
	for i := range r.Parts {
		if tc := r.Parts[i].ToolCall; tc != nil && anthGenerated.MatchString(tc.ID) {
			tc.ID = "toolu_<generated>"
		}
	}
}

func TestAnthropicStreamDecode(t *testing.T) {
	text := func(s string) translate.Part { return translate.Part{Type: translate.PartText, Text: s} }
	call := func(id, name, args string) translate.Part {
		return translate.Part{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	tests := []struct {
		file    string
		want    *translate.Response
		wantErr *translate.Error
	}{
		{
			file: "stream_text_ping.sse",
			want: &translate.Response{
				ID: "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK", Model: "claude-3-opus-latest",
				Parts:      []translate.Part{text("Hello there! <ok> & \"done\"\n")},
				StopReason: translate.StopEndTurn,
				Usage:      translate.Usage{InputTokens: 11, OutputTokens: 6},
			},
		},
		{
			file: "stream_tool_use.sse",
			want: &translate.Response{
				ID: "msg_019Q1hrJbZG26Fb9BQhrkHEr", Model: "claude-sonnet-4-20250514",
				Parts: []translate.Part{
					text("I'll check the current weather in Paris for you."),
					call("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", `{"location": "Paris"}`),
					call("toolu_01NoArgs", "get_time", "{}"),
				},
				StopReason: translate.StopToolUse,
				Usage:      translate.Usage{InputTokens: 377 + 1200 + 30000, OutputTokens: 65, CacheReadTokens: 30000, CacheWriteTokens: 1200},
			},
		},
		{
			file: "stream_thinking.sse",
			want: &translate.Response{
				ID: "msg_01Thinking", Model: "claude-sonnet-4-5",
				Parts: []translate.Part{
					{Type: translate.PartThinking, Text: "Let me add 2 and 2. That is 4.", Signature: "EqQBCkYIBxgCKkBtZXNzYWdlX3NpZ25hdHVyZQ+/=="},
					text("2 + 2 = 4"),
				},
				StopReason: translate.StopEndTurn,
				Usage:      translate.Usage{InputTokens: 40, OutputTokens: 30, ReasoningTokens: 21},
			},
		},
		{
			file: "stream_redacted_thinking.sse",
			want: &translate.Response{
				ID: "msg_01Redacted", Model: "claude-3-7-sonnet-20250219",
				Parts: []translate.Part{
					{Type: translate.PartRedactedThinking, Signature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
					{Type: translate.PartThinking, Text: "More reasoning.", Signature: "SigTwo=="},
					text("Answer."),
				},
				StopReason: translate.StopSequence, StopSequence: "</answer>",
				Usage: translate.Usage{InputTokens: 90, OutputTokens: 12},
			},
		},
		{
			file: "stream_max_tokens_mid_tool.sse",
			want: &translate.Response{
				ID: "msg_01MaxTokens", Model: "claude-sonnet-4-5",
				Parts: []translate.Part{
					text("Writing the file."),
					call("toolu_01Cut", "Write", `{"file_path": "/tmp/a.go", "content": "package ma`),
				},
				StopReason: translate.StopMaxTokens,
				Usage:      translate.Usage{InputTokens: 500, OutputTokens: 64},
			},
		},
		{
			file:    "stream_error.sse",
			wantErr: &translate.Error{Status: 529, Kind: translate.ErrOverloaded, Message: "Overloaded"},
		},
		{
			file:    "stream_cut.sse",
			wantErr: &translate.Error{Status: 502, Kind: translate.ErrAPI, Message: "upstream stream ended before the response was complete"},
		},
		{
			file: "stream_delta_without_stop.sse",
			want: &translate.Response{
				ID: "msg_01NoStop", Model: "claude-sonnet-4-5",
				Parts:      []translate.Part{text("Done.")},
				StopReason: translate.StopEndTurn,
				Usage:      translate.Usage{InputTokens: 120, OutputTokens: 3, CacheReadTokens: 100},
			},
		},
		{
			file: "stream_server_tools.sse",
			want: &translate.Response{
				ID: "msg_01Search", Model: "claude-sonnet-4-5",
				Parts: []translate.Part{text("Let me search."),
					{Type: translate.PartServerToolCall, Server: &translate.ServerToolUse{ID: "srvtoolu_014hJH82Qum7Td6UV8gDXThB", Kind: translate.ServerWebSearch, Query: "weather NYC today"}},
					{Type: translate.PartServerToolResult, Server: &translate.ServerToolUse{ID: "srvtoolu_014hJH82Qum7Td6UV8gDXThB", Kind: translate.ServerWebSearch,
						Results: []translate.WebResult{{URL: "https://example.com", Title: "Weather", Encrypted: "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k"}}}},
					{Type: translate.PartText, Text: "It is sunny.", Citations: []translate.Citation{{URL: "https://example.com", Title: "Weather", CitedText: "Sunny", EncryptedIndex: "Eo8BCioIAhgB"}}}},
				StopReason: translate.StopEndTurn,
				Usage:      translate.Usage{InputTokens: 2000, OutputTokens: 120},
			},
		},
		{
			file: "stream_unnamed_events.sse",
			want: &translate.Response{
				ID: "msg_01Unnamed", Model: "qwen3-coder",
				Parts:      []translate.Part{call("toolu_<generated>", "Bash", `{"command":"ls"}`)},
				StopReason: translate.StopToolUse,
				Usage:      translate.Usage{InputTokens: 7, OutputTokens: 9},
			},
		},
		{
			// A malformed event is an upstream failure: the client must
			// not get an answer with a hole that looks complete.
			file:    "stream_malformed_event.sse",
			wantErr: &translate.Error{Status: 502, Kind: translate.ErrAPI, Message: `malformed upstream event: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`},
		},
		{
			file: "../captured/anthropic_tool_use.sse",
			want: &translate.Response{
				ID: "msg_019Q1hrJbZG26Fb9BQhrkHEr", Model: "claude-sonnet-4-20250514",
				Parts: []translate.Part{
					text("I'll check the current weather in Paris for you."),
					call("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", `{"location": "Paris"}`),
				},
				StopReason: translate.StopToolUse,
				Usage:      translate.Usage{InputTokens: 377, OutputTokens: 65},
			},
		},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(filepath.Base(tt.file), ".sse")
		t.Run(name, func(t *testing.T) {
			body := translate.AnthFixture(t, tt.file)
			evs := anthDecodeSSE(t, body, 0)
			anthCheckGrammar(t, evs)
			dump := translate.AnthDumpEvents(evs)
			if !strings.HasPrefix(tt.file, "..") {
				translate.AnthGolden(t, "anthropic/"+name+".events", dump)
			}

			// Arbitrary write boundaries change nothing.
			for _, chunk := range []int{1, 7, 64} {
				if got := translate.AnthDumpEvents(anthDecodeSSE(t, body, chunk)); !bytes.Equal(got, dump) {
					t.Errorf("chunks of %d bytes:\n%s\nwhole:\n%s", chunk, got, dump)
				}
			}

			var acc translate.Accumulator
			for i := range evs {
				acc.Add(&evs[i])
			}
			got, err := acc.Result()
			if tt.wantErr != nil {
				if err == nil || *err != *tt.wantErr {
					t.Errorf("error = %+v, want %+v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Result: %v", err)
			}
			anthMaskResponse(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("response\n%s\nwant\n%s", translate.AnthDumpJSON(got), translate.AnthDumpJSON(tt.want))
			}
		})
	}
}

// TestAnthropicStreamDecodeForwardsFragments checks that every non-empty
// input_json_delta becomes one IR fragment as soon as it arrives.
func TestAnthropicStreamDecodeForwardsFragments(t *testing.T) {
	dec := anthCodec(t).NewStreamDecoder()
	var evs []translate.Event
	evs = dec.Decode(evs, "message_start", []byte(`{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":1}}}`))
	evs = dec.Decode(evs, "content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}`))
	n := len(evs)
	for _, frag := range []string{`{"a"`, `:`, `1}`} {
		evs = dec.Decode(evs, "content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+strconv.Quote(frag)+`}}`))
		if len(evs) != n+1 || evs[n].Type != translate.EventBlockDelta || evs[n].Text != frag {
			t.Fatalf("fragment %q: events %s", frag, translate.AnthDumpEvents(evs[n:]))
		}
		n = len(evs)
	}
}

// anthEncodeSSE runs IR events through the Anthropic stream encoder and
// frames the result as SSE.
func anthEncodeSSE(t testing.TB, req *translate.Request, evs []translate.Event) []byte {
	t.Helper()
	enc := anthCodec(t).NewStreamEncoder(req)
	var out stream.SSEOutput
	for i := range evs {
		enc.Encode(&out, &evs[i])
	}
	return bytes.Clone(out.Bytes())
}

// anthRepresentativeEvents is an IR stream as an OpenAI-compatible backend
// with reasoning would produce it, plus a redacted block.
func anthRepresentativeEvents() []translate.Event {
	var e translate.Emitter
	var d []translate.Event
	d = e.Start(d, "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "gpt-4o-2024-08-06", &translate.Usage{InputTokens: 1500, CacheReadTokens: 1024})
	d = e.Thinking(d, "The user wants the weather. ")
	d = e.Thinking(d, "I'll call the tool.")
	d = e.Signature(d, "c2lnbmF0dXJl")
	d = e.Text(d, "Checking \"Paris\" <now> & then\nreporting…")
	d = e.ToolStart(d, "call_ZdsDNL5i3dJdqkL9wPzZ8yk4", "get_weather")
	d = e.ToolArgs(d, `{"location":`)
	d = e.ToolArgs(d, ` "Paris, FR"}`)
	d = e.ToolStart(d, "call_noargs", "get_time")
	d = e.Redacted(d, "opaque==")
	d = e.SetUsage(d, translate.Usage{InputTokens: 1500, CacheReadTokens: 1024, OutputTokens: 20})
	return e.Stop(d, "", "", &translate.Usage{InputTokens: 1500, CacheReadTokens: 1024, CacheWriteTokens: 100, OutputTokens: 42})
}

func TestAnthropicStreamEncodeGolden(t *testing.T) {
	req := &translate.Request{Model: "claude-sonnet-4-5"}
	out := anthEncodeSSE(t, req, anthRepresentativeEvents())
	translate.AnthGolden(t, "anthropic/stream_encode.sse", out)

	// Every event carries its name, equal to data.type, and valid JSON.
	var p stream.SSEParser
	var names []string
	err := p.Feed(out, func(name string, data []byte) {
		names = append(names, name)
		if !gjson.ValidBytes(data) {
			t.Errorf("invalid JSON in %s: %s", name, data)
		}
		if typ := gjson.GetBytes(data, "type").Str; typ != name {
			t.Errorf("event %q carries data.type %q", name, typ)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if names[0] != "message_start" || names[len(names)-2] != "message_delta" || names[len(names)-1] != "message_stop" {
		t.Errorf("event names = %v", names)
	}
}

func TestAnthropicStreamEncodeEdges(t *testing.T) {
	req := &translate.Request{Model: "claude-x"}
	tests := []struct {
		name  string
		evs   []translate.Event
		names string
		check func(t *testing.T, out []byte)
	}{
		{
			name:  "error before anything",
			evs:   []translate.Event{{Type: translate.EventError, Err: &translate.Error{Status: 429, Kind: translate.ErrRateLimit, Message: "slow down"}}},
			names: "error",
			check: func(t *testing.T, out []byte) {
				want := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n"
				if string(out) != want {
					t.Errorf("got %q", out)
				}
			},
		},
		{
			name:  "stop without start still writes message_start, message_delta, message_stop",
			evs:   []translate.Event{{Type: translate.EventMessageStop, Stop: translate.StopError}},
			names: "message_start message_delta message_stop",
			check: func(t *testing.T, out []byte) {
				if !bytes.Contains(out, []byte(`"stop_reason":"end_turn"`)) || !regexp.MustCompile(`"id":"msg_[0-9a-f]{24}"`).Match(out) {
					t.Errorf("got %s", out)
				}
			},
		},
		{
			name: "open block closed before the stop, events after the end ignored",
			evs: []translate.Event{
				{Type: translate.EventMessageStart, ID: "m1"},
				{Type: translate.EventBlockStart, Index: 0, Block: translate.BlockText},
				{Type: translate.EventBlockDelta, Index: 0, Block: translate.BlockText, Text: "a"},
				{Type: translate.EventBlockDelta, Index: 5, Block: translate.BlockText, Text: "stray"},
				{Type: translate.EventMessageStop, Stop: translate.StopMaxTokens},
				{Type: translate.EventBlockStart, Index: 1, Block: translate.BlockText},
				{Type: translate.EventError, Err: &translate.Error{Status: 500, Kind: translate.ErrAPI, Message: "late"}},
			},
			names: "message_start content_block_start content_block_delta content_block_stop message_delta message_stop",
			check: func(t *testing.T, out []byte) {
				if bytes.Contains(out, []byte("stray")) || !bytes.Contains(out, []byte(`"stop_reason":"max_tokens"`)) {
					t.Errorf("got %s", out)
				}
			},
		},
		{
			name: "error mid block",
			evs: []translate.Event{
				{Type: translate.EventMessageStart, ID: "m1"},
				{Type: translate.EventBlockStart, Index: 0, Block: translate.BlockToolCall, ID: "t", Name: "n"},
				{Type: translate.EventBlockDelta, Index: 0, Block: translate.BlockToolCall, Text: `{"a":`},
				{Type: translate.EventError, Err: &translate.Error{Status: 529, Kind: translate.ErrOverloaded, Message: "Overloaded"}},
			},
			names: "message_start content_block_start content_block_delta error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := anthEncodeSSE(t, req, tt.evs)
			var p stream.SSEParser
			var names []string
			_ = p.Feed(out, func(name string, _ []byte) { names = append(names, name) })
			if got := strings.Join(names, " "); got != tt.names {
				t.Errorf("events = %s, want %s", got, tt.names)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

// anthNormalize removes from decoded events what an Anthropic stream does
// not carry back: usage-only events, the output placeholder of
// message_start, the reasoning token count, and the model name (the encoder
// reports the client's).
func anthNormalize(evs []translate.Event, model string) []translate.Event {
	var out []translate.Event
	for _, e := range evs {
		if e.Type == translate.EventUsage {
			continue
		}
		if e.Usage != nil {
			u := *e.Usage
			u.ReasoningTokens = 0
			if e.Type == translate.EventMessageStart {
				u.OutputTokens = 0
			}
			e.Usage = &u
		}
		if e.Type == translate.EventMessageStart {
			// The message is answered under the client's model, and
			// under an id of Anthropic's shape (another protocol's
			// id gets a stand-in).
			e.Model = model
			e.ID = translate.OwnID(e.ID, "msg_")
		}
		if e.Err != nil {
			// The status of an in-stream error is implied by its type.
			err := *e.Err
			err.Status = translate.StatusForKind(err.Kind)
			e.Err = &err
		}
		out = append(out, e)
	}
	return out
}

// TestAnthropicStreamRoundTrip encodes IR events as an Anthropic stream and
// decodes that stream again: the IR must come back unchanged.
func TestAnthropicStreamRoundTrip(t *testing.T) {
	req := &translate.Request{Model: "claude-client-model"}
	inputs := map[string][]translate.Event{"representative": anthRepresentativeEvents()}
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "anthropic"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sse") {
			inputs[e.Name()] = anthDecodeSSE(t, translate.AnthFixture(t, e.Name()), 0)
		}
	}
	for name, evs := range inputs {
		t.Run(name, func(t *testing.T) {
			out := anthEncodeSSE(t, req, evs)
			back := anthDecodeSSE(t, out, 0)
			anthCheckGrammar(t, back)
			want := anthNormalize(evs, req.Model)
			got := anthNormalize(back, req.Model)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip changed the events:\n%s\nwant\n%s\nwire:\n%s", translate.AnthDumpEvents(got), translate.AnthDumpEvents(want), out)
			}
		})
	}
}

// TestAnthropicStreamTranscoder runs the decoder and encoder through the
// stream package's Transcoder, fed in small chunks: Anthropic in, Anthropic
// out must keep every delta.
func TestAnthropicStreamTranscoder(t *testing.T) {
	c := anthCodec(t)
	body := translate.AnthFixture(t, "stream_tool_use.sse")
	var out []byte
	tc := stream.NewTranscoder(&stream.SSEParser{}, c.NewStreamDecoder(), c.NewStreamEncoder(&translate.Request{Model: "m"}), &stream.SSEOutput{})
	for i := 0; i < len(body); i += 13 {
		out = append(out, tc.Write(body[i:min(i+13, len(body))])...)
	}
	out = append(out, tc.Close()...)
	for _, want := range []string{
		`"partial_json":"{\"locati"`, `"partial_json":"on\": \"P"`, `"partial_json":"ar"`, `"partial_json":"is\"}"`,
		`"partial_json":"{}"`, `"stop_reason":"tool_use"`,
		`"usage":{"input_tokens":377,"cache_creation_input_tokens":1200,"cache_read_input_tokens":30000,"output_tokens":65}`,
		"event: message_stop\n",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

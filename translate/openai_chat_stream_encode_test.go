package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// oaiFrames records what a stream encoder writes.
type oaiFrames struct {
	names  []string
	frames []string
}

func (f *oaiFrames) WriteFrame(name string, data []byte) {
	f.names = append(f.names, name)
	f.frames = append(f.frames, string(data)) // data is only valid during the call
}

// sse renders the frames as the SSE body a client would read.
func (f *oaiFrames) sse() []byte {
	var b bytes.Buffer
	for _, d := range f.frames {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.Bytes()
}

func oaiEncodeEvents(req *Request, evs []Event) *oaiFrames {
	enc := openAIChatCodec{}.NewStreamEncoder(req)
	f := &oaiFrames{}
	for i := range evs {
		enc.Encode(f, &evs[i])
	}
	return f
}

// oaiAgentResponse is a response as an Anthropic backend would stream it to
// a Claude Code-like exchange: signed thinking, text, two tool calls.
func oaiAgentResponse() *Response {
	return &Response{
		ID:    "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
		Model: "claude-sonnet-4-5",
		Parts: []Part{
			{Type: PartThinking, Text: "The user wants the weather.", Signature: "EqQBCkYIBxgC"},
			{Type: PartRedactedThinking, Signature: "EmwKAhgB"},
			{Type: PartText, Text: "Checking <Paris> & \"Rome\"."},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01A", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01B", Name: "get_time", Arguments: `{}`}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 472, OutputTokens: 89, CacheReadTokens: 400, ReasoningTokens: 12},
	}
}

func TestOpenAIChatStreamEncoderGolden(t *testing.T) {
	oaiFixedNow(t)
	evs := ResponseEvents(nil, oaiAgentResponse())
	for _, tt := range []struct {
		name         string
		includeUsage bool
	}{{"stream_encode_agent_usage.sse", true}, {"stream_encode_agent.sse", false}} {
		t.Run(tt.name, func(t *testing.T) {
			f := oaiEncodeEvents(&Request{Model: "gpt-4o", IncludeUsage: tt.includeUsage}, evs)
			golden(t, "openai_chat/"+tt.name, f.sse())

			for i, name := range f.names {
				if name != "" {
					t.Errorf("frame %d has event name %q; OpenAI streams have none", i, name)
				}
			}
			if last := f.frames[len(f.frames)-1]; last != "[DONE]" {
				t.Errorf("last frame %q, want [DONE]", last)
			}
			var finishes, usages int
			for _, fr := range f.frames[:len(f.frames)-1] {
				c := gjson.Parse(fr)
				if c.Get("id").Str != "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG" || c.Get("created").Int() != 1700000000 || c.Get("model").Str != "gpt-4o" || c.Get("object").Str != "chat.completion.chunk" {
					t.Errorf("chunk header differs: %s", fr)
				}
				if strings.Contains(fr, "EqQBCkYIBxgC") || strings.Contains(fr, "EmwKAhgB") {
					t.Errorf("signature leaked: %s", fr)
				}
				if c.Get("choices.0.finish_reason").Str != "" {
					finishes++
				}
				if u := c.Get("usage"); u.IsObject() {
					usages++
					if u.Get("prompt_tokens").Int() != 472 || u.Get("completion_tokens").Int() != 89 || u.Get("total_tokens").Int() != 561 ||
						u.Get("prompt_tokens_details.cached_tokens").Int() != 400 || u.Get("completion_tokens_details.reasoning_tokens").Int() != 12 {
						t.Errorf("usage = %s", u.Raw)
					}
					if len(c.Get("choices").Array()) != 0 {
						t.Errorf("usage chunk must have empty choices: %s", fr)
					}
				} else if u.Exists() != tt.includeUsage {
					t.Errorf("usage key present=%v with include_usage=%v: %s", u.Exists(), tt.includeUsage, fr)
				}
			}
			if finishes != 1 {
				t.Errorf("%d finish chunks, want 1", finishes)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.includeUsage]; usages != want {
				t.Errorf("%d usage chunks, want %d", usages, want)
			}
			first := gjson.Parse(f.frames[0])
			if first.Get("choices.0.delta").Raw != `{"role":"assistant","content":""}` {
				t.Errorf("first chunk = %s", f.frames[0])
			}
		})
	}
}

func TestOpenAIChatStreamEncoderToolIndexes(t *testing.T) {
	evs := ResponseEvents(nil, oaiAgentResponse())
	f := oaiEncodeEvents(&Request{Model: "m"}, evs)
	var got []string
	for _, fr := range f.frames {
		tc := gjson.Get(fr, "choices.0.delta.tool_calls.0")
		if tc.Exists() {
			got = append(got, tc.Raw)
		}
	}
	// The first call's id carries the signed thinking before it.
	firstID := oaiFoldThinking("toolu_01A", []Part{
		{Type: PartThinking, Text: "The user wants the weather.", Signature: "EqQBCkYIBxgC"},
		{Type: PartRedactedThinking, Signature: "EmwKAhgB"},
	})
	want := []string{
		`{"index":0,"id":"` + firstID + `","type":"function","function":{"name":"get_weather","arguments":""}}`,
		`{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}`,
		`{"index":1,"id":"toolu_01B","type":"function","function":{"name":"get_time","arguments":""}}`,
		`{"index":1,"function":{"arguments":"{}"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool call deltas:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOpenAIChatStreamEncoderErrors(t *testing.T) {
	e := &Error{Status: 529, Kind: ErrOverloaded, Message: "Overloaded"}
	t.Run("before any chunk", func(t *testing.T) {
		f := oaiEncodeEvents(&Request{Model: "m", IncludeUsage: true}, []Event{{Type: EventError, Err: e}})
		want := []string{`{"error":{"message":"Overloaded","type":"server_error","param":null,"code":"overloaded"}}`, "[DONE]"}
		if strings.Join(f.frames, "\n") != strings.Join(want, "\n") {
			t.Errorf("frames = %q", f.frames)
		}
	})
	t.Run("mid-stream, then nothing more", func(t *testing.T) {
		var em Emitter
		evs := em.Start(nil, "id1", "m", nil)
		evs = em.Text(evs, "partial")
		evs = append(evs, Event{Type: EventError, Err: e})
		evs = append(evs, Event{Type: EventMessageStop, Stop: StopEndTurn}) // must be ignored
		f := oaiEncodeEvents(&Request{Model: "m"}, evs)
		if len(f.frames) != 4 || !strings.HasPrefix(f.frames[2], `{"error":`) || f.frames[3] != "[DONE]" {
			t.Errorf("frames = %q", f.frames)
		}
	})
	t.Run("start without id gets one, kept for every chunk", func(t *testing.T) {
		var em Emitter
		evs := em.Text(nil, "a") // implicit start with no id
		evs = em.Text(evs, "b")
		evs = em.Stop(evs, "", "", nil)
		f := oaiEncodeEvents(&Request{Model: "m", IncludeUsage: true}, evs)
		id := gjson.Get(f.frames[0], "id").Str
		if !oaiGeneratedID.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		for _, fr := range f.frames[:len(f.frames)-1] {
			if gjson.Get(fr, "id").Str != id {
				t.Errorf("id changed: %s", fr)
			}
		}
		// No usage was known: the client still gets its usage chunk.
		if u := gjson.Get(f.frames[len(f.frames)-2], "usage.total_tokens"); !u.Exists() || u.Int() != 0 {
			t.Errorf("usage chunk = %s", f.frames[len(f.frames)-2])
		}
	})
}

// oaiNormalize strips what an OpenAI Chat stream cannot carry from IR
// events, so a round trip can be compared: the input usage of the message
// start (OpenAI reports usage only at the end), signatures and redacted
// thinking; block indexes are renumbered accordingly.
func oaiNormalize(evs []Event) []Event {
	var out []Event
	skip := map[int]bool{}
	shift := 0
	for _, e := range evs {
		switch {
		case e.Type == EventMessageStart:
			e.Usage = nil
		case e.Type == EventBlockStart && e.Block == BlockToolCall:
			e.ID, _ = oaiUnfoldThinking(e.ID) // the thinking it carries is checked apart
		case e.Block == BlockRedactedThinking:
			if e.Type == EventBlockStart {
				skip[e.Index] = true
				shift++
			}
			continue
		case e.Type == EventBlockDelta && e.Signature != "":
			continue
		case e.Type == EventUsage:
			continue
		}
		if e.Type == EventBlockStart || e.Type == EventBlockDelta || e.Type == EventBlockStop {
			if skip[e.Index] {
				continue
			}
			e.Index -= shift
		}
		out = append(out, e)
	}
	return out
}

// TestOpenAIChatStreamRoundTrip: the decoder reads back, event for event,
// what the encoder wrote.
func TestOpenAIChatStreamRoundTrip(t *testing.T) {
	responses := map[string]*Response{
		"agent": oaiAgentResponse(),
		"text only": {ID: "chatcmpl-x", Model: "m", Parts: []Part{{Type: PartText, Text: "Hello"}}, StopReason: StopMaxTokens,
			Usage: Usage{InputTokens: 3, OutputTokens: 4}},
		"tool call without arguments": {ID: "chatcmpl-y", Model: "m", Parts: []Part{{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "now", Arguments: "{}"}}}, StopReason: StopToolUse},
	}
	for name, resp := range responses {
		t.Run(name, func(t *testing.T) {
			in := ResponseEvents(nil, resp)
			f := oaiEncodeEvents(&Request{Model: resp.Model, IncludeUsage: true}, in)
			dec := openAIChatCodec{}.NewStreamDecoder()
			var out []Event
			for _, fr := range f.frames {
				out = dec.Decode(out, "", []byte(fr))
			}
			out = dec.End(out)
			if got, want := oaiDumpEvents(oaiNormalize(out)), oaiDumpEvents(oaiNormalize(in)); !bytes.Equal(got, want) {
				t.Errorf("round trip:\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

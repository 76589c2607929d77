package translate

import (
	"strings"
	"testing"
)

// oaiDecodeData runs data payloads (one per SSE event, without framing)
// through a fresh stream decoder; end adds the End call.
func oaiDecodeData(end bool, data ...string) []Event {
	d := openAIChatCodec{}.NewStreamDecoder()
	var evs []Event
	for _, s := range data {
		evs = d.Decode(evs, "", []byte(s))
	}
	if end {
		evs = d.End(evs)
	}
	return evs
}

// oaiChunk wraps a choice's delta JSON and finish reason in a chunk.
func oaiChunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

const oaiUsageChunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`

func TestOpenAIChatStreamDecoder(t *testing.T) {
	tests := []struct {
		name string
		data []string
		end  bool
		want string // evString of the events (see emitter_test.go)
	}{
		{"text, finish, usage",
			[]string{oaiChunk(`{"role":"assistant","content":""}`, ""), oaiChunk(`{"content":"Hi"}`, ""), oaiChunk(`{}`, "stop"), oaiUsageChunk, "[DONE]"}, true,
			"start(c1) open0:text d0=Hi close0 stop(end_turn)"},
		{"stop happens on the usage chunk, before [DONE]",
			[]string{oaiChunk(`{"content":"Hi"}`, "length"), oaiUsageChunk}, false,
			"start(c1) open0:text d0=Hi close0 stop(max_tokens)"},
		{"finish without usage waits for [DONE]",
			[]string{oaiChunk(`{"content":"Hi"}`, "stop")}, false,
			"start(c1) open0:text d0=Hi"},
		{"finish without usage stops at End",
			[]string{oaiChunk(`{"content":"Hi"}`, "stop")}, true,
			"start(c1) open0:text d0=Hi close0 stop(end_turn)"},
		{"[DONE] without finish is a natural end",
			[]string{oaiChunk(`{"content":"Hi"}`, ""), "[DONE]"}, false,
			"start(c1) open0:text d0=Hi close0 stop(end_turn)"},
		{"cut stream",
			[]string{oaiChunk(`{"content":"Hi"}`, "")}, true,
			"start(c1) open0:text d0=Hi error(502)"},
		{"nothing at all",
			nil, true,
			"error(502)"},
		{"content_filter",
			[]string{oaiChunk(`{"content":"x"}`, "content_filter"), "[DONE]"}, false,
			"start(c1) open0:text d0=x close0 stop(refusal)"},
		{"refusal deltas end as refusal",
			[]string{oaiChunk(`{"refusal":"No"}`, ""), oaiChunk(`{}`, "stop"), "[DONE]"}, false,
			"start(c1) open0:text d0=No close0 stop(refusal)"},
		{"tool_calls null on a text delta is no call",
			[]string{oaiChunk(`{"content":"hi","tool_calls":null}`, ""), oaiChunk(`{"tool_calls":null}`, "stop"), "[DONE]"}, false,
			"start(c1) open0:text d0=hi close0 stop(end_turn)"},
		{"arguments as an object",
			[]string{oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":{"a":1}}}]}`, "tool_calls"), "[DONE]"}, false,
			"start(c1) open0:tool_callf d0={\"a\":1} close0 stop(tool_use)"},
		{"text after a tool call opens a new block",
			[]string{oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{}"}}]}`, ""), oaiChunk(`{"content":"done"}`, ""), "[DONE]"}, false,
			"start(c1) open0:tool_callf d0={} close0 open1:text d1=done close1 stop(tool_use)"},
		{"interleaved argument fragments fail",
			[]string{
				oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{\"a\""}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":1,"id":"t2","function":{"name":"g","arguments":"{}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`, ""),
				"[DONE]"}, true,
			"start(c1) open0:tool_callf d0={\"a\" close0 open1:tool_callg d1={} error(502)"},
		{"an empty fragment for a finished call is harmless",
			[]string{
				oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":1,"id":"t2","function":{"name":"g","arguments":"{}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":""}}]}`, "tool_calls"),
				"[DONE]"}, false,
			"start(c1) open0:tool_callf d0={} close0 open1:tool_callg d1={} close1 stop(tool_use)"},
		{"every call numbered 0, told apart by id",
			[]string{
				oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{\"a\":"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"arguments":"1}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"index":0,"id":"t2","function":{"name":"g","arguments":"{}"}}]}`, ""),
				"[DONE]"}, false,
			"start(c1) open0:tool_callf d0={\"a\": d0=1} close0 open1:tool_callg d1={} close1 stop(tool_use)"},
		{"calls without index (Gemini compatibility layer)",
			[]string{
				oaiChunk(`{"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"function":{"arguments":"1}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"id":"t2","function":{"name":"g","arguments":"{}"}}]}`, "tool_calls"),
				"[DONE]"}, false,
			"start(c1) open0:tool_callf d0={\"a\": d0=1} close0 open1:tool_callg d1={} close1 stop(tool_use)"},
		{"index -1 for a lone call, then one without index",
			[]string{
				oaiChunk(`{"tool_calls":[{"index":-1,"id":"t1","function":{"name":"f","arguments":"{}"}}]}`, ""),
				oaiChunk(`{"tool_calls":[{"id":"t2","function":{"name":"g","arguments":"{}"}}]}`, ""),
				"[DONE]"}, false,
			"start(c1) open0:tool_callf d0={} close0 open1:tool_callg d1={} close1 stop(tool_use)"},
		{"other choices are ignored",
			[]string{`{"id":"c1","model":"m","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`, "[DONE]"}, false,
			"start(c1) open0:text d0=mine close0 stop(end_turn)"},
		{"error chunk before anything",
			[]string{`{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`}, true,
			"error(529)"},
		{"malformed chunk",
			[]string{oaiChunk(`{"content":"a"}`, ""), `{"choices":[`, oaiChunk(`{"content":"b"}`, "")}, true,
			"start(c1) open0:text d0=a error(502)"},
		{"data that is not an object",
			[]string{`"hello"`}, true,
			"error(502)"},
		{"blank data and events after the end are ignored",
			[]string{"", oaiChunk(`{"content":"a"}`, "stop"), oaiUsageChunk, oaiChunk(`{"content":"late"}`, "")}, true,
			"start(c1) open0:text d0=a close0 stop(end_turn)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evString(oaiDecodeData(tt.end, tt.data...)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestOpenAIChatStreamDecoderDetails(t *testing.T) {
	t.Run("interleaved error message", func(t *testing.T) {
		evs := oaiDecodeData(false,
			oaiChunk(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{"}}]}`, ""),
			oaiChunk(`{"content":"text"}`, ""),
			oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}`, ""))
		last := evs[len(evs)-1]
		if last.Type != EventError || last.Err.Status != 502 || last.Err.Kind != ErrAPI || last.Err.Message != "interleaved tool call arguments are not supported" {
			t.Errorf("last event = %+v %+v", last, last.Err)
		}
	})
	t.Run("error event name", func(t *testing.T) {
		d := openAIChatCodec{}.NewStreamDecoder()
		evs := d.Decode(nil, "error", []byte(`{"message":"model crashed","code":500}`))
		if len(evs) != 1 || evs[0].Type != EventError || evs[0].Err.Message != "model crashed" || evs[0].Err.Status != 500 {
			t.Errorf("events = %s", oaiDumpEvents(evs))
		}
	})
	t.Run("in-stream error keeps its message and code", func(t *testing.T) {
		evs := oaiDecodeData(false, `{"error":{"message":"Rate limit reached for tokens","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)
		e := evs[0].Err
		if e.Status != 429 || e.Kind != ErrRateLimit || e.Code != "rate_limit_exceeded" || e.Message != "Rate limit reached for tokens" {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("malformed chunk message", func(t *testing.T) {
		evs := oaiDecodeData(false, `{"id":"x","choices":[{"delta":{"content":"tru`)
		if e := evs[0].Err; e == nil || !strings.HasPrefix(e.Message, "malformed upstream chunk: {\"id\"") {
			t.Errorf("events = %s", oaiDumpEvents(evs))
		}
	})
	t.Run("generated id for a call without one", func(t *testing.T) {
		evs := oaiDecodeData(false, oaiChunk(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}`, "tool_calls"), "[DONE]")
		if evs[1].Type != EventBlockStart || !oaiGeneratedID.MatchString(evs[1].ID) {
			t.Errorf("tool start = %+v", evs[1])
		}
	})
	t.Run("usage arrives on the finish chunk", func(t *testing.T) {
		evs := oaiDecodeData(false, `{"id":"d","model":"deepseek-chat","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_cache_hit_tokens":8}}`)
		last := evs[len(evs)-1]
		if last.Type != EventMessageStop || last.Usage == nil || *last.Usage != (Usage{InputTokens: 9, OutputTokens: 1, CacheReadTokens: 8}) {
			t.Errorf("events = %s", oaiDumpEvents(evs))
		}
	})
	t.Run("text deltas keep their bytes", func(t *testing.T) {
		evs := oaiDecodeData(false, oaiChunk(`{"content":" spaced \n\"quoted\" \u00e9 "}`, ""))
		if evs[2].Text != " spaced \n\"quoted\" é " {
			t.Errorf("text = %q", evs[2].Text)
		}
	})
}

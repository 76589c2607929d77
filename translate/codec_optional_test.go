package translate

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

// What each registered codec answers through the optional interfaces
// (codec.go), one table per interface, with the default a protocol without
// a codec (or whose codec lacks the interface) gets in the last rows.

// noCodec is a protocol nothing is registered for.
const noCodec Protocol = "no_codec"

// TestOptionalInterfacesImplemented pins which codec answers for itself,
// so that a codec losing a method (a changed signature no longer
// implements the interface) is caught here rather than by a silent
// default.
func TestOptionalInterfacesImplemented(t *testing.T) {
	type has struct{ watch, topLevel, overflow, status, toolNaming, usageTiming, dialect bool }
	for _, tt := range []struct {
		p    Protocol
		want has
	}{
		{ProtocolAnthropic, has{watch: true, topLevel: true, overflow: true, usageTiming: true}},
		{ProtocolOpenAIChat, has{watch: true, topLevel: true, overflow: true, toolNaming: true, dialect: true}},
		{ProtocolOpenAIResponses, has{watch: true, topLevel: true, overflow: true}},
		{ProtocolGemini, has{watch: true, topLevel: true, overflow: true, status: true, toolNaming: true, usageTiming: true}},
		{noCodec, has{}},
	} {
		var got has
		_, got.watch = codecAs[WatchCodec](tt.p)
		_, got.topLevel = codecAs[TopLevelCodec](tt.p)
		_, got.overflow = codecAs[OverflowCodec](tt.p)
		_, got.status = codecAs[StatusCodec](tt.p)
		_, got.toolNaming = codecAs[ToolNamingCodec](tt.p)
		_, got.usageTiming = codecAs[UsageTimingCodec](tt.p)
		_, got.dialect = codecAs[DialectCodec](tt.p)
		if got != tt.want {
			t.Errorf("%s: implements %+v, want %+v", tt.p, got, tt.want)
		}
	}
}

func TestWatchCodecs(t *testing.T) {
	for _, tt := range []struct {
		name     string
		p        Protocol
		events   [][2]string // SSE event name, data
		verdicts []WatchVerdict
		complete bool
		input    int // 0: no usage
	}{
		{"anthropic", ProtocolAnthropic, [][2]string{
			{"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":7}}}`},
			{"ping", `{"type": "ping"`}, // never scanned
			{"message_delta", `{"type":"message_delta","usage":{"output_tokens":2}}`},
			{"message_stop", `{"type":"message_stop"}`},
		}, []WatchVerdict{WatchContinue, WatchContinue, WatchContinue, WatchEnd}, true, 7},
		{"openai chat", ProtocolOpenAIChat, [][2]string{
			{"", `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`},
			{"", `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}`},
			{"", `[DONE]`},
		}, []WatchVerdict{WatchContinue, WatchContinue, WatchEnd}, true, 5},
		{"openai responses", ProtocolOpenAIResponses, [][2]string{
			{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1"}}`},
			{"response.completed", `{"type":"response.completed","sequence_number":1,"response":{"usage":{"input_tokens":4,"output_tokens":1}}}`},
		}, []WatchVerdict{WatchContinue, WatchEnd}, true, 4},
		{"gemini", ProtocolGemini, [][2]string{
			{"", `{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{"promptTokenCount":3}}`},
			{"", `{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":6,"candidatesTokenCount":1}}`},
		}, []WatchVerdict{WatchContinue, WatchContinue}, true, 6},
		{"gemini malformed", ProtocolGemini, [][2]string{{"", `{"candidates":`}}, []WatchVerdict{WatchMalformed}, false, 0},
		{"no codec: the shared checks", noCodec, [][2]string{
			{"", `{"choices":[{"finish_reason":"stop"}],"usage":{"prompt_tokens":5}}`},
			{"", `not json`},
		}, []WatchVerdict{WatchContinue, WatchMalformed}, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := NewStreamWatch(tt.p)
			for i, ev := range tt.events {
				if v := w.Check(ev[0], []byte(ev[1])); v != tt.verdicts[i] {
					t.Fatalf("event %d: verdict %d, want %d", i, v, tt.verdicts[i])
				}
			}
			if w.Complete() != tt.complete {
				t.Errorf("complete %v, want %v", w.Complete(), tt.complete)
			}
			u, ok := w.Usage()
			if ok != (tt.input > 0) || u.InputTokens != tt.input {
				t.Errorf("usage %+v %v, want input %d", u, ok, tt.input)
			}
		})
	}
}

func TestTopLevelCodecs(t *testing.T) {
	for _, tt := range []struct {
		name          string
		p             Protocol
		body          string
		model, stream bool // found
		system, turn  bool // located
		limit         Limit
		dupParam      string // "": no repeat refused
		dupMessage    string
	}{
		{"anthropic", ProtocolAnthropic, `{"model":"m","stream":true,"system":"s","messages":[],"max_tokens":5}`, true, true, true, true, LimitMaxTokens, "", ""},
		{"anthropic repeat", ProtocolAnthropic, `{"model":"m","model":"n"}`, true, false, false, false, LimitCount, "model", "model: duplicate key in the request body; send each field once"},
		{"openai chat", ProtocolOpenAIChat, `{"model":"m","system":"s","messages":[],"max_completion_tokens":5}`, true, false, false, true, LimitMaxCompletionTokens, "", ""},
		{"openai chat repeat", ProtocolOpenAIChat, `{"stream_options":{},"stream_options":{}}`, false, false, false, false, LimitCount, "stream_options", "Duplicate key 'stream_options' in the request body; send each field once."},
		{"openai responses", ProtocolOpenAIResponses, `{"model":"m","instructions":"s","input":[],"max_output_tokens":5}`, true, false, true, true, LimitMaxOutputTokens, "", ""},
		{"gemini", ProtocolGemini, `{"model":"m","stream":true,"system_instruction":{},"contents":[],"generation_config":{"max_output_tokens":5}}`, false, false, true, true, LimitGeminiMaxOutput, "", ""},
		{"gemini repeat inside the config", ProtocolGemini, `{"generationConfig":{"maxOutputTokens":1,"max_output_tokens":2}}`, false, false, false, false, LimitGeminiMaxOutput, "generationConfig.maxOutputTokens", `Invalid JSON payload received. Duplicate field "generation_config.max_output_tokens" (send each field once).`},
		{"no codec: model and stream", noCodec, `{"model":"m","stream":true,"system":"s","messages":[],"max_tokens":5}`, true, true, false, false, LimitMaxTokens, "", ""},
		{"no codec repeat", noCodec, `{"stream":true,"stream":false}`, false, true, false, false, LimitCount, "stream", "Duplicate key 'stream' in the request body; send each field once."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top, e := ScanTopLevel(tt.p, []byte(tt.body))
			checkScanDeferred(t, tt.p, []byte(tt.body), top, e)
			if tt.dupParam != "" {
				if e == nil || e.Param != tt.dupParam || e.Message != tt.dupMessage || e.Status != http.StatusBadRequest {
					t.Fatalf("error %+v, want param %q message %q", e, tt.dupParam, tt.dupMessage)
				}
				return
			}
			if e != nil {
				t.Fatal(e)
			}
			if top.ModelAt.Found() != tt.model || top.Stream.Exists() != tt.stream {
				t.Errorf("model %v stream %v, want %v %v", top.ModelAt.Found(), top.Stream.Exists(), tt.model, tt.stream)
			}
			if top.SystemAt.Found() != tt.system || top.MessagesAt.Found() != tt.turn {
				t.Errorf("system %v messages %v, want %v %v", top.SystemAt.Found(), top.MessagesAt.Found(), tt.system, tt.turn)
			}
			if tt.limit < LimitCount && !top.LimitsAt[tt.limit].Found() {
				t.Errorf("limit %s not located", LimitNames[tt.limit])
			}
			if top.ModelInURL != (tt.p == ProtocolGemini) {
				t.Errorf("ModelInURL %v", top.ModelInURL)
			}
		})
	}
}

func TestOverflowCodecs(t *testing.T) {
	overflow := &Error{Status: 400, Kind: ErrContextOverflow, Message: "upstream words", PromptTokens: 300, ContextLimit: 200}
	for _, tt := range []struct {
		p                    Protocol
		message, code, param string
		worded               *Error // an overflow the protocol's clients read as one
	}{
		{ProtocolAnthropic, "prompt is too long: 300 tokens > 200 maximum", "", "",
			&Error{Kind: ErrContextOverflow, Message: "prompt is too long: 3 tokens > 2 maximum"}},
		{ProtocolOpenAIChat, "This model's maximum context length is 200 tokens. However, your messages resulted in 300 tokens. Please reduce the length of the messages.", "context_length_exceeded", "messages",
			&Error{Kind: ErrContextOverflow, Code: "context_length_exceeded"}},
		{ProtocolOpenAIResponses, "This model's maximum context length is 200 tokens. However, your messages resulted in 300 tokens. Please reduce the length of the messages.", "context_length_exceeded", "input",
			&Error{Kind: ErrContextOverflow, Code: "context_length_exceeded"}},
		{ProtocolGemini, "The input token count (300) exceeds the maximum number of tokens allowed (200).", "", "",
			&Error{Kind: ErrContextOverflow, Message: "The input token count (3) exceeds ..."}},
		{noCodec, "This model's maximum context length is 200 tokens. However, your messages resulted in 300 tokens. Please reduce the length of the messages.", "context_length_exceeded", "messages",
			&Error{Kind: ErrContextOverflow, Code: "context_length_exceeded"}},
	} {
		c := overflow.forClient(tt.p)
		if c == overflow || c.Kind != ErrInvalidRequest || c.Status != http.StatusBadRequest || c.Message != tt.message || c.Code != tt.code || c.Param != tt.param {
			t.Errorf("%s: %+v, want %q code %q param %q", tt.p, c, tt.message, tt.code, tt.param)
		}
		if overflow.Kind != ErrContextOverflow || overflow.Message != "upstream words" {
			t.Fatalf("%s: the overflow was modified: %+v", tt.p, overflow)
		}
		if !tt.worded.OverflowWordedFor(tt.p) {
			t.Errorf("%s: %+v not worded for its clients", tt.p, tt.worded)
		}
		if overflow.OverflowWordedFor(tt.p) {
			t.Errorf("%s: the upstream's words pass for the protocol's", tt.p)
		}
	}
}

func TestStatusCodecs(t *testing.T) {
	for _, tt := range []struct {
		p    Protocol
		e    *Error
		want int
	}{
		{ProtocolGemini, &Error{Status: 529, Kind: ErrOverloaded}, http.StatusServiceUnavailable},
		{ProtocolGemini, &Error{Status: 429, Kind: ErrRateLimit}, 429},
		{ProtocolAnthropic, &Error{Status: 529, Kind: ErrOverloaded}, 529},
		{ProtocolOpenAIChat, &Error{Kind: ErrRateLimit}, StatusForKind(ErrRateLimit)},
		{noCodec, &Error{Status: 529, Kind: ErrOverloaded}, 529},
	} {
		if got := ClientStatus(tt.p, tt.e); got != tt.want {
			t.Errorf("%s %+v: %d, want %d", tt.p, tt.e, got, tt.want)
		}
	}
}

func TestToolNamingCodecs(t *testing.T) {
	for _, tt := range []struct {
		p        Protocol
		format   ToolCallFormat // of the result
		dotsKept bool           // "fs.read" is sent as it is
	}{
		{ProtocolOpenAIChat, ToolCallsAuto, false},
		{ProtocolGemini, ToolCallsNative, true},
		{ProtocolAnthropic, ToolCallsNative, false},
		{ProtocolOpenAIResponses, ToolCallsNative, false},
		{noCodec, ToolCallsNative, false},
	} {
		d := ToolNaming(tt.p, nil)
		if d.ToolCallFormat() != tt.format || !d.KeepToolIDs || (d.BackendToolName("fs.read") == "fs.read") != tt.dotsKept {
			t.Errorf("%s: %+v", tt.p, d)
		}
		if ToolNaming(tt.p, nil) == d {
			t.Errorf("%s: the same Dialect twice", tt.p)
		}
	}
}

// TestUsageTimingCodecs: a translated stream gets an input estimate when
// its client's protocol reports the input early and its backend's does not
// report it at its start; never for a complete answer.
func TestUsageTimingCodecs(t *testing.T) {
	count := func(*Request) int { return 42 }
	ps := []Protocol{ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses, ProtocolGemini}
	early := map[Protocol]bool{ProtocolAnthropic: true, ProtocolGemini: true}
	for _, client := range ps {
		for _, backend := range ps {
			want := 0
			if early[client] && backend != ProtocolAnthropic {
				want = 42
			}
			for _, stream := range []bool{true, false} {
				c, _ := Lookup(client)
				b, _ := Lookup(backend)
				ir := &Request{Model: "m", Stream: stream, MaxTokens: 10, Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi"}}}}}
				_, got, err := TranslateRequest(nil, ir, &RequestRoute{Client: c, Backend: b, BackendModel: "b", CountInput: count})
				if err != nil {
					t.Fatalf("%s to %s: %v", client, backend, err)
				}
				if !stream && got.InputTokensEstimate != 0 || stream && got.InputTokensEstimate != want {
					t.Errorf("%s to %s, stream %v: estimate %d, want %d", client, backend, stream, got.InputTokensEstimate, want)
				}
			}
		}
	}
}

func TestBackendCodec(t *testing.T) {
	d := &Dialect{MaxTokensField: "max_tokens"}
	for _, tt := range []struct {
		p       Protocol
		d       *Dialect
		derived bool // not the registered codec
		ok      bool
	}{
		{ProtocolOpenAIChat, d, true, true},
		{ProtocolOpenAIChat, nil, false, true},
		{ProtocolAnthropic, d, false, true},
		{noCodec, d, false, false},
	} {
		c, ok := BackendCodec(tt.p, tt.d)
		reg, _ := Lookup(tt.p)
		if ok != tt.ok || ok && (c != reg) != tt.derived {
			t.Errorf("%s %v: %v %v, want derived %v ok %v", tt.p, tt.d, c, ok, tt.derived, tt.ok)
		}
	}
	c, _ := BackendCodec(ProtocolOpenAIChat, d)
	body, err := c.EncodeRequest(&Request{Model: "m", MaxTokens: 5, Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi"}}}}})
	if err != nil || !gjson.GetBytes(body, "max_tokens").Exists() || gjson.GetBytes(body, "max_completion_tokens").Exists() {
		t.Errorf("the dialect's codec does not apply it: %s %v", body, err)
	}
}

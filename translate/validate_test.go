package translate

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// validationBase is a valid request per protocol.
var validationBase = map[Protocol]string{
	ProtocolAnthropic:       `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
	ProtocolOpenAIChat:      `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	ProtocolOpenAIResponses: `{"model":"m","input":"hi"}`,
	ProtocolGemini:          `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
}

// TestDecodeRequestValidation checks each field louter reads, with each
// kind of bad value, in each client protocol: a 400 invalid-request error
// naming the field, worded as the provider words it, and the client's
// error body carrying the field where its SDK looks.
func TestDecodeRequestValidation(t *testing.T) {
	cases := []struct {
		proto  Protocol
		member string // replaces or adds a member: `"field":value`
		param  string // the field the error must name
		want   string // a part of the message
	}{
		// Anthropic Messages.
		{ProtocolAnthropic, `"max_tokens":-1`, "max_tokens", "max_tokens: Input should be greater than or equal to 1"},
		{ProtocolAnthropic, `"max_tokens":0`, "max_tokens", "greater than or equal to 1"},
		{ProtocolAnthropic, `"max_tokens":"abc"`, "max_tokens", "max_tokens: Input should be a valid integer"},
		{ProtocolAnthropic, `"max_tokens":1e300`, "max_tokens", "less than or equal to 2147483647"},
		{ProtocolAnthropic, `"max_tokens":1.5`, "max_tokens", "fractional part"},
		{ProtocolAnthropic, `"max_tokens":true`, "max_tokens", "valid integer"},
		{ProtocolAnthropic, `"stream":"yes"`, "stream", "stream: Input should be a valid boolean"},
		{ProtocolAnthropic, `"stream":1`, "stream", "valid boolean"},
		{ProtocolAnthropic, `"tools":"x"`, "tools", "tools: Input should be a valid list"},
		{ProtocolAnthropic, `"system":12`, "system", "system: Input should be a valid string or a valid list"},
		{ProtocolAnthropic, `"messages":"hi"`, "messages", "messages: Input should be a valid list"},
		{ProtocolAnthropic, `"messages":[]`, "messages", "at least one message"},
		{ProtocolAnthropic, `"temperature":1.5`, "temperature", "less than or equal to 1"},
		{ProtocolAnthropic, `"temperature":-0.1`, "temperature", "greater than or equal to 0"},
		{ProtocolAnthropic, `"temperature":"hot"`, "temperature", "valid number"},
		{ProtocolAnthropic, `"top_p":2`, "top_p", "less than or equal to 1"},
		{ProtocolAnthropic, `"top_k":-1`, "top_k", "greater than or equal to 0"},
		{ProtocolAnthropic, `"top_k":2.5`, "top_k", "fractional part"},
		{ProtocolAnthropic, `"stop_sequences":"END"`, "stop_sequences", "valid list"},
		{ProtocolAnthropic, `"stop_sequences":["a",3]`, "stop_sequences.1", "valid string"},
		{ProtocolAnthropic, `"metadata":"x"`, "metadata", "valid dictionary"},
		{ProtocolAnthropic, `"tool_choice":"auto"`, "tool_choice", "valid dictionary"},
		{ProtocolAnthropic, `"thinking":true`, "thinking", "valid dictionary"},
		{ProtocolAnthropic, `"model":7`, "model", "model"},

		// OpenAI Chat Completions.
		{ProtocolOpenAIChat, `"max_tokens":-1`, "max_tokens", "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got -1 instead."},
		{ProtocolOpenAIChat, `"max_tokens":"abc"`, "max_tokens", "Invalid type for 'max_tokens': expected an integer, but got a string instead."},
		{ProtocolOpenAIChat, `"max_tokens":1e300`, "max_tokens", "integer above maximum value"},
		{ProtocolOpenAIChat, `"max_tokens":1.5`, "max_tokens", "expected an integer, but got a decimal"},
		{ProtocolOpenAIChat, `"max_completion_tokens":0`, "max_completion_tokens", "below minimum value"},
		{ProtocolOpenAIChat, `"stream":"yes"`, "stream", "expected a boolean, but got a string"},
		{ProtocolOpenAIChat, `"tools":"x"`, "tools", "expected an array"},
		{ProtocolOpenAIChat, `"messages":{}`, "messages", "expected an array, but got an object"},
		{ProtocolOpenAIChat, `"messages":[]`, "messages", "at least one message"},
		{ProtocolOpenAIChat, `"temperature":3`, "temperature", "decimal above maximum value. Expected a value <= 2, but got 3 instead."},
		{ProtocolOpenAIChat, `"temperature":"hot"`, "temperature", "expected a decimal"},
		{ProtocolOpenAIChat, `"top_p":-1`, "top_p", "decimal below minimum value"},
		{ProtocolOpenAIChat, `"presence_penalty":2.5`, "presence_penalty", "above maximum value"},
		{ProtocolOpenAIChat, `"frequency_penalty":"x"`, "frequency_penalty", "expected a decimal"},
		{ProtocolOpenAIChat, `"seed":1.5`, "seed", "expected an integer"},
		{ProtocolOpenAIChat, `"n":0`, "n", "below minimum value"},
		{ProtocolOpenAIChat, `"top_k":-2`, "top_k", "below minimum value"},
		{ProtocolOpenAIChat, `"parallel_tool_calls":"no"`, "parallel_tool_calls", "expected a boolean"},
		{ProtocolOpenAIChat, `"user":5`, "user", "expected a string"},

		// OpenAI Responses.
		{ProtocolOpenAIResponses, `"max_output_tokens":-1`, "max_output_tokens", "integer below minimum value"},
		{ProtocolOpenAIResponses, `"max_output_tokens":"abc"`, "max_output_tokens", "expected an integer, but got a string"},
		{ProtocolOpenAIResponses, `"max_output_tokens":1e300`, "max_output_tokens", "above maximum value"},
		{ProtocolOpenAIResponses, `"max_output_tokens":1.5`, "max_output_tokens", "expected an integer"},
		{ProtocolOpenAIResponses, `"stream":"yes"`, "stream", "expected a boolean"},
		{ProtocolOpenAIResponses, `"tools":"x"`, "tools", "expected an array"},
		{ProtocolOpenAIResponses, `"input":12`, "input", "expected one of a string or an array, but got an integer"},
		{ProtocolOpenAIResponses, `"instructions":12`, "instructions", "expected a string"},
		{ProtocolOpenAIResponses, `"temperature":2.5`, "temperature", "above maximum value"},
		{ProtocolOpenAIResponses, `"top_p":"x"`, "top_p", "expected a decimal"},

		// Gemini.
		{ProtocolGemini, `"generationConfig":{"maxOutputTokens":-1},`, "generationConfig.maxOutputTokens", "'generation_config.max_output_tokens'"},
		{ProtocolGemini, `"generationConfig":{"maxOutputTokens":"abc"},`, "generationConfig.maxOutputTokens", `Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), "abc"`},
		{ProtocolGemini, `"generationConfig":{"maxOutputTokens":1e300},`, "generationConfig.maxOutputTokens", "must be at most 2147483647"},
		{ProtocolGemini, `"generationConfig":{"maxOutputTokens":1.5},`, "generationConfig.maxOutputTokens", "(TYPE_INT32), 1.5"},
		{ProtocolGemini, `"generation_config":{"max_output_tokens":"abc"},`, "generationConfig.maxOutputTokens", "generation_config.max_output_tokens"},
		{ProtocolGemini, `"generationConfig":{"temperature":3},`, "generationConfig.temperature", "must be at most 2"},
		{ProtocolGemini, `"generationConfig":{"temperature":"hot"},`, "generationConfig.temperature", "(TYPE_FLOAT)"},
		{ProtocolGemini, `"generationConfig":{"topP":1.5},`, "generationConfig.topP", "generation_config.top_p"},
		{ProtocolGemini, `"generationConfig":{"topK":-1},`, "generationConfig.topK", "must be at least 0"},
		{ProtocolGemini, `"generationConfig":{"seed":"x"},`, "generationConfig.seed", "(TYPE_INT32)"},
		{ProtocolGemini, `"generationConfig":{"candidateCount":0},`, "generationConfig.candidateCount", "must be at least 1"},
		{ProtocolGemini, `"generationConfig":{"stopSequences":"END"},`, "generationConfig.stopSequences", "generation_config.stop_sequences"},
		{ProtocolGemini, `"generationConfig":{"responseMimeType":5},`, "generationConfig.responseMimeType", "(TYPE_STRING)"},
		{ProtocolGemini, `"generationConfig":"x",`, "generationConfig", "'generation_config'"},
		{ProtocolGemini, `"tools":"x",`, "tools", "Invalid value at 'tools'"},
		{ProtocolGemini, `"toolConfig":"x",`, "toolConfig", "'tool_config'"},
		{ProtocolGemini, `"systemInstruction":12,`, "systemInstruction", "'system_instruction'"},
		{ProtocolGemini, `"contents":{},`, "contents", "Invalid value at 'contents'"},
		{ProtocolGemini, `"contents":[],`, "contents", "contents is not specified"},
		{ProtocolGemini, `"model":5,`, "model", "'model'"},
	}
	for _, tc := range cases {
		t.Run(string(tc.proto)+"/"+tc.member, func(t *testing.T) {
			body := validationBody(tc.proto, tc.member)
			codec, _ := Lookup(tc.proto)
			_, err := codec.DecodeRequest([]byte(body))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("DecodeRequest(%s) = %v, want a 400", body, err)
			}
			if e.Status != 400 || e.Kind != ErrInvalidRequest || e.Param != tc.param || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %d %s param %q %q, want param %q and %q", e.Status, e.Kind, e.Param, e.Message, tc.param, tc.want)
			}
			checkClientFieldError(t, tc.proto, codec.EncodeError(e), tc.param)
		})
	}
}

// validationBody puts member (`"field":value`) into the protocol's valid
// request, replacing the member of that name if there is one.
func validationBody(p Protocol, member string) string {
	member = strings.TrimSuffix(member, ",")
	colon := strings.Index(member, `":`)
	field, raw := member[1:colon], member[colon+2:]
	out, err := sjson.SetRaw(validationBase[p], strings.ReplaceAll(field, ".", `\.`), raw)
	if err != nil {
		panic(err)
	}
	return out
}

// checkClientFieldError checks the client's error body names the field
// where its SDK reads it.
func checkClientFieldError(t *testing.T, p Protocol, body []byte, param string) {
	t.Helper()
	root := gjson.ParseBytes(body)
	switch p {
	case ProtocolAnthropic:
		if root.Get("type").Str != "error" || root.Get("error.type").Str != "invalid_request_error" || !strings.HasPrefix(root.Get("error.message").Str, param) {
			t.Errorf("Anthropic body %s", body)
		}
	case ProtocolOpenAIChat, ProtocolOpenAIResponses:
		if root.Get("error.type").Str != "invalid_request_error" || root.Get("error.param").Str != param {
			t.Errorf("OpenAI body %s", body)
		}
	case ProtocolGemini:
		if root.Get("error.code").Int() != 400 || root.Get("error.status").Str != "INVALID_ARGUMENT" ||
			root.Get("error.details.0.fieldViolations.0.field").Str != geminiSnake(param) {
			t.Errorf("Gemini body %s", body)
		}
	}
}

// TestDecodeRequestValidValues checks that the bounds themselves and the
// values real clients send are accepted.
func TestDecodeRequestValidValues(t *testing.T) {
	cases := []struct {
		proto  Protocol
		member string
	}{
		{ProtocolAnthropic, `"max_tokens":1`},
		{ProtocolAnthropic, `"max_tokens":128000`},
		{ProtocolAnthropic, `"max_tokens":2147483647`},
		{ProtocolAnthropic, `"max_tokens":32000.0`},
		{ProtocolAnthropic, `"temperature":0`},
		{ProtocolAnthropic, `"temperature":1`},
		{ProtocolAnthropic, `"stream":false`},
		{ProtocolAnthropic, `"system":null`},
		{ProtocolAnthropic, `"top_k":0`},
		{ProtocolOpenAIChat, `"temperature":2`},
		{ProtocolOpenAIChat, `"max_tokens":null`},
		{ProtocolOpenAIChat, `"top_k":-1`},
		{ProtocolOpenAIChat, `"seed":-5`},
		{ProtocolOpenAIChat, `"presence_penalty":-2`},
		{ProtocolOpenAIResponses, `"max_output_tokens":16`},
		{ProtocolOpenAIResponses, `"input":[]`},
		{ProtocolGemini, `"generationConfig":{"maxOutputTokens":8192,"temperature":0,"topP":1,"topK":40.0,"seed":-1,"presencePenalty":-0.5},`},
	}
	for _, tc := range cases {
		body := validationBody(tc.proto, tc.member)
		codec, _ := Lookup(tc.proto)
		if _, err := codec.DecodeRequest([]byte(body)); err != nil {
			t.Errorf("DecodeRequest(%s): %v", body, err)
		}
	}
}

// TestScanTopLevel checks the duplicate-member scan every request goes
// through before it is routed.
func TestScanTopLevel(t *testing.T) {
	cases := []struct {
		proto Protocol
		body  string
		param string // "" when the body is accepted
	}{
		{ProtocolAnthropic, `{"model":"a","messages":[],"model":"b"}`, "model"},
		{ProtocolAnthropic, `{"model":"a","stream":false,"stream":true}`, "stream"},
		{ProtocolAnthropic, `{"model":"a","max_tokens":1,"max_tokens":100000}`, "max_tokens"},
		{ProtocolAnthropic, `{"model":"a","mod\u0065l":"b"}`, "model"},
		{ProtocolAnthropic, `{"model":"a","messages":[{"model":"x"}],"metadata":{"model":"y"}}`, ""},
		{ProtocolAnthropic, `{"model":"a","temperature":1,"temperature":0}`, ""}, // not acted on: the decoder reads the last
		{ProtocolOpenAIChat, `{"model":"a","max_completion_tokens":1,"max_completion_tokens":2}`, "max_completion_tokens"},
		{ProtocolOpenAIChat, `{"model":"a","max_tokens":1,"max_completion_tokens":2}`, ""},
		{ProtocolOpenAIChat, `{"stream":true,"model":"a","stream":false}`, "stream"},
		{ProtocolOpenAIResponses, `{"model":"a","max_output_tokens":1,"max_output_tokens":2}`, "max_output_tokens"},
		{ProtocolOpenAIResponses, `{"model":"a","model":"a"}`, "model"},
		{ProtocolGemini, `{"generationConfig":{},"generation_config":{}}`, "generationConfig"},
		{ProtocolGemini, `{"generationConfig":{"maxOutputTokens":1,"max_output_tokens":2}}`, "generationConfig.maxOutputTokens"},
		{ProtocolGemini, `{"generationConfig":{"maxOutputTokens":1},"contents":[]}`, ""},
		{ProtocolGemini, `{"model":"a","model":"b"}`, ""}, // the model is in the URL
	}
	for _, tc := range cases {
		top, e := ScanTopLevel(tc.proto, []byte(tc.body))
		checkScanDeferred(t, tc.proto, []byte(tc.body), top, e)
		switch {
		case tc.param == "" && e != nil:
			t.Errorf("%s %s: %v", tc.proto, tc.body, e)
		case tc.param != "" && (e == nil || e.Status != 400 || e.Param != tc.param || !strings.Contains(strings.ToLower(e.Message), "duplicate")):
			t.Errorf("%s %s: got %+v, want a 400 naming %s", tc.proto, tc.body, e, tc.param)
		case tc.param == "" && tc.proto != ProtocolGemini && top.Model.Str != "a":
			t.Errorf("%s %s: model %q", tc.proto, tc.body, top.Model.Str)
		}
	}
	top, _ := ScanTopLevel(ProtocolOpenAIChat, []byte(`{"stream":true,"model":"m"}`))
	if top.Stream.Type != gjson.True || top.Model.Str != "m" {
		t.Errorf("top = %+v", top)
	}
}

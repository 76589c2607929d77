package translate

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// scanTopLevelBodies are bodies ScanTopLevel must accept or refuse exactly
// as gjson.ValidBytes does (it replaced a ValidBytes pass).
var scanTopLevelBodies = []string{
	``, ` `, `{`, `}`, `{}`, ` {} `, `{} x`, `{}{}`, `[]`, `"s"`, `1`, `null`, `tru`,
	`{"model":"a"}`, `{"model":"a",}`, `{"model" "a"}`, `{"model":}`, `{model:"a"}`,
	`{"a":[1,2,{"b":null}],"model":"m"}`, `{"a":[1,2,{"b":nul}],"model":"m"}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u00e9"}`, "{\"a\":\"\x01\"}", `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+5}`,
	`{"a":{"b":{"c":[[[]]]}}}`, `{"a":{"b":{"c":[[[]]}}}`, `{"a":[}`, `{"a":{]}`,
	`{"generationConfig":{"maxOutputTokens":1,}}`, `{"generationConfig":{"maxOutputTokens":1}}`,
	`{"generationConfig":{"maxOutputTokens":1} `, `{"generationConfig":[1,2]}`,
	`{"model":"a","model":"b"`, `{"model":"a","model":"b"}x`,
	// What ScanTopLevelDeferred skips unchecked (system and messages, and
	// the other protocols' names for them) holding invalid JSON, before a
	// duplicate, invalid UTF-8 or the end.
	`{"model":"a","messages":[1 2],"model":"b"}`, `{"messages":["a\"],"model":"x"}`, `{"messages":"\q","model":"a"}`,
	`{"system":{"a":1,},"model":"a"}`, "{\"system\":\"\x01\",\"x\":\"\xff\"}", `{"messages":[}],"model":"a"}`,
	`{"contents":[{"parts":[nul]}],"generationConfig":{"maxOutputTokens":1,"maxOutputTokens":2}}`,
	`{"input":"\\","instructions":["\\\""],"model":"a","model":"b"}`, `{"messages":[{"a":"]"}],"messages":[1,]}`,
	`{"messages":"\u00zz"}`, `{"messages":["\\\"]}`, `{"system":5,"system":[}`,
}

// TestScanTopLevelValidates checks that ScanTopLevel refuses exactly the
// bodies gjson.ValidBytes refuses, with the handler's error.
func TestScanTopLevelValidates(t *testing.T) {
	for _, p := range []Protocol{ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses, ProtocolGemini} {
		for _, body := range scanTopLevelBodies {
			checkScanValidates(t, p, []byte(body))
		}
	}
}

func checkScanValidates(t *testing.T, p Protocol, body []byte) {
	t.Helper()
	top, e := ScanTopLevel(p, body)
	checkScanDeferred(t, p, body, top, e)
	notJSON := e != nil && e.Message == "louter: the request body is not valid JSON"
	if notJSON == gjson.ValidBytes(body) {
		t.Errorf("%s %q: error %v, gjson.ValidBytes %v", p, body, e, gjson.ValidBytes(body))
	}
	if notJSON && e.Status != 400 {
		t.Errorf("%s %q: status %d", p, body, e.Status)
	}
	// Valid JSON is refused for invalid UTF-8 exactly when it has some.
	notUTF8 := e != nil && strings.Contains(e.Message, "not valid UTF-8")
	if !notJSON && notUTF8 == utf8.Valid(body) {
		t.Errorf("%s %q: error %v, utf8.Valid %v", p, body, e, utf8.Valid(body))
	}
}

// TestScanTopLevelRefusesInvalidUTF8 checks that invalid UTF-8 anywhere in
// a body, in a name or a value, at any depth, is a 400 naming the
// top-level member that holds it and the offset of the first bad byte,
// while valid UTF-8 and escapes pass.
func TestScanTopLevelRefusesInvalidUTF8(t *testing.T) {
	cases := []struct {
		name, body string
		proto      Protocol
		param      string // "" for none; "-" for no error
		inMessage  string
	}{
		{"top-level name", "{\"model\":\"m\",\"input\":\"hi\",\"too\xf5s\":1}", ProtocolOpenAIResponses, "", `the name of member "too\xf5s" has an invalid byte at offset 30 (0xf5)`},
		{"model value", "{\"model\":\"m\xc3\"}", ProtocolOpenAIChat, "model", `member "model" has an invalid byte at offset 11 (0xc3)`},
		{"deep value", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"a\xffb\"}]}]}", ProtocolAnthropic, "messages", "offset 61 (0xff)"},
		{"deep name", "{\"messages\":[{\"r\x80\":1}]}", ProtocolAnthropic, "messages", "offset 16 (0x80)"},
		{"surrogate", "{\"contents\":\"\xed\xa0\x80\"}", ProtocolGemini, "contents", "offset 13 (0xed)"},
		{"gemini generationConfig", "{\"generationConfig\":{\"stopSequences\":[\"\xf5\"],\"maxOutputTokens\":5}}", ProtocolGemini, "generationConfig", "offset 39 (0xf5)"},
		{"first of two", "{\"a\":\"\xf5\",\"b\xf5\":1}", ProtocolOpenAIChat, "a", "offset 6"},
		{"before a duplicate", "{\"model\":\"a\",\"model\":\"b\",\"x\":\"\xf5\"}", ProtocolOpenAIChat, "x", "offset 30"},
		{"not an object", "\"\xf5\"", ProtocolAnthropic, "", "the body has an invalid byte at offset 1"},
		{"valid non-ASCII", `{"model":"m","messages":[{"content":"héllo 日本 🎉"}]}`, ProtocolAnthropic, "-", ""},
		{"escapes", `{"model":"m","x\u00f5":"\udc00\u00e9"}`, ProtocolOpenAIChat, "-", ""},
	}
	for _, c := range cases {
		top, e := ScanTopLevel(c.proto, []byte(c.body))
		checkScanDeferred(t, c.proto, []byte(c.body), top, e)
		if c.param == "-" {
			if e != nil {
				t.Errorf("%s: %v", c.name, e)
			}
			continue
		}
		if e == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if e.Status != 400 || e.Param != c.param || !strings.Contains(e.Message, "the request body is not valid UTF-8") || !strings.Contains(e.Message, c.inMessage) {
			t.Errorf("%s: %d %q param %q, want 400 with %q, param %q", c.name, e.Status, e.Message, e.Param, c.inMessage, c.param)
		}
		if !utf8.ValidString(e.Message) {
			t.Errorf("%s: the message is not UTF-8 itself: %q", c.name, e.Message)
		}
	}
}

func FuzzScanTopLevel(f *testing.F) {
	for _, b := range scanTopLevelBodies {
		f.Add([]byte(b))
	}
	f.Add([]byte("{\"model\":\"m\",\"too\xf5s\":[\"\xc3\"]}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range []Protocol{ProtocolAnthropic, ProtocolGemini} {
			checkScanValidates(t, p, body)
		}
	})
}

// TestScanTopLevelSpans checks where the scan locates the members a
// passthrough edits.
func TestScanTopLevelSpans(t *testing.T) {
	cases := []struct {
		proto  Protocol
		body   string
		model  string // the raw model value at ModelAt, "" when absent
		limits map[Limit]string
	}{
		{ProtocolAnthropic, `{"model":"claude","max_tokens":100,"messages":[{"max_tokens":5}]}`, `"claude"`, map[Limit]string{LimitMaxTokens: "100"}},
		{ProtocolOpenAIChat, ` { "max_completion_tokens" : 7 , "max_tokens":1e3, "model" : "g\u0070t" } `, `"g\u0070t"`,
			map[Limit]string{LimitMaxTokens: "1e3", LimitMaxCompletionTokens: "7"}},
		{ProtocolOpenAIResponses, `{"max_output_tokens":null,"model":"m"}`, `"m"`, map[Limit]string{LimitMaxOutputTokens: "null"}},
		{ProtocolGemini, `{"contents":[],"generation_config":{"temperature":1,"max_output_tokens":9}}`, "", map[Limit]string{LimitGeminiMaxOutput: "9"}},
		{ProtocolGemini, `{"generationConfig":{"maxOutputTokens":9},"model":"x"}`, "", map[Limit]string{LimitGeminiMaxOutput: "9"}},
		{ProtocolAnthropic, `{"messages":[]}`, "", nil},
	}
	for _, tc := range cases {
		top, e := ScanTopLevel(tc.proto, []byte(tc.body))
		checkScanDeferred(t, tc.proto, []byte(tc.body), top, e)
		if e != nil {
			t.Fatalf("%s: %v", tc.body, e)
		}
		if got := spanText(tc.body, top.ModelAt); got != tc.model {
			t.Errorf("%s: model at %q, want %q", tc.body, got, tc.model)
		}
		for l := range LimitCount {
			if got := spanText(tc.body, top.LimitsAt[l]); got != tc.limits[l] {
				t.Errorf("%s: %s at %q, want %q", tc.body, LimitNames[l], got, tc.limits[l])
			}
		}
		if open := strings.IndexByte(tc.body, '{') + 1; top.Open != open {
			t.Errorf("%s: Open %d, want %d", tc.body, top.Open, open)
		}
	}
}

func spanText(body string, s Span) string {
	if !s.Found() {
		return ""
	}
	return body[s.Start:s.End]
}

// TestScanTopLevelKeepsNoBody checks that what the scan returns does not
// point into the body, which the handler may release while the results
// live on.
func TestScanTopLevelKeepsNoBody(t *testing.T) {
	body := []byte(`{"model":"claude","stream":true,"metadata":{"user_id":"u"},"prompt_cache_key":"k"}`)
	top, e := ScanTopLevel(ProtocolAnthropic, body)
	if e != nil {
		t.Fatal(e)
	}
	for i := range body {
		body[i] = 'X'
	}
	if top.Model.Str != "claude" || !top.Stream.Bool() || top.Metadata.Get("user_id").Str != "u" || top.PromptCacheKey.Str != "k" {
		t.Fatalf("top = %+v", top)
	}
}

// TestScanTopLevelTurn checks where the scan locates the system prompt and
// the conversation, in each protocol's names.
func TestScanTopLevelTurn(t *testing.T) {
	cases := []struct {
		proto     Protocol
		body      string
		sys, msgs string
	}{
		{ProtocolAnthropic, `{"system":"s","messages":[1],"input":2}`, `"s"`, `[1]`},
		{ProtocolOpenAIChat, `{"system":"s","messages":[1]}`, "", `[1]`},
		{ProtocolOpenAIResponses, `{"instructions":"i","input":"x","messages":[]}`, `"i"`, `"x"`},
		{ProtocolGemini, `{"contents":[3],"system_instruction":{"parts":[]}}`, `{"parts":[]}`, `[3]`},
	}
	for _, tc := range cases {
		top, e := ScanTopLevel(tc.proto, []byte(tc.body))
		checkScanDeferred(t, tc.proto, []byte(tc.body), top, e)
		if e != nil {
			t.Fatal(e)
		}
		if got := spanText(tc.body, top.SystemAt); got != tc.sys {
			t.Errorf("%s %s: system at %q, want %q", tc.proto, tc.body, got, tc.sys)
		}
		if got := spanText(tc.body, top.MessagesAt); got != tc.msgs {
			t.Errorf("%s %s: messages at %q, want %q", tc.proto, tc.body, got, tc.msgs)
		}
	}
}

// checkScanDeferred holds ScanTopLevelDeferred, followed by Validate as
// its caller does, to ScanTopLevel's answer (top, e) for body: the same
// error, or none and the same members found.
func checkScanDeferred(t *testing.T, p Protocol, body []byte, top TopLevel, e *Error) {
	t.Helper()
	for _, decodes := range []bool{true, false} {
		asked := 0
		dtop, de := ScanTopLevelDeferred(p, body, func(string) bool { asked++; return decodes })
		if asked > 1 {
			t.Errorf("%s %q: decodes asked %d times", p, body, asked)
		}
		if !decodes && dtop.deferred {
			t.Errorf("%s %q: deferred though the body is not decoded", p, body)
		}
		if de == nil {
			de = dtop.Validate(body)
		}
		if de == nil && dtop.deferred {
			t.Errorf("%s %q: still deferred after Validate", p, body)
		}
		if !reflect.DeepEqual(de, e) {
			t.Fatalf("%s %q (decodes %v): deferred scan answers %+v, ScanTopLevel %+v", p, body, decodes, de, e)
		}
		if e == nil && !reflect.DeepEqual(dtop, top) {
			t.Fatalf("%s %q (decodes %v): deferred scan found %+v, ScanTopLevel %+v", p, body, decodes, dtop, top)
		}
	}
}

// TestScanTopLevelDeferredAsks checks what decodes is told: the model
// when it comes before the messages, nothing when it comes after, and
// that it is not asked when nothing could be skipped.
func TestScanTopLevelDeferredAsks(t *testing.T) {
	for _, tc := range []struct {
		body, model string
		asked       bool
	}{
		{`{"model":"m","messages":[]}`, "m", true},
		{`{"messages":[],"model":"m"}`, "", true},
		{`{"model":"m","max_tokens":5}`, "", false},
		{`{"model":"m","messages":5}`, "", false},
	} {
		asked, model := false, ""
		_, e := ScanTopLevelDeferred(ProtocolAnthropic, []byte(tc.body), func(m string) bool {
			asked, model = true, m
			return true
		})
		if e != nil || asked != tc.asked || model != tc.model {
			t.Errorf("%s: asked %v with model %q (%v), want %v, %q", tc.body, asked, model, e, tc.asked, tc.model)
		}
	}
}

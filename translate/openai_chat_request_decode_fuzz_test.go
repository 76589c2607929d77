package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// oaiSameAsReference fails t unless the single-pass decoder and the gjson
// reference (openai_chat_request_decode_ref_test.go) decode body alike:
// the same error, or the same IR (generated ids masked).
func oaiSameAsReference(t *testing.T, body []byte) {
	t.Helper()
	keep := bytes.Clone(body)
	want, wantErr := oaiRefDecodeRequest(body)
	got, gotErr := openAIChatCodec{}.DecodeRequest(body)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("body %s\nerror %v, reference error %v", body, gotErr, wantErr)
	}
	if wantErr != nil {
		var g, w *Error
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || !reflect.DeepEqual(*g, *w) {
			t.Fatalf("body %s\nerror %+v\nreference %+v", body, gotErr, wantErr)
		}
		return
	}
	if g, w := oaiDumpJSON(got), oaiDumpJSON(want); !bytes.Equal(g, w) {
		t.Fatalf("body %s\nIR %s\nreference IR %s", body, g, w)
	}
	if !bytes.Equal(body, keep) {
		t.Fatal("the decoder changed the body")
	}
	oaiSplicedSameAsEscaped(t, got)
	checkToolIDLimits(t, got)
}

// oaiSplicedSameAsEscaped fails t unless the Anthropic and Gemini encoders
// write, from req, valid JSON that means what they write once the escaped
// forms the decoder kept are gone (every text escaped again).
func oaiSplicedSameAsEscaped(t *testing.T, req *Request) {
	t.Helper()
	bare := *req
	bare.System = oaiFormless(req.System)
	bare.Messages = make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		bare.Messages[i] = Message{Role: m.Role, Parts: oaiFormless(m.Parts)}
	}
	bare.Tools = make([]Tool, len(req.Tools))
	for i, tool := range req.Tools {
		tool.descForm = jsonForm{}
		bare.Tools[i] = tool
	}
	for _, enc := range []Codec{anthropicCodec{}, geminiCodec{}} {
		spliced, err := enc.EncodeRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		escaped, err := enc.EncodeRequest(&bare)
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(spliced) {
			t.Fatalf("%s: invalid JSON written: %s", enc.Protocol(), spliced)
		}
		var a, b any
		if json.Unmarshal(spliced, &a) != nil || json.Unmarshal(escaped, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: spliced\n%s\nescaped\n%s", enc.Protocol(), spliced, escaped)
		}
	}
}

// oaiFormless copies parts without their escaped forms.
func oaiFormless(parts []Part) []Part {
	out := make([]Part, len(parts))
	for i, p := range parts {
		p.textForm = jsonForm{}
		if p.ToolResult != nil {
			tr := *p.ToolResult
			tr.Content = oaiFormless(tr.Content)
			p.ToolResult = &tr
		}
		out[i] = p
	}
	return out
}

// oaiDecodeSeeds are requests that exercise the decoder's orders and
// lookups: members out of the usual order, repeated and escaped names,
// several errors at once.
var oaiDecodeSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"messages":[{"content":[{"text":"a","type":"text"}],"role":"user"}],"model":"m","stream":true}`,
	`{"model":"m","messages":[{"tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}],"role":"assistant","content":null}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":"hi","tool_calls":null}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":"x","function":{"a":1},"function":{"name":"f"},"function":{"arguments":{"b":2}}}]}]}`,
	`{"m\u006fdel":"m","model":"n","messages":[{"r\u006fle":"user","content":"a\nb","role":"system"}]}`,
	`{"store":true,"model":"m","messages":[{"role":"user","name":"bob","content":[{"type":"input_audio"},{"type":"video"}]},{"role":"assistant","audio":{},"content":[{"type":"refusal","refusal":"no"}],"tool_calls":[{"type":"custom"}]}],"metadata":{},"foo":1,"store":true}`,
	`{"messages":[{"role":"user","content":5}],"n":2}`,
	`{"n":2,"messages":[{"role":"robot"}],"model":""}`,
	`{"model":"m","messages":[{"content":[{"type":"image_url","image_url":{"detail":"low","url":"data:image/png;base64,AAAA"}}],"role":"user"},{"role":"tool","content":[{"type":"image_url","image_url":"https://x/y.png"}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","function_call":{"name":"f","arguments":"{}"}},{"role":"function","name":"f","content":"42"},{"role":"user","content":[{"type":"file","file":{"file_data":"JVBE","filename":"a.pdf"}},{"type":"file","file":{}}]}]}`,
	`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"developer","content":[{"type":"text","text":"d","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"u"},{"role":"system","content":"late"}]}`,
	`{"model":"m","messages":[{"role":"assistant","reasoning_details":[{"text":"a"},{"text":"b"},"c"],"content":"x"},{"role":"assistant","reasoning":"r","reasoning_content":""}]}`,
	`{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true}},{"function":{"name":"g"},"type":"function"},{"type":"custom"},"x"],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"f"}},{"type":"custom"}]}}}`,
	`{"model":"m","messages":[{"role":"user","content":"q"}],"functions":[{"name":"f","parameters":null}],"function_call":{"name":"f"},"tool_choice":"required","parallel_tool_calls":false}`,
	`{"model":"m","messages":[{"role":"user","content":"q"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"},"strict":false}},"stop":["a",""],"stop":"b","seed":-3,"top_k":-1,"reasoning_effort":"none"}`,
	`{"model":"m","messages":[{"role":"user","content":"q"}],"max_tokens":10,"max_completion_tokens":20,"temperature":0.5,"top_p":1,"presence_penalty":-2,"frequency_penalty":2e0,"user":"","safety_identifier":"s","stream_options":{"include_usage":true},"modalities":["text"],"logprobs":false}`,
	`{"model":"m","messages":[{"role":"user","content":"q"}],"temperature":3,"max_tokens":1.5,"seed":"x"}`,
	`{"model":"m","messages":[{"role":"tool","content":"r"},{"role":"tool","tool_call_id":"c","content":"r"},{"role":"user","content":"after"}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":{}}`,
	`  [1]  `,
	`{"model":"m","messages":[{"role":"user","content":"q"}]} x`,
	`{"model":"m","messages":[{"role":"user","content":"\ud83d\ude00 \u00e9 \"q\""}],"tools":[{"type":"function","function":{"name":"f","description":"\ttab"}}]}`,
	// Hostile tool call ids: past every limit, with louter's separators, outside the token alphabet.
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"call_` + strings.Repeat("a", 90) + `-ts-QUJD","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"\u00e9\u0000-th-x","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_` + strings.Repeat("a", 90) + `-ts-QUJD","content":"r"},{"role":"tool","tool_call_id":"\u00e9\u0000-th-x","content":"r"}]}`,
}

func TestOpenAIChatDecodeRequestSameAsReference(t *testing.T) {
	for _, s := range oaiDecodeSeeds {
		oaiSameAsReference(t, []byte(s))
	}
	for _, name := range []string{"request_agent_turn", "request_minimal", "request_legacy_functions", "request_self_hosted"} {
		oaiSameAsReference(t, oaiFixture(t, name+".json"))
	}
	claude, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := anthropicCodec{}.DecodeRequest(claude)
	if err != nil {
		t.Fatal(err)
	}
	body, err := openAIChatCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	oaiSameAsReference(t, body)
}

// TestOpenAIChatDecodeRequestNullToolCalls: clients that serialize a
// message model whole send tool_calls null on assistant messages without
// calls; that is no calls, not an error.
func TestOpenAIChatDecodeRequestNullToolCalls(t *testing.T) {
	req := oaiDecode(t, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","tool_calls":null}]}`)
	if got := req.Messages[1].Parts; len(got) != 1 || got[0].Text != "a" {
		t.Errorf("assistant parts = %+v, want the text alone", got)
	}
}

func FuzzOpenAIChatDecodeRequest(f *testing.F) {
	for _, s := range oaiDecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		oaiSameAsReference(t, body)
	})
}

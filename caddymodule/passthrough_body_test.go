package caddymodule

import (
	"testing"

	"github.com/louter/louter/translate"
)

// TestPassthroughBody checks the splice of the model rename and the
// max_tokens cap into a body passed on untranslated.
func TestPassthroughBody(t *testing.T) {
	tests := []struct {
		name          string
		proto         translate.Protocol
		body          string
		model, rename string
		maxTokens     int
		want          string
		same          bool // the body is passed on untouched, not copied
	}{
		{"no edit", translate.ProtocolAnthropic, `{"model":"a","max_tokens":10}`, "a", "a", 100, `{"model":"a","max_tokens":10}`, true},
		{"rename", translate.ProtocolAnthropic, `{"model":"a","max_tokens":10}`, "a", "b-1", 0, `{"model":"b-1","max_tokens":10}`, false},
		{"rename escapes", translate.ProtocolOpenAIChat, `{ "model" : "a" }`, "a", "q\"\\\n", 0, `{ "model" : "q\"\\\u000a" }`, false},
		{"rename and cap, members in any order", translate.ProtocolOpenAIChat,
			`{"max_completion_tokens":99999,"messages":[{"max_tokens":5}],"model":"a","max_tokens":50}`, "a", "bb", 100,
			`{"max_completion_tokens":100,"messages":[{"max_tokens":5}],"model":"bb","max_tokens":50}`, false},
		{"cap fractions and exponents", translate.ProtocolOpenAIResponses, `{"model":"a","max_output_tokens":1e9}`, "a", "a", 100, `{"model":"a","max_output_tokens":100}`, false},
		{"not a number: left to the backend", translate.ProtocolAnthropic, `{"model":"a","max_tokens":"9999"}`, "a", "a", 100, `{"model":"a","max_tokens":"9999"}`, true},
		{"gemini snake case", translate.ProtocolGemini, `{"generation_config":{"max_output_tokens":9000}}`, "m", "m", 100, `{"generation_config":{"max_output_tokens":100}}`, false},
		{"no model member: one is added", translate.ProtocolAnthropic, ` {"messages":[]}`, "a", "b", 0, ` {"model":"b","messages":[]}`, false},
		{"no model member, empty object", translate.ProtocolAnthropic, `{ }`, "a", "b", 0, `{"model":"b" }`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.body)
			top, e := translate.ScanTopLevel(tt.proto, in)
			if e != nil {
				t.Fatal(e)
			}
			got, _, te := passthroughBody(in, &top, tt.model, tt.rename, tt.maxTokens, false)
			if te != nil || string(got) != tt.want {
				t.Fatalf("got %s %v, want %s", got, te, tt.want)
			}
			if string(in) != tt.body {
				t.Fatalf("the client's body was modified: %s", in)
			}
			if same := len(got) > 0 && &got[0] == &in[0]; same != tt.same {
				t.Fatalf("untouched %v, want %v", same, tt.same)
			}
		})
	}
}

// TestPassthroughBodyStreamUsage checks the request for a stream's usage:
// OpenAI Chat's stream_options.include_usage is set, the client's other
// stream options kept, and hidden says whether the client did not ask.
func TestPassthroughBodyStreamUsage(t *testing.T) {
	tests := []struct {
		name   string
		proto  translate.Protocol
		body   string
		want   string
		hidden bool
	}{
		{"no stream_options", translate.ProtocolOpenAIChat, `{"model":"a","stream":true}`,
			`{"stream_options":{"include_usage":true},"model":"a","stream":true}`, true},
		{"asked already", translate.ProtocolOpenAIChat, `{"model":"a","stream":true,"stream_options":{"include_usage":true}}`,
			`{"model":"a","stream":true,"stream_options":{"include_usage":true}}`, false},
		{"asked not to", translate.ProtocolOpenAIChat, `{"model":"a","stream_options":{"include_obfuscation":false,"include_usage":false}}`,
			`{"model":"a","stream_options":{"include_usage":true,"include_obfuscation":false}}`, true},
		{"escaped and repeated", translate.ProtocolOpenAIChat, `{"model":"a","stream_options":{"include\u005fusage":false,"include_usage":null}}`,
			`{"model":"a","stream_options":{"include_usage":true}}`, true},
		{"null", translate.ProtocolOpenAIChat, `{"model":"a","stream_options":null}`,
			`{"model":"a","stream_options":{"include_usage":true}}`, true},
		{"not an object: left to the backend", translate.ProtocolOpenAIChat, `{"model":"a","stream_options":"yes"}`,
			`{"model":"a","stream_options":"yes"}`, false},
		{"rename too", translate.ProtocolOpenAIChat, `{"model":"x","stream":true}`,
			`{"stream_options":{"include_usage":true},"model":"a","stream":true}`, true},
		{"anthropic reports usage unasked", translate.ProtocolAnthropic, `{"model":"a","stream":true}`,
			`{"model":"a","stream":true}`, false},
		{"responses reports usage unasked", translate.ProtocolOpenAIResponses, `{"model":"a","stream":true,"stream_options":{}}`,
			`{"model":"a","stream":true,"stream_options":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.body)
			top, e := translate.ScanTopLevel(tt.proto, in)
			if e != nil {
				t.Fatal(e)
			}
			model := gjsonModel(top)
			got, hidden, te := passthroughBody(in, &top, model, "a", 0, true)
			if te != nil || string(got) != tt.want || hidden != tt.hidden {
				t.Fatalf("got %s (hidden %v) %v, want %s (hidden %v)", got, hidden, te, tt.want, tt.hidden)
			}
			if string(in) != tt.body {
				t.Fatalf("the client's body was modified: %s", in)
			}
		})
	}
	// A repeated stream_options is refused: louter would edit the first,
	// the backend read the last.
	if _, e := translate.ScanTopLevel(translate.ProtocolOpenAIChat, []byte(`{"model":"a","stream_options":{},"stream_options":{"include_usage":false}}`)); e == nil {
		t.Error("a repeated stream_options was accepted")
	}
}

func gjsonModel(top translate.TopLevel) string { return top.Model.Str }

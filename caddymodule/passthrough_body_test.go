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
			got, te := passthroughBody(in, &top, tt.model, tt.rename, tt.maxTokens)
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

package translate

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// backendIDRules are, per backend protocol, where its request carries tool
// call ids and result ids, and the longest id it accepts (0: no limit).
var backendIDRules = []struct {
	p              Protocol
	calls, results string // gjson paths, each yielding a flat array of ids
	limit          int
}{
	{ProtocolOpenAIChat, `messages.#.tool_calls.#.id|@flatten`, `messages.#(role=="tool")#.tool_call_id`, 40},
	{ProtocolOpenAIResponses, `input.#(type=="function_call")#.call_id`, `input.#(type=="function_call_output")#.call_id`, 64},
	{ProtocolAnthropic, `messages.#.content.#(type=="tool_use")#.id|@flatten`, `messages.#.content.#(type=="tool_result")#.tool_use_id|@flatten`, 0},
	{ProtocolGemini, `contents.#.parts.#.functionCall.id|@flatten`, `contents.#.parts.#.functionResponse.id|@flatten`, 0},
}

// checkBackendIDs encodes req for every backend protocol and checks that
// each backend gets ids within its limit, want calls of them, and every
// result paired with the call of the same position.
func checkBackendIDs(t *testing.T, req *Request, want int) map[Protocol][]byte {
	t.Helper()
	bodies := map[Protocol][]byte{}
	for _, r := range backendIDRules {
		c, _ := Lookup(r.p)
		cp := *req
		body, err := c.EncodeRequest(&cp)
		if err != nil {
			t.Fatalf("%s: %v", r.p, err)
		}
		bodies[r.p] = body
		var calls, results []string
		for _, v := range gjson.GetBytes(body, r.calls).Array() {
			calls = append(calls, v.Str)
		}
		for _, v := range gjson.GetBytes(body, r.results).Array() {
			results = append(results, v.Str)
		}
		if len(calls) != want || len(results) != want {
			t.Errorf("%s: calls %q, results %q, want %d of each\n%s", r.p, calls, results, want, body)
			continue
		}
		seen := map[string]bool{}
		for i, id := range calls {
			if id == "" || r.limit > 0 && len(id) > r.limit {
				t.Errorf("%s: call id %q (%d bytes), want 1 to %d", r.p, id, len(id), r.limit)
			}
			if seen[id] {
				t.Errorf("%s: two calls share the id %q", r.p, id)
			}
			seen[id] = true
			if results[i] != id {
				t.Errorf("%s: result %d answers %q, want %q", r.p, i, results[i], id)
			}
		}
	}
	return bodies
}

// A LangChain-shaped Gemini request: function calls without ids, each with
// a signature LangChain made up, answered by name.
func TestGeminiClientCallIDsFitEveryBackend(t *testing.T) {
	long := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a signature of a real Gemini answer, ", 9)))
	tests := []struct {
		name, sig string
		kept      bool // whether a Gemini backend gets it back
	}{
		{"placeholder", geminiSkipSignature, false},
		{"placeholder in base64", base64.StdEncoding.EncodeToString([]byte(geminiSkipSignature)), true},
		{"long base64", long, true},
		{"long unpadded base64", strings.TrimRight(long, "="), true},
		{"not base64", "not base64 at all: " + strings.Repeat("x", 300), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris and Tokyo?"}]},` +
				`{"role":"model","parts":[` +
				`{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":` + jsonQuote(tt.sig) + `},` +
				`{"functionCall":{"name":"get_weather","args":{"city":"Tokyo"}},"thoughtSignature":` + jsonQuote(tt.sig) + `}]},` +
				`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"18C"}}},` +
				`{"functionResponse":{"name":"get_weather","response":{"output":"25C"}}}]}],` +
				`"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}]}`
			req, err := geminiCodec{}.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Model = "m"
			bodies := checkBackendIDs(t, req, 2)

			// The signature goes back to a Gemini backend, on its call.
			gem := bodies[ProtocolGemini]
			want := tt.sig
			if !tt.kept {
				want = "" // the encoder's own placeholder, on the first call only
			}
			for i, p := range gjson.GetBytes(gem, "contents.1.parts").Array() {
				got := p.Get("thoughtSignature").Str
				switch {
				case want != "" && got != want:
					t.Errorf("gemini call %d: signature %.40q, want the client's", i, got)
				case want == "" && i == 0 && got != geminiSkipSignature:
					t.Errorf("gemini first call: signature %q, want the placeholder", got)
				}
			}
		})
	}
}

// Ids already long in the IR, as an Anthropic client hands back the ids a
// Gemini backend's signatures were folded into, or hostile ones: OpenAI
// backends get stand-ins within their limits, distinct for distinct ids
// that share a long start, and the same each time.
func TestLongToolCallIDsFitEveryBackend(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("signature bytes ", 20)))
	ids := []string{
		geminiJoinCallID("toolu_01", sig),
		"call_" + strings.Repeat("a", 300) + "1",
		"call_" + strings.Repeat("a", 300) + "2", // the same first 305 bytes
		strings.Repeat("é", 40),                  // multi-byte, 80 bytes
		"call_ok",
	}
	msgs := []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "go"}}}}
	var calls, results []Part
	for _, id := range ids {
		calls = append(calls, Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: "f", Arguments: `{}`}})
		results = append(results, Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, Name: "f", Content: []Part{{Type: PartText, Text: "ok"}}}})
	}
	msgs = append(msgs, Message{Role: RoleAssistant, Parts: calls}, Message{Role: RoleUser, Parts: results})
	req := &Request{Model: "m", Messages: msgs, Tools: []Tool{{Name: "f"}}}
	first := checkBackendIDs(t, req, len(ids))
	again := checkBackendIDs(t, req, len(ids))
	for p, b := range first {
		if string(b) != string(again[p]) {
			t.Errorf("%s: the same history gave other ids", p)
		}
	}
	if got := gjson.GetBytes(first[ProtocolOpenAIChat], "messages.1.tool_calls.4.id").Str; got != "call_ok" {
		t.Errorf("a short id was rewritten to %q", got)
	}
}

func jsonQuote(s string) string { return string(appendJSONString(nil, s)) }

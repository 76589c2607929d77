package translate

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Fuzzing of hostile tool call ids and thought signatures: whatever a client
// sends, the ids an OpenAI backend gets stay within its limits, and a
// Gemini model turn's thought parts come out joined.

// idLimitBackends are the backends that limit ids, with where their
// requests carry them.
var idLimitBackends = []struct {
	c     Codec
	paths []string
	limit int
}{
	{openAIChatCodec{}, []string{`messages.#.tool_calls.#.id|@flatten`, `messages.#.tool_call_id`}, oaiMaxToolIDLength},
	{openAIResponsesCodec{}, []string{`input.#.call_id`}, respMaxCallIDLength},
}

// checkToolIDLimits fails t when an OpenAI backend would get from req a tool
// call id past its limit.
func checkToolIDLimits(t *testing.T, req *Request) {
	t.Helper()
	for _, b := range idLimitBackends {
		cp := *req
		cp.Dropped = nil
		body, err := b.c.EncodeRequest(&cp)
		if err != nil {
			continue
		}
		if !gjson.ValidBytes(body) {
			t.Fatalf("%s: invalid JSON written: %s", b.c.Protocol(), body)
		}
		for _, path := range b.paths {
			for _, id := range gjson.GetBytes(body, path).Array() {
				if len(id.Str) > b.limit {
					t.Fatalf("%s: id of %d bytes, over %d: %q", b.c.Protocol(), len(id.Str), b.limit, id.Str)
				}
			}
		}
	}
}

// hostileIDSeeds are Gemini requests with the ids and signatures clients
// send: none at all, LangChain's placeholders, long and broken base64, ids
// that hold louter's own separators, bytes outside the token alphabet.
var hostileIDSeeds = []string{
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"1"}}},{"functionResponse":{"name":"f","response":{"output":"2"}}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"` + strings.Repeat("x", 200) + `-ts-AAAA","name":"f"},"thoughtSignature":"` + strings.Repeat("QUJD", 120) + `"}]},{"role":"user","parts":[{"functionResponse":{"id":"` + strings.Repeat("x", 200) + `-ts-AAAA","name":"f","response":{}}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"é\u0000\"-th-x","name":"f"},"thought_signature":"%%%"}]},{"role":"user","parts":[{"function_response":{"id":"é\u0000\"-th-x","name":"f","response":{"error":"no"}}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"a","thought":true},{"text":"b","thought":true},{"text":"","thought":true,"thoughtSignature":"AAAA"},{"text":"c","thought":true,"thoughtSignature":"BBBB"},{"text":"said"},{"text":"d","thought":true},{"functionCall":{"name":"f"}}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":2048}}}`,
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"a","thought":true}]},{"role":"model","parts":[{"text":"b","thought":true}]},{"role":"model","parts":[{"text":"","thoughtSignature":"AAAA"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]}]}`,
	// Found by the fuzzer in CI: 14 bytes that are not UTF-8 were written
	// as 14 U+FFFD, 42 bytes, past OpenAI Chat's 40.
	`{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"` + strings.Repeat("\xff", 14) + `","name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"id":"` + strings.Repeat("\xff", 14) + `","name":"f","response":{}}}]}]}`,
	`{"contents":[{"role":"user","parts":[{"text":"a","thought":true},{"text":"b","thought":true,"thoughtSignature":"AAAA"}]},{"role":"model","parts":[{"text":"","thoughtSignature":"skip_thought_signature_validator"},{"text":"x","thought":false,"thoughtSignature":"AAAA"}]}]}`,
}

func FuzzGeminiDecodeRequest(f *testing.F) {
	for _, s := range hostileIDSeeds {
		f.Add([]byte(s))
	}
	f.Add(geminiFixture(f, "request_gemini_cli.json"))
	f.Add(geminiFixture(f, "request_snake_case.json"))
	f.Fuzz(func(t *testing.T, body []byte) {
		geminiCheckDecode(t, body)
	})
}

// TestGeminiDecodeRequestHostileIDs runs the fuzz test's check on its seeds.
func TestGeminiDecodeRequestHostileIDs(t *testing.T) {
	for _, s := range hostileIDSeeds {
		geminiCheckDecode(t, []byte(s))
	}
}

// geminiCheckDecode decodes a Gemini request: a 400 for a bad one; for a
// good one, thought parts joined, signatures that are base64, ids within
// every backend's limits, and a body every encoder can write.
func geminiCheckDecode(t *testing.T, body []byte) {
	t.Helper()
	keep := bytes.Clone(body)
	req, err := geminiCodec{}.DecodeRequest(body)
	if !bytes.Equal(body, keep) {
		t.Fatal("the decoder changed the body")
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Message == "" {
			t.Fatalf("error %#v, want a 400 that says why", err)
		}
		return
	}
	for i, m := range req.Messages {
		if prev := req.Messages[max(i-1, 0)].Parts; i > 0 && m.Role == RoleAssistant && req.Messages[i-1].Role == RoleAssistant &&
			m.Parts[0].Type == PartThinking && prev[len(prev)-1].Type == PartThinking && prev[len(prev)-1].Signature == "" {
			t.Fatalf("messages[%d]: a thought continued from the model content before not joined", i)
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			if m.Role == RoleAssistant && j > 0 && p.Type == PartThinking && m.Parts[j-1].Type == PartThinking && m.Parts[j-1].Signature == "" {
				t.Fatalf("messages[%d]: thought parts %d and %d not joined", i, j-1, j)
			}
			if tc := p.ToolCall; tc != nil && tc.Signature != "" && !geminiBase64(tc.Signature) {
				t.Fatalf("messages[%d].parts[%d]: signature %q is not base64", i, j, tc.Signature)
			}
		}
	}
	checkToolIDLimits(t, req)
	for _, c := range []Codec{anthropicCodec{}, geminiCodec{}} {
		cp := *req
		cp.Dropped = nil
		if out, err := c.EncodeRequest(&cp); err == nil && !gjson.ValidBytes(out) {
			t.Fatalf("%s: invalid JSON written: %s", c.Protocol(), out)
		}
	}
}

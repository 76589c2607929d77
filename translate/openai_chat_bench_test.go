package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// oaiLargeRequest is a long agent session: a 10 KB system prompt, 12 tools
// and 60 messages alternating tool calls and sizeable tool results, about
// 100 KB once encoded.
func oaiLargeRequest() *Request {
	req := &Request{
		Model:     "qwen3-coder-30b",
		System:    []Part{{Type: PartText, Text: strings.Repeat("You are a careful coding agent. Follow the <rules> & keep diffs small.\n", 140)}},
		MaxTokens: 32000,
		Stream:    true,
		Reasoning: &Reasoning{Mode: ReasoningEnabled, BudgetTokens: 8000},
	}
	for i := range 12 {
		req.Tools = append(req.Tools, Tool{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: strings.Repeat("Does a useful thing with files. ", 6),
			Schema:      json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string","description":"Absolute path"},"limit":{"type":"integer","exclusiveMinimum":0}},"required":["path"],"additionalProperties":false}`),
		})
	}
	result := strings.Repeat("func main() {\n\tfmt.Println(\"hello, \\\"world\\\"\")\n}\n", 50)
	for i := range 30 {
		id := fmt.Sprintf("toolu_%024d", i)
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, Parts: []Part{
				{Type: PartThinking, Text: "Reading the next file.", Signature: "sig"},
				{Type: PartText, Text: "Let me read the next file."},
				{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: "tool_1", Arguments: fmt.Sprintf(`{"path":"/repo/pkg/file_%d.go","limit":200}`, i)}},
			}},
			Message{Role: RoleUser, Parts: []Part{
				{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, Content: []Part{{Type: PartText, Text: result}}}},
			}},
		)
	}
	return req
}

func BenchmarkOpenAIChatEncodeRequest(b *testing.B) {
	req := oaiLargeRequest()
	body, err := openAIChatCodec{}.EncodeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req.Dropped = req.Dropped[:0]
		if _, err := (openAIChatCodec{}).EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// oaiBenchStream is the data of a 200-delta upstream stream: 150 text
// deltas, then a tool call in 48 argument fragments, a finish chunk and a
// usage chunk.
func oaiBenchStream() [][]byte {
	head := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}]}`
	var out [][]byte
	add := func(delta string) { out = append(out, []byte(head+delta+tail)) }
	add(`{"role":"assistant","content":""}`)
	for i := range 150 {
		add(fmt.Sprintf(`{"content":"word%d \"quoted\" "}`, i))
	}
	add(`{"tool_calls":[{"index":0,"id":"call_4XzlGBLtUe9dy3GVNV4jhq7h","type":"function","function":{"name":"write_file","arguments":""}}]}`)
	for i := range 48 {
		add(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"k%d\": \"v\"}"}}]}`, i))
	}
	out = append(out,
		[]byte(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`),
		[]byte(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":44,"completion_tokens":200,"total_tokens":244}}`),
		[]byte("[DONE]"))
	return out
}

type oaiDiscard struct{ n int }

func (d *oaiDiscard) WriteFrame(_ string, data []byte) { d.n += len(data) }

func BenchmarkOpenAIChatStreamTranscode(b *testing.B) {
	frames := oaiBenchStream()
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	req := &Request{Model: "gpt-4o", Stream: true, IncludeUsage: true}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	var evs []Event
	for b.Loop() {
		dec := openAIChatCodec{}.NewStreamDecoder()
		enc := openAIChatCodec{}.NewStreamEncoder(req)
		var w oaiDiscard
		for _, f := range frames {
			evs = dec.Decode(evs[:0], "", f)
			for i := range evs {
				enc.Encode(&w, &evs[i])
			}
		}
		evs = dec.End(evs[:0])
		if len(evs) != 0 || w.n == 0 {
			b.Fatalf("stream did not end cleanly: %d trailing events, %d bytes written", len(evs), w.n)
		}
	}
}

package translate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// anthBigRequest grows the Claude Code fixture to at least size bytes by
// repeating its user/assistant/tool-result exchange, keeping the trailing
// role:"system" message last.
func anthBigRequest(b *testing.B, size int) []byte {
	b.Helper()
	body := translate.AnthFixture(b, "request_claude_code.json")
	msgs := gjson.GetBytes(body, "messages")
	all := msgs.Array()
	exchange, tail := all[:len(all)-1], all[len(all)-1]
	var arr bytes.Buffer
	arr.WriteByte('[')
	for arr.Len()+len(body) < size {
		for _, m := range exchange {
			arr.WriteString(m.Raw)
			arr.WriteByte(',')
		}
	}
	arr.WriteString(tail.Raw)
	arr.WriteByte(']')
	out := append([]byte(nil), body[:msgs.Index]...)
	out = append(out, arr.Bytes()...)
	return append(out, body[msgs.Index+len(msgs.Raw):]...)
}

func BenchmarkAnthropicDecodeRequest(b *testing.B) {
	body := anthBigRequest(b, 100<<10)
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	if _, err := c.DecodeRequest(body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// claudeCodeBench reads testdata/bench/claude_code_100k.json, the
// Claude-Code-sized request of issue 17.
func claudeCodeBench(b *testing.B) []byte {
	b.Helper()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "claude_code_100k.json"))
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkAnthropicDecodeRequestClaudeCode decodes the captured ~100 KB
// Claude Code request.
func BenchmarkAnthropicDecodeRequestClaudeCode(b *testing.B) {
	body := claudeCodeBench(b)
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	if _, err := c.DecodeRequest(body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnthropicToOpenAIChatRequestClaudeCode is the request path of
// an Anthropic client with an OpenAI Chat backend: decode the captured
// ~100 KB Claude Code request, encode it for the backend.
func BenchmarkAnthropicToOpenAIChatRequestClaudeCode(b *testing.B) {
	body := claudeCodeBench(b)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := anth.DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := oai.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnthropicEncodeRequest(b *testing.B) {
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := c.DecodeRequest(anthBigRequest(b, 100<<10))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := c.EncodeRequest(req)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req.Dropped = req.Dropped[:0]
		if _, err := c.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// anthDeltaStream is an Anthropic stream with n deltas: thinking, text and
// a tool call whose arguments arrive in fragments.
func anthDeltaStream(n int) []byte {
	var buf []byte
	ev := func(name, data string) { buf = stream.AppendSSE(buf, name, []byte(data)) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":30000,"output_tokens":1}}}`)
	third := n / 3
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	for i := 0; i < third; i++ {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"step %d: consider the <input> & go on. "}}`, i))
	}
	ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBtZXNzYWdl"}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	for i := 0; i < third; i++ {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"word%d \"quoted\"\n"}}`, i))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_bench","name":"Write","input":{}}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"content\": \""}}`)
	for i := 2*third + 1; i < n; i++ {
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"line of code\\n"}}`)
	}
	ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"}"}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":2}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":900}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return buf
}

// BenchmarkAnthropicStreamTranscode runs a 200-delta Anthropic stream
// through the Anthropic stream decoder and encoder, in 512-byte writes as a
// network would deliver it.
func BenchmarkAnthropicStreamTranscode(b *testing.B) {
	body := anthDeltaStream(200)
	c, _ := translate.Lookup(translate.ProtocolAnthropic)
	req := &translate.Request{Model: "claude-sonnet-4-5"}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tc := stream.NewTranscoder(&stream.SSEParser{}, c.NewStreamDecoder(), c.NewStreamEncoder(req), &stream.SSEOutput{})
		n := 0
		for i := 0; i < len(body); i += 512 {
			n += len(tc.Write(body[i:min(i+512, len(body))]))
		}
		n += len(tc.Close())
		if n == 0 {
			b.Fatal("no output")
		}
	}
}

// BenchmarkTranslateRequestClaudeCode is the whole request side of an
// Anthropic client with an OpenAI Chat backend as the handler runs it
// (TranslateRequest): decode the captured ~100 KB Claude Code request,
// apply its tool changes (it declares a deferred tool, as Claude Code
// does), encode it for the backend.
func BenchmarkTranslateRequestClaudeCode(b *testing.B) {
	body := claudeCodeBench(b)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	rt := &translate.RequestRoute{Client: anth, Backend: oai, Model: "claude-opus-5-5", BackendModel: "gpt-4o"}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := translate.TranslateRequest(body, nil, rt); err != nil {
			b.Fatal(err)
		}
	}
}

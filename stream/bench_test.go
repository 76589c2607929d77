package stream_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// claudeCodeRequest builds an Anthropic request shaped like Claude Code's
// (system blocks with cache_control, a dozen tools with full JSON Schemas,
// a long tool-use history) of about size bytes.
func claudeCodeRequest(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,`)
	b.WriteString(`"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s\"}"},`)
	b.WriteString(`"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high"},`)
	b.WriteString(`"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude."},`)
	b.WriteString(`{"type":"text","text":"` + strings.Repeat("Follow the instructions carefully. ", 80) + `","cache_control":{"type":"ephemeral"}}],`)
	b.WriteString(`"tools":[`)
	for i := 0; i < 12; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"Tool%d","description":"%s","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"command":{"type":"string","description":"The command"},"timeout":{"type":"number","exclusiveMinimum":0},"paths":{"type":"array","items":{"type":"string"}}},"required":["command"],"additionalProperties":false}}`, i, strings.Repeat("Does a useful thing. ", 20))
	}
	b.WriteString(`],"messages":[{"role":"user","content":[{"type":"text","text":"Fix the failing test."}]}`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"text","text":"Let me look at file %d."},{"type":"tool_use","id":"toolu_%024d","name":"Tool1","input":{"command":"cat src/file%d.go"}}]}`, i, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%024d","content":"%s","cache_control":{"type":"ephemeral"}}]}`, i, strings.Repeat("package main; func f() {} ", 30))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkRequestAnthropicToOpenAIChat(b *testing.B) {
	benchRequest(b, translate.ProtocolAnthropic, translate.ProtocolOpenAIChat, claudeCodeRequest(100<<10))
}

func BenchmarkRequestOpenAIChatToAnthropic(b *testing.B) {
	// Produce the OpenAI twin of the same conversation with the codecs.
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	oai, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	req, err := anth.DecodeRequest(claudeCodeRequest(100 << 10))
	if err != nil {
		b.Fatal(err)
	}
	body, err := oai.EncodeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	benchRequest(b, translate.ProtocolOpenAIChat, translate.ProtocolAnthropic, body)
}

func benchRequest(b *testing.B, from, to translate.Protocol, body []byte) {
	dec, _ := translate.Lookup(from)
	enc, _ := translate.Lookup(to)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := dec.DecodeRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enc.EncodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// upstreamStream is a 200-delta text answer followed by a tool call with
// streamed arguments, in the given backend protocol, produced by that
// protocol's own encoder.
func upstreamStream(b *testing.B, p translate.Protocol) []byte {
	var e translate.Emitter
	evs := e.Start(nil, "msg_bench", "m", &translate.Usage{InputTokens: 1000})
	for i := 0; i < 200; i++ {
		evs = e.Text(evs, fmt.Sprintf("word%d ", i))
	}
	evs = e.ToolStart(evs, "call_bench", "Bash")
	for _, frag := range []string{`{"comm`, `and":"go`, ` test ./...`, `","descr`, `iption":"run tests"}`} {
		evs = e.ToolArgs(evs, frag)
	}
	evs = e.Stop(evs, translate.StopToolUse, "", &translate.Usage{InputTokens: 1000, OutputTokens: 260})
	codec, _ := translate.Lookup(p)
	enc := codec.NewStreamEncoder(&translate.Request{Model: "m", IncludeUsage: true})
	out := &stream.SSEOutput{}
	for i := range evs {
		enc.Encode(out, &evs[i])
	}
	return append([]byte(nil), out.Bytes()...)
}

func BenchmarkStreamOpenAIChatToAnthropic(b *testing.B) {
	benchStream(b, translate.ProtocolOpenAIChat, translate.ProtocolAnthropic)
}

func BenchmarkStreamAnthropicToOpenAIChat(b *testing.B) {
	benchStream(b, translate.ProtocolAnthropic, translate.ProtocolOpenAIChat)
}

// benchStream feeds the upstream stream in 512-byte writes, as network
// reads deliver it, through a fresh transcoder per iteration.
func benchStream(b *testing.B, from, to translate.Protocol) {
	body := upstreamStream(b, from)
	dec, _ := translate.Lookup(from)
	enc, _ := translate.Lookup(to)
	req := &translate.Request{Model: "client-model", Stream: true, IncludeUsage: true}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		tc := stream.NewTranscoder(&stream.SSEParser{}, dec.NewStreamDecoder(), enc.NewStreamEncoder(req), &stream.SSEOutput{})
		n := 0
		for off := 0; off < len(body); off += 512 {
			n += len(tc.Write(body[off:min(off+512, len(body))]))
		}
		n += len(tc.Close())
		if n == 0 || !tc.Done() {
			b.Fatal("no output")
		}
	}
}

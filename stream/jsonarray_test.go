package stream_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/louter/louter/internal/streamtest"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// arrayEvents frames body with a fresh JSONArrayParser, fed in the given
// pieces, and returns the events (copied) and the first error.
func arrayEvents(chunks [][]byte, max int) ([]string, error) {
	p := stream.JSONArrayParser{MaxEventSize: max}
	var out []string
	fn := func(name string, data []byte) {
		if name != "" {
			out = append(out, "NAME "+name)
		}
		out = append(out, string(data))
	}
	for _, c := range chunks {
		if err := p.Feed(c, fn); err != nil {
			return out, err
		}
	}
	return out, p.Close(fn)
}

func TestJSONArrayParserSplitAnywhere(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "gemini", "stream_array.json"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"fixture": fixture,
		"tricky":  []byte("[{\"a\":\"}]{[\\\"\\\\\"},\r\n{\"b\":[1,{\"c\":\"]\"}]}\n,\n {}]"),
		"object":  []byte(`{"error":{"code":400,"message":"bad [request]","status":"INVALID_ARGUMENT"}}`),
	}
	want := map[string]int{"fixture": 2, "tricky": 3, "object": 1}
	for name, body := range bodies {
		whole, err := arrayEvents([][]byte{body}, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(whole) != want[name] {
			t.Fatalf("%s: %d events, want %d: %q", name, len(whole), want[name], whole)
		}
		for _, ev := range whole {
			if !json.Valid([]byte(ev)) {
				t.Errorf("%s: event is not JSON: %s", name, ev)
			}
		}
		for i := 0; i <= len(body); i++ {
			got, err := arrayEvents([][]byte{body[:i], body[i:]}, 0)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Fatalf("%s split at %d: %q, %v", name, i, got, err)
			}
		}
		bytewise := make([][]byte, len(body))
		for i := range body {
			bytewise[i] = body[i : i+1]
		}
		if got, err := arrayEvents(bytewise, 0); err != nil || fmt.Sprint(got) != fmt.Sprint(whole) {
			t.Fatalf("%s byte by byte: %q, %v", name, got, err)
		}
	}
}

func TestJSONArrayParserErrors(t *testing.T) {
	if _, err := arrayEvents([][]byte{[]byte(`[{"a":1}, x]`)}, 0); err == nil {
		t.Error("garbage between elements must fail")
	}
	big := []byte(`[{"a":"` + strings.Repeat("x", 100) + `"}]`)
	if _, err := arrayEvents([][]byte{big[:50], big[50:]}, 64); !errors.Is(err, stream.ErrEventTooLarge) {
		t.Errorf("oversized element: %v", err)
	}
	// A cut element is dropped: the decoder reports the cut stream.
	got, err := arrayEvents([][]byte{[]byte(`[{"a":1},{"b":`)}, 0)
	if err != nil || len(got) != 1 {
		t.Errorf("cut: %q %v", got, err)
	}
}

func TestJSONArrayOutput(t *testing.T) {
	var o stream.JSONArrayOutput
	stream.EndOutput(&o)
	if string(o.Bytes()) != "[]\n" {
		t.Errorf("empty array: %q", o.Bytes())
	}
	o = stream.JSONArrayOutput{}
	o.WriteFrame("ignored", []byte(`{"a":1}`))
	first := string(o.Bytes())
	o.Reset()
	o.WriteFrame("", []byte(`{"b":2}`))
	o.End()
	o.WriteFrame("", []byte(`{"late":true}`))
	all := first + string(o.Bytes())
	var v []map[string]int
	if err := json.Unmarshal([]byte(all), &v); err != nil || len(v) != 2 {
		t.Errorf("%q: %v", all, err)
	}
	// SSEOutput has no end mark.
	var s stream.SSEOutput
	stream.EndOutput(&s)
	if len(s.Bytes()) != 0 {
		t.Errorf("SSE end wrote %q", s.Bytes())
	}
}

// TestTranscodeGeminiJSONArray runs Gemini's streamed JSON array through
// the transcoder into every client protocol, split at every byte, and
// Gemini's SSE into a Gemini client that wants the JSON array.
func TestTranscodeGeminiJSONArray(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "gemini", "stream_array.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := translate.Lookup(translate.ProtocolGemini)
	run := func(to translate.Protocol, chunks [][]byte) []byte {
		enc, _ := translate.Lookup(to)
		req := &translate.Request{Model: "client-model", Stream: true, IncludeUsage: true}
		tc := stream.NewTranscoder(&stream.JSONArrayParser{}, dec.NewStreamDecoder(), enc.NewStreamEncoder(req), &stream.SSEOutput{})
		var out []byte
		for _, c := range chunks {
			out = append(out, tc.Write(c)...)
		}
		return streamtest.Normalize(append(out, tc.Close()...))
	}
	for _, to := range translate.ClientProtocols() {
		whole := run(to, [][]byte{body})
		if !bytes.Contains(whole, []byte("backslash")) {
			t.Errorf("%s: text lost: %s", to, whole)
		}
		// A streamtest.Memo shares the decoding and encoding across the cuts.
		jsonArray := func() stream.Framer { return &stream.JSONArrayParser{} }
		memo, ref := streamtest.NewTranscodeMemo(jsonArray, streamtest.SSEOutput, dec.NewStreamDecoder, newStreamEncoder(to), body)
		if !bytes.Equal(streamtest.Normalize(ref), whole) {
			t.Fatalf("%s: the decoder keeps a framed event's bytes past Decode:\n%s\n---\n%s", to, streamtest.Normalize(ref), whole)
		}
		out := streamtest.SSEOutput()
		for i := 0; i <= len(body); i++ {
			if got := memo.Run(jsonArray(), out, [][]byte{body[:i], body[i:]}); !bytes.Equal(got, ref) && !bytes.Equal(streamtest.Normalize(got), whole) {
				t.Fatalf("%s split at %d differs:\n%s\n---\n%s", to, i, streamtest.Normalize(got), whole)
			}
		}
	}

	// Gemini SSE → a Gemini client without alt=sse: a JSON array that
	// ends with the finish reason.
	sse, err := os.ReadFile(filepath.Join("..", "testdata", "gemini", "stream_text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	out := &stream.JSONArrayOutput{}
	tc := stream.NewTranscoder(&stream.SSEParser{}, dec.NewStreamDecoder(), dec.NewStreamEncoder(&translate.Request{Model: "m"}), out)
	got := append(bytes.Clone(tc.Write(sse)), tc.Close()...)
	var chunks []map[string]any
	if err := json.Unmarshal(got, &chunks); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if len(chunks) < 2 || !bytes.Contains(got, []byte(`"finishReason":"STOP"`)) || !bytes.HasSuffix(got, []byte("]\n")) {
		t.Errorf("JSON array client stream: %s", got)
	}
}

func BenchmarkJSONArrayParser(b *testing.B) {
	var body bytes.Buffer
	body.WriteString("[")
	for i := 0; i < 200; i++ {
		if i > 0 {
			body.WriteString(",\r\n")
		}
		fmt.Fprintf(&body, "{\n  \"candidates\": [\n    {\n      \"content\": {\n        \"parts\": [\n          {\n            \"text\": \"word%d {not} [a] \\\"brace\\\" \"\n          }\n        ],\n        \"role\": \"model\"\n      },\n      \"index\": 0\n    }\n  ]\n}", i)
	}
	body.WriteString("]")
	data := body.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var p stream.JSONArrayParser
		for off := 0; off < len(data); off += 4096 {
			end := min(off+4096, len(data))
			if err := p.Feed(data[off:end], func(string, []byte) {}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

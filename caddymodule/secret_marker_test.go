package caddymodule

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexErrorMarker holds indexErrorMarker to bytes.Index: the marker at
// every offset of lines of every length (across the eight-byte words and
// their overlap), near misses, repeated quotes and 'e's, and random lines
// of the bytes that matter.
func TestIndexErrorMarker(t *testing.T) {
	var cases []string
	for n := 0; n <= 40; n++ {
		for at := 0; at+len(errorMarker) <= n; at++ {
			b := []byte(strings.Repeat("x", n))
			copy(b[at:], errorMarker)
			cases = append(cases, string(b))
		}
		cases = append(cases, strings.Repeat(`"e`, n), strings.Repeat(`"`, n), strings.Repeat("e", n)+`"error"`)
	}
	cases = append(cases,
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\"example\" \"erro\" "}}`,
		`{"error":null}`, `"erro`, `""error"`, `"e"error"`, "\x00\xff\"error\"",
		`event: error`+"\n"+`data: {"type":"error","error":{"type":"overloaded_error"}}`,
	)
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`"erorx\` + "\x00\xff")
	for range 20000 {
		b := make([]byte, r.IntN(48))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := indexErrorMarker([]byte(c)), bytes.Index([]byte(c), errorMarker); got != want {
			t.Fatalf("indexErrorMarker(%q) = %d, bytes.Index %d", c, got, want)
		}
	}
}

// BenchmarkCarriesError is the scrubber's search for the error marker on
// the lines of an Anthropic stream without errors: bytes.Index, which it
// used before, against indexErrorMarker.
func BenchmarkCarriesError(b *testing.B) {
	lines := [][]byte{
		[]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me look at the \\\"handler\\\" and run the tests. \"}}\n\n"),
		[]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"go test\"}}\n\n"),
		[]byte("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":212}}\n\n"),
	}
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	for _, index := range []struct {
		name string
		f    func([]byte) int
	}{{"bytes.Index", func(l []byte) int { return bytes.Index(l, errorMarker) }}, {"words", indexErrorMarker}} {
		b.Run(index.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				for _, l := range lines {
					if index.f(l) >= 0 {
						b.Fatal("marker found")
					}
				}
			}
		})
	}
}

package translate

import (
	"fmt"
	"strings"
	"testing"
)

// TestAnthropicStreamEncodeDeltaHeads pins every content_block_delta the
// encoder writes, byte for byte, across blocks past index 9: the head of a
// block's deltas is written once when the block opens (deltaHead), so each
// kind of delta and each block must still carry its own index.
func TestAnthropicStreamEncodeDeltaHeads(t *testing.T) {
	var evs []Event
	var want []string
	for i := range 11 {
		evs = append(evs,
			Event{Type: EventBlockStart, Index: i, Block: BlockText},
			Event{Type: EventBlockDelta, Index: i, Block: BlockText, Text: "a\"b"},
			Event{Type: EventBlockStop, Index: i, Block: BlockText})
		want = append(want, fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"a\"b"}}`, i))
	}
	evs = append(evs,
		Event{Type: EventBlockStart, Index: 11, Block: BlockThinking},
		Event{Type: EventBlockDelta, Index: 11, Block: BlockThinking, Text: "hm"},
		Event{Type: EventBlockDelta, Index: 11, Block: BlockThinking, Signature: "sig"},
		Event{Type: EventBlockStart, Index: 12, Block: BlockToolCall, ID: "toolu_1", Name: "Bash"},
		Event{Type: EventBlockDelta, Index: 12, Block: BlockToolCall, Text: `{"command":"ls é"}`},
		Event{Type: EventBlockStart, Index: 13, Block: BlockText},
		Event{Type: EventBlockDelta, Index: 13, Block: BlockText, Citation: &Citation{URL: "https://a.example", Title: "A"}},
		Event{Type: EventMessageStop, Stop: StopEndTurn})
	want = append(want,
		`{"type":"content_block_delta","index":11,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
		`{"type":"content_block_delta","index":11,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls é\"}"}}`,
		`{"type":"content_block_delta","index":13,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://a.example","title":"A","cited_text":"","encrypted_index":""}}}`)

	enc := anthropicCodec{}.NewStreamEncoder(&Request{Model: "m"})
	var f streamFrames
	for i := range evs {
		enc.Encode(&f, &evs[i])
	}
	var got []string
	for i, name := range f.names {
		if name == "content_block_delta" {
			got = append(got, f.data[i])
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("deltas:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

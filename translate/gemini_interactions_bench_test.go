package translate

import "testing"

// BenchmarkInteractionsDecodeRequest decodes a stateless tool turn.
func BenchmarkInteractionsDecodeRequest(b *testing.B) {
	body := []byte(interactionsRequests["tool_round_trip"])
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (interactionsCodec{}).DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

type discardFrames struct{ n int }

func (d *discardFrames) WriteFrame(_ string, data []byte) { d.n += len(data) }

// BenchmarkInteractionsStreamEncode encodes a stream of 100 text deltas,
// a thought and a tool call.
func BenchmarkInteractionsStreamEncode(b *testing.B) {
	evs := []Event{{Type: EventMessageStart, ID: "msg_1"},
		{Type: EventBlockStart, Index: 0, Block: BlockThinking},
		{Type: EventBlockDelta, Index: 0, Block: BlockThinking, Text: "Thinking it over."},
		{Type: EventBlockDelta, Index: 0, Block: BlockThinking, Signature: "Et0ECtoE"},
		{Type: EventBlockStop, Index: 0, Block: BlockThinking},
		{Type: EventBlockStart, Index: 1, Block: BlockText}}
	for range 100 {
		evs = append(evs, Event{Type: EventBlockDelta, Index: 1, Block: BlockText, Text: "some words "})
	}
	evs = append(evs, Event{Type: EventBlockStop, Index: 1, Block: BlockText},
		Event{Type: EventBlockStart, Index: 2, Block: BlockToolCall, ID: "call_1", Name: "get_weather"},
		Event{Type: EventBlockDelta, Index: 2, Block: BlockToolCall, Text: `{"city":"Paris"}`},
		Event{Type: EventBlockStop, Index: 2, Block: BlockToolCall},
		Event{Type: EventMessageStop, Stop: StopToolUse, Usage: &Usage{InputTokens: 10, OutputTokens: 100}})
	var w discardFrames
	b.ReportAllocs()
	for b.Loop() {
		enc := interactionsCodec{}.NewStreamEncoder(&Request{Model: "m"})
		for i := range evs {
			enc.Encode(&w, &evs[i])
		}
	}
}

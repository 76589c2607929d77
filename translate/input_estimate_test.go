package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestInputTokensEstimate checks how the client stream encoders that report
// input usage early use Request.InputTokensEstimate: it stands in until the
// backend reports input tokens, and the backend's figures replace it.
func TestInputTokensEstimate(t *testing.T) {
	final := &Usage{InputTokens: 500, OutputTokens: 20}
	tests := []struct {
		name       string
		startUsage *Usage // the backend's message_start usage
		stopUsage  *Usage // the backend's final usage
		wantStart  int64
		wantFinal  int64
	}{
		{"backend reports at the end", nil, final, 123, 500},
		{"backend reports up front", &Usage{InputTokens: 480}, final, 480, 500},
		{"backend never reports", nil, nil, 123, 123},
	}
	for _, tt := range tests {
		events := []Event{
			{Type: EventMessageStart, ID: "m", Usage: tt.startUsage},
			{Type: EventBlockStart, Index: 0, Block: BlockText},
			{Type: EventBlockDelta, Index: 0, Block: BlockText, Text: "hi"},
			{Type: EventBlockStop, Index: 0, Block: BlockText},
			{Type: EventMessageStop, Stop: StopEndTurn, Usage: tt.stopUsage},
		}
		t.Run("anthropic/"+tt.name, func(t *testing.T) {
			f := &oaiFrames{}
			enc := anthropicCodec{}.NewStreamEncoder(&Request{Model: "m", InputTokensEstimate: 123})
			for i := range events {
				enc.Encode(f, &events[i])
			}
			start := gjson.Get(f.frames[0], "message.usage.input_tokens").Int()
			delta := gjson.Get(f.frames[len(f.frames)-2], "usage.input_tokens").Int()
			if start != tt.wantStart || delta != tt.wantFinal {
				t.Errorf("message_start %d, message_delta %d; want %d, %d\n%v", start, delta, tt.wantStart, tt.wantFinal, f.frames)
			}
		})
		t.Run("gemini/"+tt.name, func(t *testing.T) {
			f := &oaiFrames{}
			enc := geminiCodec{}.NewStreamEncoder(&Request{Model: "m", InputTokensEstimate: 123})
			for i := range events {
				enc.Encode(f, &events[i])
			}
			first := gjson.Get(f.frames[0], "usageMetadata.promptTokenCount").Int()
			last := gjson.Get(f.frames[len(f.frames)-1], "usageMetadata.promptTokenCount").Int()
			if first != tt.wantStart || last != tt.wantFinal {
				t.Errorf("first chunk %d, last chunk %d; want %d, %d\n%v", first, last, tt.wantStart, tt.wantFinal, f.frames)
			}
		})
	}
}

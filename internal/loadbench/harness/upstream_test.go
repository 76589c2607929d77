package harness

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestStreams checks the upstream's two streams: the event counts the
// benchmark reports per event, valid JSON in every event, and tool
// arguments that join into toolArguments.
func TestStreams(t *testing.T) {
	tests := []struct {
		name       string
		events     [][]byte
		wantEvents int
		argsPath   string // gjson path of an argument fragment in an event's data
	}{
		{"openai_chat", OpenAIChatStream(), 243, "choices.0.delta.tool_calls.0.function.arguments"},
		{"anthropic", AnthropicStream(), 4 + TextDeltas + 2 + ToolFragments + 1, "delta.partial_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.events) != tt.wantEvents {
				t.Errorf("%d events, want %d", len(tt.events), tt.wantEvents)
			}
			var args strings.Builder
			for i, ev := range tt.events {
				_, data, ok := bytes.Cut(ev, []byte("data: "))
				if !ok || !bytes.HasSuffix(ev, []byte("\n\n")) {
					t.Fatalf("event %d is not one SSE event: %q", i, ev)
				}
				data = bytes.TrimSpace(data)
				if string(data) == "[DONE]" {
					continue
				}
				if !gjson.ValidBytes(data) {
					t.Fatalf("event %d: invalid JSON %s", i, data)
				}
				args.WriteString(gjson.GetBytes(data, tt.argsPath).String())
			}
			if args.String() != toolArguments {
				t.Errorf("the fragments join into %q, want %q", args.String(), toolArguments)
			}
		})
	}
}

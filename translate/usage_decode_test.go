package translate

import "testing"

func TestUsageFromTail(t *testing.T) {
	tests := []struct {
		name string
		p    Protocol
		tail string
		in   int
		out  int
		ok   bool
	}{
		{"anthropic with cache", ProtocolAnthropic, `"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":5}}`, 100, 5, true},
		{"openai chat", ProtocolOpenAIChat, `}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`, 12, 3, true},
		{"responses", ProtocolOpenAIResponses, `"usage": {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}}`, 7, 2, true},
		{"gemini", ProtocolGemini, `"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":6},"modelVersion":"x"}`, 4, 6, true},
		{"quoted in a string only", ProtocolOpenAIChat, `"content":"the \"usage\": {} key"}]}`, 0, 0, false},
		{"cut object", ProtocolOpenAIChat, `"usage":{"prompt_tokens":12,"compl`, 0, 0, false},
		{"no usage", ProtocolAnthropic, `{"content":[]}`, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := UsageFromTail(tt.p, []byte(tt.tail))
			if ok != tt.ok || u.InputTokens != tt.in || u.OutputTokens != tt.out {
				t.Errorf("got %+v, %v; want in %d out %d, %v", u, ok, tt.in, tt.out, tt.ok)
			}
		})
	}
}

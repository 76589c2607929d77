package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestHostileUsage feeds every protocol's usage readers — the response
// decoders and the passthrough stream watch — figures no backend should
// send: none may come out negative (it would be credited back to limits
// and budgets) or wrapped around.
func TestHostileUsage(t *testing.T) {
	figures := []struct {
		name            string
		in, out         string
		wantIn, wantOut int
	}{
		{"negative", "-500", "-20", 0, 0},
		{"negative fraction", "-0.5", "-1e3", 0, 0},
		{"fraction", "12.7", "3.99", 12, 3},
		{"huge float", "1e30", "-1e30", maxUsageCount, 0},
		{"past int64", "99999999999999999999999", "7", maxUsageCount, 7},
		{"just past the bound", "1099511627777", "1", maxUsageCount, 1},
		{"sound", "42", "17", 42, 17},
	}
	for _, pt := range usageProtocols {
		c, ok := Lookup(pt.p)
		if !ok {
			t.Fatalf("no codec for %s", pt.p)
		}
		for _, f := range figures {
			fill := strings.NewReplacer("IN", f.in, "OUT", f.out).Replace
			t.Run(string(pt.p)+"/"+f.name, func(t *testing.T) {
				resp, err := c.DecodeResponse([]byte(fill(pt.response)))
				if err != nil {
					t.Fatal(err)
				}
				if u := resp.Usage; u.InputTokens != f.wantIn || u.OutputTokens != f.wantOut {
					t.Errorf("response: got input %d output %d, want %d and %d", u.InputTokens, u.OutputTokens, f.wantIn, f.wantOut)
				}
				w := NewStreamWatch(pt.p)
				for _, ev := range pt.events {
					if v := w.Check(ev[0], []byte(fill(ev[1]))); v == WatchMalformed {
						t.Fatalf("the watch refused %s", fill(ev[1]))
					}
				}
				u, ok := w.Usage()
				if !ok || u.InputTokens != f.wantIn || u.OutputTokens != f.wantOut {
					t.Errorf("stream watch: got input %d output %d (%v), want %d and %d", u.InputTokens, u.OutputTokens, ok, f.wantIn, f.wantOut)
				}
			})
		}
	}
}

// usageProtocols is each protocol's response, and the stream events its
// watch reads the same usage from, with IN and OUT for the figures.
var usageProtocols = []struct {
	p        Protocol
	response string
	events   [][2]string // name, data
}{
	{ProtocolOpenAIChat,
		`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":IN,"completion_tokens":OUT}}`,
		[][2]string{{"", `{"id":"c","choices":[],"usage":{"prompt_tokens":IN,"completion_tokens":OUT}}`}}},
	{ProtocolAnthropic,
		`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":IN,"output_tokens":OUT}}`,
		[][2]string{
			{"message_start", `{"type":"message_start","message":{"id":"msg","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":IN,"output_tokens":1}}}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":OUT}}`},
		}},
	{ProtocolOpenAIResponses,
		`{"id":"resp","object":"response","status":"completed","model":"m","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":IN,"output_tokens":OUT}}`,
		[][2]string{{"response.completed", `{"type":"response.completed","response":{"id":"resp","status":"completed","usage":{"input_tokens":IN,"output_tokens":OUT}}}`}}},
	{ProtocolGemini,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":IN,"candidatesTokenCount":OUT}}`,
		[][2]string{{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":IN,"candidatesTokenCount":OUT}}`}}},
}

// FuzzHostileUsage puts any JSON value where each protocol's response and
// stream carry their token counts: whatever a backend reports, no count
// comes out negative or past what the sums of maxUsageCount make.
func FuzzHostileUsage(f *testing.F) {
	for _, v := range []string{"-500", "-0.5", "1e30", "-1e30", "99999999999999999999999", "\"-7\"", "\"1e400\"", "null", "true", "[]", "{}", "12.7"} {
		f.Add(v, "1")
	}
	f.Fuzz(func(t *testing.T, in, out string) {
		if !gjson.Valid(in) || !gjson.Valid(out) {
			return
		}
		fill := strings.NewReplacer("IN", in, "OUT", out).Replace
		check := func(where string, u Usage) {
			for _, n := range []int{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.UncachedInputTokens()} {
				if n < 0 || n > 2*maxUsageCount {
					t.Fatalf("%s: in %s out %s read as %+v", where, in, out, u)
				}
			}
		}
		for _, pt := range usageProtocols {
			c, _ := Lookup(pt.p)
			if resp, err := c.DecodeResponse([]byte(fill(pt.response))); err == nil {
				check(string(pt.p)+" response", resp.Usage)
			}
			w := NewStreamWatch(pt.p)
			for _, ev := range pt.events {
				w.Check(ev[0], []byte(fill(ev[1])))
			}
			if u, ok := w.Usage(); ok {
				check(string(pt.p)+" stream watch", u)
			}
		}
	})
}

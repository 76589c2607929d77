package caddymodule

import (
	"bufio"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// geminiLateUsageStream is a Gemini stream that reports usage only on its
// last chunk, as some Gemini-compatible servers do.
const geminiLateUsageStream = `data: {"candidates":[{"content":{"parts":[{"text":"Hamlet avenges "}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash"}

data: {"candidates":[{"content":{"parts":[{"text":"his father."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":812,"candidatesTokenCount":6,"totalTokenCount":818},"modelVersion":"gemini-2.5-flash"}

`

// An Anthropic client's message_start carries louter's estimate when the
// backend has not reported the input by then, whatever the backend's
// protocol; message_delta carries the backend's own count.
func TestAnthropicMessageStartEstimateFromGeminiBackend(t *testing.T) {
	tests := []struct {
		name, stream string
		wantStart    int64 // 0: louter's estimate
	}{
		{"usage only at the end", geminiLateUsageStream, 0},
		{"usage on every chunk", readFixture(t, "gemini/stream_text.sse"), 8},
	}
	const body = `{"model":"to-gemini","max_tokens":100,"stream":true,"system":"You are terse.",` +
		`"messages":[{"role":"user","content":"Summarise the plot of Hamlet in one sentence, please."}]}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Louter{
				Backends: map[string]*Backend{"gem": {Protocol: translate.ProtocolGemini, APIKey: "gem-key"}},
				Models:   []ModelRoute{{Match: "to-gemini", Backend: "gem", Rename: "gemini-2.5-flash"}},
			}
			l = newLouter(t, l, map[string]caddyhttp.MiddlewareHandler{"gem": proxyLike(200, sseHeader(), splitEvery(tt.stream, 40)...)})
			rec := newFlushRecorder()
			r := newRequest("POST", "/v1/messages", body)
			r.Header.Set("X-Api-Key", "client-key")
			if err, p := serve(l, rec, r, nil); err != nil || p != nil {
				t.Fatalf("err %v, panic %v", err, p)
			}
			var start, final gjson.Result
			sc := bufio.NewScanner(strings.NewReader(rec.Body.String()))
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				switch gjson.Get(data, "type").Str {
				case "message_start":
					start = gjson.Get(data, "message.usage")
				case "message_delta":
					final = gjson.Get(data, "usage")
				}
			}
			want := tt.wantStart
			if want == 0 {
				ir, err := codec(t, translate.ProtocolAnthropic).DecodeRequest([]byte(body))
				if err != nil {
					t.Fatal(err)
				}
				want = int64(tokencount.Quick(ir, tokencount.Gemini))
			}
			if got := start.Get("input_tokens").Int(); want <= 0 || got != want {
				t.Errorf("message_start usage %s, want input_tokens %d\n%s", start.Raw, want, rec.Body)
			}
			if got := final.Get("input_tokens").Int(); got != gjson.Get(lastData(tt.stream), "usageMetadata.promptTokenCount").Int() {
				t.Errorf("message_delta usage %s, want the backend's count", final.Raw)
			}
		})
	}
}

// lastData is the data of an SSE body's last event.
func lastData(sse string) string {
	events := strings.Split(strings.TrimSpace(sse), "\n\n")
	d, _ := strings.CutPrefix(events[len(events)-1], "data: ")
	return d
}

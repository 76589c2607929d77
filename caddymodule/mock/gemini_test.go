package mock

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

const geminiToolRequest = `{"contents":[{"role":"user","parts":[{"text":"weather? [mock:tool]"}]}],
 "tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]}`

func TestGeminiBackend(t *testing.T) {
	m := newMock(t, nil)
	gemini, _ := translate.Lookup(translate.ProtocolGemini)

	// SSE: one data line per chunk, no event names, a functionCall part
	// carrying the mock's thought signature, and a finishReason at the end.
	w := serve(t, m, newRequest("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiToolRequest))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	body := w.Body.String()
	if strings.Contains(body, "event:") || !strings.Contains(body, `"thoughtSignature":"`) || !strings.Contains(body, `"finishReason":"STOP"`) {
		t.Errorf("SSE body:\n%s", body)
	}
	if !strings.Contains(body, `"modelVersion":"gemini-2.5-flash"`) {
		t.Errorf("model from the path not reported:\n%s", body)
	}

	// Without alt=sse: a JSON array that json.Unmarshal reads whole.
	w = serve(t, m, newRequest("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", geminiToolRequest))
	var chunks []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &chunks); err != nil || len(chunks) < 2 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("JSON array: %v, %q\n%s", err, w.Header().Get("Content-Type"), w.Body)
	}
	// ... and the JSON array framer and the stream decoder read it back.
	var acc translate.Accumulator
	tc := stream.NewTranscoder(&stream.JSONArrayParser{}, gemini.NewStreamDecoder(), discard{}, &stream.SSEOutput{})
	tc.Observe = func(ev *translate.Event) { acc.Add(ev) }
	tc.Write(w.Body.Bytes())
	tc.Close()
	resp, e := acc.Result()
	if e != nil || !resp.HasToolCalls() || resp.StopReason != translate.StopToolUse {
		t.Fatalf("decoded %+v, %v", resp, e)
	}

	// Not streaming: one GenerateContentResponse.
	w = serve(t, m, newRequest("POST", "/v1/models/gemini-2.5-flash:generateContent", geminiToolRequest))
	if fc := gjson.Get(w.Body.String(), "candidates.0.content.parts.0.functionCall"); fc.Get("name").Str != "get_weather" || !fc.Get("args.city").Exists() {
		t.Errorf("generateContent: %s", w.Body)
	}

	// Errors in the google.rpc shape.
	w = serve(t, m, newRequest("POST", "/v1beta/models/g:generateContent", `{"contents":[{"parts":[{"text":"[mock:error_429]"}]}]}`))
	if w.Code != http.StatusTooManyRequests || gjson.Get(w.Body.String(), "error.status").Str != "RESOURCE_EXHAUSTED" {
		t.Errorf("error: %d %s", w.Code, w.Body)
	}
	w = serve(t, m, newRequest("POST", "/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"[mock:stream_error]"}]}]}`))
	if !strings.Contains(w.Body.String(), `data: {"error":{"code":503`) {
		t.Errorf("stream error:\n%s", w.Body)
	}
	data, _ := m.journal.marshal()
	if got := gjson.GetBytes(data, "0.protocol").Str; got != "gemini" {
		t.Errorf("journal protocol %q", got)
	}
}

type discard struct{}

func (discard) Encode(translate.FrameWriter, *translate.Event) {}

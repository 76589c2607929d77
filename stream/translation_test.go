package stream

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

func lookup(t *testing.T, p translate.Protocol) translate.Codec {
	t.Helper()
	c, ok := translate.Lookup(p)
	if !ok {
		t.Fatalf("no codec for %s", p)
	}
	return c
}

// TestTranslationSteps runs each step of a Translation from an OpenAI Chat
// backend to an Anthropic client.
func TestTranslationSteps(t *testing.T) {
	tr := Translation{
		Client:  lookup(t, translate.ProtocolAnthropic),
		Backend: lookup(t, translate.ProtocolOpenAIChat),
		Request: &translate.Request{Model: "client-model", Stream: true},
	}

	// A stream, transcoded as it comes.
	out := &SSEOutput{}
	tc := tr.NewStreamTranscoder(out)
	got := string(tc.Write([]byte("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")))
	got += string(tc.Close())
	for _, want := range []string{"event: message_start", `"model":"client-model"`, `"text":"hi"`, "event: message_stop"} {
		if !strings.Contains(got, want) {
			t.Errorf("the client stream lacks %s:\n%s", want, got)
		}
	}

	// The same stream for a client that wants a complete answer: events
	// only, nothing written.
	var acc translate.Accumulator
	out = &SSEOutput{}
	tc = tr.NewEventTranscoder(out)
	tc.Observe = acc.Add
	tc.Write([]byte("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n"))
	tc.Close()
	if resp, e := acc.Result(); e != nil || len(resp.Parts) != 1 || resp.Parts[0].Text != "hi" || len(out.Bytes()) > 0 {
		t.Errorf("accumulated %+v %v, written %q", resp, e, out.Bytes())
	}

	// A complete answer, decoded, then encoded whole and as a stream.
	resp, err := tr.DecodeResponse([]byte(`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := tr.EncodeResponse(resp)
	if err != nil || gjson.GetBytes(body, "content.0.text").Str != "hello" || gjson.GetBytes(body, "model").Str != "client-model" {
		t.Errorf("answer %s %v", body, err)
	}
	out = &SSEOutput{}
	tr.EncodeStream(out, resp)
	if s := string(out.Bytes()); !strings.Contains(s, `"text":"hello"`) || !strings.Contains(s, "event: message_stop") {
		t.Errorf("answer as a stream:\n%s", s)
	}
	if _, err := tr.DecodeResponse([]byte(`not json`)); err == nil {
		t.Error("an undecodable answer decoded")
	} else if e := BadResponse(err); e.Status != http.StatusBadGateway || !strings.HasPrefix(e.Message, "louter: the backend's response cannot be decoded: ") {
		t.Errorf("BadResponse %+v", e)
	}
}

// TestTranslationErrors: the backend's error statuses as the client gets
// them.
func TestTranslationErrors(t *testing.T) {
	for _, tt := range []struct {
		name       string
		client     translate.Protocol
		status     int
		body       string
		wantStatus int
		wantKind   translate.ErrorKind
	}{
		{"rate limit", translate.ProtocolAnthropic, 429, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`, 429, translate.ErrRateLimit},
		{"a redirect is the backend's failure", translate.ProtocolAnthropic, 302, ``, http.StatusBadGateway, translate.ErrAPI},
		{"overloaded, to a Gemini client", translate.ProtocolGemini, 529, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable, translate.ErrOverloaded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := Translation{Client: lookup(t, tt.client), Backend: lookup(t, translate.ProtocolOpenAIChat)}
			e := tr.DecodeError(tt.status, []byte(tt.body))
			status, body := tr.ErrorAnswer(e)
			if status != tt.wantStatus || e.Kind != tt.wantKind || len(body) == 0 {
				t.Errorf("%d %s %s, want %d %s", status, e.Kind, body, tt.wantStatus, tt.wantKind)
			}
		})
	}
}

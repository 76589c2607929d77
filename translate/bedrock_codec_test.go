package translate

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

// TestBedrockEncodeRequest: the Anthropic body without model and stream,
// with Bedrock's anthropic_version.
func TestBedrockEncodeRequest(t *testing.T) {
	req, err := anthropicCodec{}.DecodeRequest([]byte(`{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := bedrockCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	g := gjson.ParseBytes(body)
	if g.Get("model").Exists() || g.Get("stream").Exists() || g.Get("anthropic_version").Str != "bedrock-2023-05-31" ||
		g.Get("max_tokens").Int() != 10 || g.Get("tools.0.name").Str != "t" || g.Get("messages.0.content").Raw == "" {
		t.Errorf("body %s", body)
	}
}

// TestBedrockStreamDecoder unwraps chunk events into the Anthropic events
// they hold and turns an exception into an IR error of its status.
func TestBedrockStreamDecoder(t *testing.T) {
	chunk := func(ev string) []byte {
		return []byte(`{"bytes":"` + base64.StdEncoding.EncodeToString([]byte(ev)) + `","p":"abcd"}`)
	}
	d := bedrockCodec{}.NewStreamDecoder()
	var evs []Event
	evs = d.Decode(evs, "chunk", chunk(`{"type":"message_start","message":{"id":"m1","model":"claude-x","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`))
	evs = d.Decode(evs, "chunk", chunk(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	evs = d.Decode(evs, "chunk", chunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`))
	evs = d.Decode(evs, "exception:throttlingException", []byte(`{"message":"Too many requests"}`))
	evs = d.Decode(evs, "chunk", chunk(`{"type":"message_stop"}`)) // after the error: ignored
	evs = d.End(evs)
	var types []EventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	last := evs[len(evs)-1]
	if len(evs) < 4 || evs[0].Type != EventMessageStart || last.Type != EventError || last.Err.Status != http.StatusTooManyRequests ||
		last.Err.Kind != ErrRateLimit || last.Err.Message != "Too many requests" {
		t.Fatalf("events %v, last %+v", types, last.Err)
	}
	for _, tt := range []struct {
		exc    string
		status int
		kind   ErrorKind
	}{
		{"validationException", 400, ErrInvalidRequest},
		{"modelStreamErrorException", 424, ErrAPI},
		{"serviceUnavailableException", 503, ErrOverloaded},
		{"modelTimeoutException", 408, ErrTimeout},
		{"eventStreamError", 502, ErrAPI},
	} {
		e := AWSStreamError(tt.exc, []byte(`{"message":"m","originalMessage":"o"}`))
		if e.Status != tt.status || e.Kind != tt.kind || e.Message != "m (model: o)" {
			t.Errorf("%s: %+v", tt.exc, e)
		}
	}
}

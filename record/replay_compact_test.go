package record

import (
	"encoding/json"
	"testing"
)

func TestRecordedSummary(t *testing.T) {
	for _, tt := range []struct {
		name string
		resp *Response
		want string
	}{
		{"json", &Response{Body: json.RawMessage(`{"content":[{"type":"compaction","content":"S1"},{"type":"text","text":"x"}]}`)}, "S1"},
		{"stream", &Response{Events: []Event{
			{Name: "message_start", Data: json.RawMessage(`{"type":"message_start"}`)},
			{Name: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":0,"content_block":{"type":"compaction","content":""}}`)},
			{Name: "content_block_delta", Data: json.RawMessage(`{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"S2"}}`)},
		}}, "S2"},
		{"none", &Response{Body: json.RawMessage(`{"content":[{"type":"text","text":"x"}]}`)}, ""},
		{"not recorded", nil, ""},
	} {
		got, err := recordedSummary(tt.resp)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

package translate

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// respSameAsReference fails t unless the single-pass decoder and the gjson
// reference (openai_responses_request_decode_ref_test.go) decode body
// alike: the same error, or the same IR (generated ids masked).
func respSameAsReference(t *testing.T, body []byte) {
	t.Helper()
	keep := bytes.Clone(body)
	want, wantErr := respRefDecodeRequest(body)
	got, gotErr := openAIResponsesCodec{}.DecodeRequest(body)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("body %s\nerror %v, reference error %v", body, gotErr, wantErr)
	}
	if wantErr != nil {
		var g, w *Error
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || !reflect.DeepEqual(*g, *w) {
			t.Fatalf("body %s\nerror %+v\nreference %+v", body, gotErr, wantErr)
		}
		return
	}
	if g, w := oaiDumpJSON(got), oaiDumpJSON(want); !bytes.Equal(g, w) {
		t.Fatalf("body %s\nIR %s\nreference IR %s", body, g, w)
	}
	if !bytes.Equal(body, keep) {
		t.Fatal("the decoder changed the body")
	}
	oaiSplicedSameAsEscaped(t, got)
	checkToolIDLimits(t, got)
}

// respDecodeSeeds exercise the orders and lookups of the decoder.
var respDecodeSeeds = []string{
	`{"model":"m","input":"hi"}`,
	`{"input":"","model":"m","instructions":"be brief"}`,
	`{"model":"m","input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"a\nb"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"auto"}]}],"instructions":"i"}`,
	`{"model":"m","input":[{"content":[{"text":"x","type":"output_text"}],"role":"assistant","type":"message"},{"type":"function_call","name":"f","arguments":"{\"a\":1}","call_id":"c1"},{"call_id":"c1","output":"r","type":"function_call_output"},{"type":"message","role":"user","content":"more"}]}`,
	`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s1"},{"text":"s2"}],"encrypted_content":"e"},{"type":"reasoning","id":"rs_redacted_1","encrypted_content":"x"},{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin","call_id":"c2"},{"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"ok"}]},{"type":"function_call_output","call_id":"c3","output":{"a":1}}]}`,
	`{"model":"m","input":[{"output":"early","call_id":"c","type":"function_call_output"},{"content":"late type","role":"user","type":"message"},{"role":"robot"},{"type":"web_search_call"},{"type":"item_reference","id":"x"}]}`,
	`{"model":"m","input":[5]}`,
	// Codex's remote compaction: a compaction_trigger, last or not, and
	// the compaction item it is answered with.
	`{"model":"m","input":[{"role":"user","content":"q"},{"type":"compaction","id":"cmp_1","encrypted_content":"louter_cmp_x"},{"type":"compaction_trigger"}]}`,
	`{"model":"m","input":[{"type":"compaction_trigger"},{"role":"user","content":"q"}]}`,
	// web_search_call items (openai_responses_server_tool_items.go).
	`{"model":"m","input":[{"role":"user","content":"q"},{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q","sources":[{"type":"url","url":"u"},{"url":5}]}},{"type":"web_search_call","id":"ws_2","status":"failed","action":{"type":"open_page","url":"u"}},{"type":"web_search_call","id":"ws_3","status":"in_progress","action":{"type":"find","url":"u","pattern":"p"}},{"id":"ws_4","action":null,"type":"web_search_call"}]}`,
	`{"input":[{"type":"message"}],"previous_response_id":"r","background":true,"model":""}`,
	`{"model":"m","input":{"a":1},"instructions":5}`,
	`{"model":"m","input":[{"role":"system","content":[{"type":"input_image","image_url":"x"},{"type":"input_file","file_id":"f"},{"type":"video"},{"type":""}]}]}`,
	`{"model":"m","input":"q","tools":[{"type":"function","name":"f","description":"d\u00e9","parameters":{"type":"object"},"strict":true},{"type":"custom","name":"g","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},{"type":"namespace","tools":[{"type":"function","name":"h"},{"type":"web_search"}]},{"type":"web_search"}],"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"f"},{"type":"web_search"}]}}`,
	`{"model":"m","input":"q","tools":[{"type":"namespace","tools":[{"type":"namespace"}]}]}`,
	`{"model":"m","input":"q","reasoning":{"effort":"high","generate_summary":"auto"},"text":{"verbosity":"low","format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":false}},"include":["reasoning.encrypted_content","message.output_text.logprobs"],"store":true,"stream":true,"max_output_tokens":100,"temperature":1,"top_p":0.5,"parallel_tool_calls":false,"user":"u","safety_identifier":"s","metadata":{},"truncation":"auto","foo":null}`,
	`{"model":"m","input":"q","include":null,"tool_choice":"required","text":{"format":{"type":"xml"}},"reasoning":"x"}`,
	`{"model":"m","input":"q","max_output_tokens":0,"temperature":"hot"}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"a.pdf"},{"type":"input_file"},{"type":"input_image"}]}]}`,
	`{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}","call_id":"call_` + strings.Repeat("b", 80) + `-ts-QUJD"},{"type":"function_call_output","call_id":"call_` + strings.Repeat("b", 80) + `-ts-QUJD","output":"r"},{"type":"custom_tool_call","name":"g","input":"x","call_id":"\u00e9-th-` + strings.Repeat("z", 70) + `"},{"type":"custom_tool_call_output","call_id":"\u00e9-th-` + strings.Repeat("z", 70) + `","output":"ok"}]}`,
}

func TestOpenAIResponsesDecodeRequestSameAsReference(t *testing.T) {
	for _, s := range respDecodeSeeds {
		respSameAsReference(t, []byte(s))
	}
	respSameAsReference(t, respClaudeCodeBody(t))
}

func FuzzOpenAIResponsesDecodeRequest(f *testing.F) {
	for _, s := range respDecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		respSameAsReference(t, body)
	})
}

package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestConverseEncodeRequest: an Anthropic request with a system prompt,
// an image, a tool call and its result, thinking and sampling settings
// becomes Converse's camelCase body.
func TestConverseEncodeRequest(t *testing.T) {
	req, err := anthropicCodec{}.DecodeRequest([]byte(`{"model":"m","max_tokens":100,"temperature":0.5,"top_k":5,"stop_sequences":["X"],
		"system":"be brief","thinking":{"type":"enabled","budget_tokens":2000},
		"tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
		"tool_choice":{"type":"any"},
		"messages":[
			{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"sunny","is_error":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := bedrockConverseCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	g := gjson.ParseBytes(body)
	for path, want := range map[string]string{
		"system.0.text":                                                 "be brief",
		"messages.0.content.0.text":                                     "hi",
		"messages.0.content.1.image.format":                             "png",
		"messages.0.content.1.image.source.bytes":                       "iVBO",
		"messages.1.content.0.reasoningContent.reasoningText.signature": "sig1",
		"messages.1.content.1.toolUse.toolUseId":                        "t1",
		"messages.1.content.1.toolUse.input.city":                       "Paris",
		"messages.2.content.0.toolResult.content.0.text":                "sunny",
		"messages.2.content.0.toolResult.status":                        "error",
		"inferenceConfig.maxTokens":                                     "100",
		"inferenceConfig.temperature":                                   "0.5",
		"inferenceConfig.stopSequences.0":                               "X",
		"toolConfig.tools.0.toolSpec.name":                              "get_weather",
		"toolConfig.tools.0.toolSpec.inputSchema.json.type":             "object",
		"additionalModelRequestFields.thinking.budget_tokens":           "2000",
		"additionalModelRequestFields.top_k":                            "5",
	} {
		if got := g.Get(path).String(); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if !g.Get("toolConfig.toolChoice.any").Exists() || g.Get("model").Exists() || g.Get("stream").Exists() {
		t.Errorf("body %s", body)
	}
}

// TestConverseStreamDecoder: text without a contentBlockStart, a tool
// call's input in pieces, the stop held until metadata brings the usage.
func TestConverseStreamDecoder(t *testing.T) {
	d := bedrockConverseCodec{}.NewStreamDecoder()
	var evs []Event
	for _, f := range [][2]string{
		{"messageStart", `{"role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Let me "}}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"check."}}`},
		{"contentBlockStop", `{"contentBlockIndex":0}`},
		{"contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`},
		{"contentBlockStop", `{"contentBlockIndex":1}`},
		{"messageStop", `{"stopReason":"tool_use"}`},
		{"metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":3},"metrics":{"latencyMs":1}}`},
	} {
		evs = d.Decode(evs, f[0], []byte(f[1]))
	}
	evs = d.End(evs)
	var acc Accumulator
	for i := range evs {
		acc.Add(&evs[i])
	}
	resp, rerr := acc.Result()
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(resp.Parts) != 2 || resp.Parts[0].Text != "Let me check." || resp.Parts[1].ToolCall.Arguments != `{"city":"Paris"}` ||
		resp.Parts[1].ToolCall.ID != "tooluse_1" || resp.StopReason != StopToolUse || resp.Usage.InputTokens != 13 || resp.Usage.CacheReadTokens != 3 {
		t.Errorf("response %+v", resp)
	}
	d = bedrockConverseCodec{}.NewStreamDecoder()
	evs = d.Decode(nil, "contentBlockDelta", []byte(`{"contentBlockIndex":0,"delta":{"text":"x"}}`))
	evs = d.Decode(evs, "exception:modelStreamErrorException", []byte(`{"message":"boom","originalStatusCode":500}`))
	if last := evs[len(evs)-1]; last.Type != EventError || last.Err.Status != 424 || !strings.Contains(last.Err.Message, "boom") {
		t.Errorf("exception: %+v", last)
	}
	if evs := (bedrockConverseCodec{}).NewStreamDecoder().End(nil); evs[len(evs)-1].Type != EventError {
		t.Errorf("an empty stream must end in an error: %+v", evs)
	}
}

// TestConverseDecodeResponse reads a Converse answer.
func TestConverseDecodeResponse(t *testing.T) {
	resp, err := bedrockConverseCodec{}.DecodeResponse([]byte(`{"output":{"message":{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"think","signature":"s"}}},{"text":"hello"},
		{"toolUse":{"toolUseId":"tu1","name":"f","input":{"a":1}}}]}},"stopReason":"tool_use","usage":{"inputTokens":4,"outputTokens":2,"totalTokens":6}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Parts) != 3 || resp.Parts[0].Signature != "s" || resp.Parts[1].Text != "hello" || resp.Parts[2].ToolCall.Arguments != `{"a":1}` ||
		resp.StopReason != StopToolUse || resp.Usage.InputTokens != 4 || resp.Usage.OutputTokens != 2 {
		t.Errorf("%+v", resp)
	}
}

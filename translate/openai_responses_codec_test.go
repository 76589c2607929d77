package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// respFixture reads testdata/openai_responses/<name>.
func respFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "openai_responses", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// respGeneratedID matches the ids the codec makes up, masked in goldens.
var respGeneratedID = regexp.MustCompile(`\b(resp|msg|fc|ctc|rs_redacted|rs)_[0-9a-f]{24}\b`)

func respMaskIDs(b []byte) []byte {
	return respGeneratedID.ReplaceAll(oaiMaskIDs(b), []byte("${1}_<generated>"))
}

// respSSE frames the events an encoder wrote as SSE.
type respFrames struct{ b bytes.Buffer }

func (f *respFrames) WriteFrame(name string, data []byte) {
	fmt.Fprintf(&f.b, "event: %s\ndata: %s\n\n", name, data)
}

// respDecodeStream decodes an SSE body event by event.
func respDecodeStream(t testing.TB, body []byte) []Event {
	t.Helper()
	dec := openAIResponsesCodec{}.NewStreamDecoder()
	var evs []Event
	var name string
	var data []byte
	// A minimal SSE reader (package stream imports translate): events are
	// separated by blank lines, fields are "event:" and "data:".
	for _, block := range strings.Split(string(body), "\n\n") {
		name, data = "", nil
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = []byte(line[len("data: "):])
			}
		}
		if data != nil {
			evs = dec.Decode(evs, name, data)
		}
	}

	return dec.End(evs)
}

func respAccumulate(t testing.TB, evs []Event) (*Response, *Error) {
	t.Helper()
	var a Accumulator
	for i := range evs {
		a.Add(&evs[i])
	}
	return a.Result()
}

func respSummary(r *Response) string {
	var b strings.Builder
	for _, p := range r.Parts {
		switch p.Type {
		case PartToolCall:
			fmt.Fprintf(&b, "tool %s %s(%s)\n", p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.Arguments)
		case PartThinking:
			fmt.Fprintf(&b, "thinking %q sig=%q\n", p.Text, p.Signature)
		default:
			fmt.Fprintf(&b, "%s %q\n", p.Type, p.Text)
		}
	}
	u := r.Usage
	fmt.Fprintf(&b, "stop %s usage %d/%d cache_read=%d reasoning=%d", r.StopReason, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.ReasoningTokens)
	return b.String()
}

func TestOpenAIResponsesCodecRegistered(t *testing.T) {
	c, ok := Lookup(ProtocolOpenAIResponses)
	if !ok || c.Protocol() != ProtocolOpenAIResponses {
		t.Fatal("openai_responses codec not registered")
	}
}

func TestOpenAIResponsesStreamFixtures(t *testing.T) {
	const enc = "gAAAAABowuXyQm9uZ2VuY3J5cHRlZF9yZWFzb25pbmdfYmxvYl9mb3JfdGVzdHNfMDEyMzQ1Njc4OQ=="
	tests := []struct {
		file string
		want string
		err  string
	}{
		{"text.sse", "text \"Hello! How can I help you today?\"\nstop end_turn usage 37/11 cache_read=0 reasoning=0", ""},
		{"function_call.sse", "tool call_2FQdm3Br7Qb35YUBSkDR7kue get_weather({\"city\":\"Beijing\"})\nstop tool_use usage 62/18 cache_read=0 reasoning=0", ""},
		{"reasoning_tool_call.sse", "thinking \"**Checking the weather**\\n\\nThe user wants the weather in Paris.\\n\\nI will call get_weather.\" sig=\"rs_68c2e5f21c48819093e1c0b4f2a5d6e70c7b9e2f1a6d8c3b:" + enc + "\"\n" +
			"tool call_Wz0cXPzcbS1qPN2mDPbUy8Wd get_weather({\"location\":\"Paris\"})\nstop tool_use usage 81/150 cache_read=64 reasoning=128", ""},
		{"custom_tool_call.sse", "tool call_Jq1vJr8wHkZ5t0Xo3uY2pA6c apply_patch({\"input\":\"*** Begin Patch\\n*** Add File: hello.txt\\n+Hello, \\\"world\\\"\\n*** End Patch\\n\"})\nstop tool_use usage 300/40 cache_read=256 reasoning=0", ""},
		{"incomplete_max_tokens.sse", "text \"Once upon a time, in a land far\"\nstop max_tokens usage 20/16 cache_read=0 reasoning=0", ""},
		{"whole_items_no_event_lines.sse", "text \"Listing the files.\"\ntool call_local_0001 exec_command({\"cmd\":\"ls\"})\nstop tool_use usage 12/9 cache_read=0 reasoning=0", ""},
		{"completed_only.sse", "thinking \"Checking the weather.\" sig=\"rs_0a1b2c3d4e5f6071:gAAAAABproxyEncrypted\"\ntext \"Let me look that up.\"\ntool call_proxy_0001 get_weather({\"city\":\"Paris\"})\nstop tool_use usage 40/25 cache_read=0 reasoning=10", ""},
		{"error_failed.sse", "", "billing: You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			evs := respDecodeStream(t, respFixture(t, tt.file))
			golden(t, "openai_responses/stream_decode_"+strings.TrimSuffix(tt.file, ".sse")+".events", oaiDumpEvents(evs))
			resp, err := respAccumulate(t, evs)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := respSummary(resp); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestOpenAIResponsesStreamDecodeCut(t *testing.T) {
	body := respFixture(t, "text.sse")
	cut := body[:bytes.Index(body, []byte("event: response.output_text.done"))]
	_, err := respAccumulate(t, respDecodeStream(t, cut))
	if err == nil || !strings.Contains(err.Message, "ended before the response was complete") {
		t.Fatalf("cut stream: error = %v", err)
	}
	// A flat error event (the spec's shape).
	dec := openAIResponsesCodec{}.NewStreamDecoder()
	evs := dec.Decode(nil, "error", []byte(`{"type":"error","sequence_number":3,"code":"rate_limit_exceeded","message":"Slow down","param":null}`))
	if len(evs) != 1 || evs[0].Type != EventError || evs[0].Err.Kind != ErrRateLimit || evs[0].Err.Message != "Slow down" {
		t.Fatalf("flat error: %s", oaiDumpEvents(evs))
	}
}

// respAgentRequest is a Codex-like client request with a custom tool.
func respAgentRequest() *Request {
	return &Request{
		Model:  "gpt-5.5",
		Stream: true,
		Tools: []Tool{
			{Name: "exec_command", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
			{Name: "apply_patch", Custom: true, Schema: respCustomSchema(gjson.Result{})},
		},
	}
}

// respAgentResponse has every kind of item.
func respAgentResponse() *Response {
	return &Response{
		ID: "msg_01XYZ", Model: "claude-sonnet-4-5",
		Parts: []Part{
			{Type: PartThinking, Text: "Let me run it.", Signature: "EqQBCkYIBxgCKkB"},
			{Type: PartRedactedThinking, Signature: "EmwKAhgBEgy3"},
			{Type: PartText, Text: "Running <it> & \"seeing\"."},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01A", Name: "exec_command", Arguments: `{"cmd":"echo louter-ok"}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01B", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** End Patch\n"}`}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 120, OutputTokens: 45, CacheReadTokens: 100, ReasoningTokens: 9},
	}
}

func TestOpenAIResponsesStreamEncoderGolden(t *testing.T) {
	oaiFixedNow(t)
	req := respAgentRequest()
	var f respFrames
	enc := openAIResponsesCodec{}.NewStreamEncoder(req)
	evs := ResponseEvents(nil, respAgentResponse())
	for i := range evs {
		enc.Encode(&f, &evs[i])
	}
	out := f.b.Bytes()
	golden(t, "openai_responses/stream_encode_agent.sse", respMaskIDs(out))

	// Sequence numbers count from 0; every event name is its type; every
	// item that was added is done, with the same id.
	var seq int64
	added, done := map[string]bool{}, map[string]bool{}
	var last string
	for _, block := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
		lines := strings.SplitN(block, "\n", 2)
		name, data := strings.TrimPrefix(lines[0], "event: "), strings.TrimPrefix(lines[1], "data: ")
		ev := gjson.Parse(data)
		if ev.Get("type").Str != name {
			t.Errorf("event %q carries type %q", name, ev.Get("type").Str)
		}
		if n := ev.Get("sequence_number").Int(); n != seq {
			t.Errorf("sequence_number = %d, want %d", n, seq)
		}
		seq++
		switch name {
		case "response.output_item.added":
			added[ev.Get("item.id").Str] = true
		case "response.output_item.done":
			done[ev.Get("item.id").Str] = true
		}
		last = data
	}
	if len(added) != 5 || len(done) != 5 {
		t.Errorf("items added %v, done %v; want 5 each", added, done)
	}
	for id := range added {
		if !done[id] {
			t.Errorf("item %s added but never done under the same id", id)
		}
	}
	final := gjson.Parse(last)
	if final.Get("type").Str != "response.completed" || final.Get("response.output.#").Int() != 5 || final.Get("response.usage.input_tokens_details.cached_tokens").Int() != 100 {
		t.Errorf("final event: %s", last)
	}
	if got := final.Get("response.output.4").Raw; !strings.Contains(got, `"type":"custom_tool_call"`) || !strings.Contains(got, `"input":"*** Begin Patch\n*** End Patch\n"`) {
		t.Errorf("custom tool item: %s", got)
	}
	if got := final.Get("response.output.0.encrypted_content").Str; got != "EqQBCkYIBxgCKkB" {
		t.Errorf("thinking signature not carried as encrypted_content: %q", got)
	}
}

func TestOpenAIResponsesStreamEncoderEnds(t *testing.T) {
	oaiFixedNow(t)
	tests := []struct {
		name string
		evs  []Event
		want []string // event names, in order, from the first item on
	}{
		{"incomplete", []Event{{Type: EventMessageStart}, {Type: EventBlockStart, Block: BlockText}, {Type: EventBlockDelta, Block: BlockText, Text: "Once"}, {Type: EventBlockStop, Block: BlockText}, {Type: EventMessageStop, Stop: StopMaxTokens}},
			[]string{"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"}},
		{"error mid-text", []Event{{Type: EventMessageStart}, {Type: EventBlockStart, Block: BlockText}, {Type: EventBlockDelta, Block: BlockText, Text: "Once"}, {Type: EventError, Err: &Error{Status: 529, Kind: ErrOverloaded, Message: "Overloaded"}}},
			[]string{"response.output_item.added", "response.content_part.added", "response.output_text.delta", "error", "response.failed"}},
		{"error first", []Event{{Type: EventError, Err: &Error{Status: 401, Kind: ErrAuthentication, Message: "bad key"}}},
			[]string{"error", "response.failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f respFrames
			enc := openAIResponsesCodec{}.NewStreamEncoder(&Request{Model: "m"})
			for i := range tt.evs {
				enc.Encode(&f, &tt.evs[i])
			}
			var names []string
			var last gjson.Result
			for _, block := range strings.Split(strings.TrimSpace(f.b.String()), "\n\n") {
				lines := strings.SplitN(block, "\n", 2)
				name := strings.TrimPrefix(lines[0], "event: ")
				if name != "response.created" && name != "response.in_progress" {
					names = append(names, name)
				}
				last = gjson.Parse(strings.TrimPrefix(lines[1], "data: "))
			}
			if strings.Join(names, " ") != strings.Join(tt.want, " ") {
				t.Errorf("events\n%v\nwant\n%v", names, tt.want)
			}
			switch tt.name {
			case "incomplete":
				if last.Get("response.incomplete_details.reason").Str != "max_output_tokens" {
					t.Errorf("incomplete reason: %s", last.Raw)
				}
			default:
				if last.Get("response.status").Str != "failed" || last.Get("response.error.message").Str == "" {
					t.Errorf("failed response: %s", last.Raw)
				}
			}
		})
	}
}

var respOwnIDs = regexp.MustCompile(`rs_[0-9a-f]+:`)

// TestOpenAIResponsesStreamRoundTrip decodes each fixture, encodes the
// events for a Responses client and decodes that again: the response must
// survive, reasoning item ids and encrypted contents included.
func TestOpenAIResponsesStreamRoundTrip(t *testing.T) {
	for _, file := range []string{"text.sse", "function_call.sse", "reasoning_tool_call.sse", "custom_tool_call.sse", "incomplete_max_tokens.sse", "whole_items_no_event_lines.sse", "completed_only.sse"} {
		t.Run(file, func(t *testing.T) {
			evs := respDecodeStream(t, respFixture(t, file))
			want, err := respAccumulate(t, evs)
			if err != nil {
				t.Fatal(err)
			}
			req := &Request{Model: "m", Tools: []Tool{{Name: "apply_patch", Custom: true}}}
			var f respFrames
			enc := openAIResponsesCodec{}.NewStreamEncoder(req)
			for i := range evs {
				enc.Encode(&f, &evs[i])
			}
			got, err := respAccumulate(t, respDecodeStream(t, f.b.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			// The stream's reasoning items get ids of their own (an item's id
			// is announced before its encrypted content arrives).
			if g, w := respOwnIDs.ReplaceAllString(respSummary(got), "rs_<id>:"), respOwnIDs.ReplaceAllString(respSummary(want), "rs_<id>:"); g != w {
				t.Errorf("round trip\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestOpenAIResponsesDecodeRequestCodex(t *testing.T) {
	req, err := openAIResponsesCodec{}.DecodeRequest(respFixture(t, "request_codex.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai_responses/request_codex.ir.json", oaiDumpJSON(req))

	// The two leading developer messages (1 + 3 input_text parts) are the
	// system prompt; the environment context is the first user message.
	if len(req.System) != 4 || req.Messages[0].Role != RoleUser {
		t.Errorf("developer messages should be the system prompt: %d system parts", len(req.System))
	}
	var custom *Tool
	names := map[string]bool{}
	for i := range req.Tools {
		names[req.Tools[i].Name] = true
		if req.Tools[i].Custom {
			custom = &req.Tools[i]
		}
	}
	if custom == nil || custom.Name != "apply_patch" || !strings.Contains(gjson.GetBytes(custom.Schema, "properties.input.description").Str, "begin_patch hunk+ end_patch") {
		t.Errorf("custom tool: %+v", custom)
	}
	if !names["search_docs"] || names["web_search"] || names["tool_search"] {
		t.Errorf("namespace tools must be flattened and hosted tools left out: %v", names)
	}
	if len(req.ServerTools) != 1 || req.ServerTools[0].Kind != ServerWebSearch {
		t.Errorf("Codex's web_search must be a server tool: %+v", req.ServerTools)
	}
	// Codex's web_search_call item is the record of a search: a call and
	// its result in the assistant's turn.
	var calls, results int
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Server != nil && p.Server.ID == "ws_1" && m.Role == RoleAssistant {
				switch p.Type {
				case PartServerToolCall:
					calls++
					if p.Server.Query != "x" {
						t.Errorf("web_search_call query = %q", p.Server.Query)
					}
				case PartServerToolResult:
					results++
				}
			}
		}
	}
	if calls != 1 || results != 1 {
		t.Errorf("web_search_call ws_1: %d calls and %d results, want 1 and 1", calls, results)
	}
	for _, want := range []string{"tools.tool_search: ", "tools.namespace: ", "prompt_cache_key: ", "client_metadata: ", "text.verbosity: "} {
		found := false
		for _, d := range req.Dropped {
			found = found || strings.HasPrefix(d, want)
		}
		if !found {
			t.Errorf("no drop %q in %q", want, req.Dropped)
		}
	}
}

func TestOpenAIResponsesDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		body, param, msg string
	}{
		{`{"model":"m","input":"hi","previous_response_id":"resp_1"}`, "previous_response_id", "stateless"},
		{`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]", "item_reference"},
		// Codex's remote compaction: served by the gateway, never
		// dropped into an ordinary turn.
		{`{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"}]}`, "input[1]", "compaction_trigger"},
		{`{"input":"hi"}`, "model", "model"},
		{`{"model":"m"}`, "input", "required"},
		{`{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "call_id"},
		{`{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role", "unknown role"},
		{`{"model":"m","input":"x","tools":[{"type":"function"}]}`, "tools[0].name", "name"},
		{`not json`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		_, err := openAIResponsesCodec{}.DecodeRequest([]byte(tt.body))
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: error = %#v", tt.body, err)
			continue
		}
		body := openAIResponsesCodec{}.EncodeError(e)
		if gjson.GetBytes(body, "error.type").Str != "invalid_request_error" || gjson.GetBytes(body, "error.param").Str != tt.param {
			t.Errorf("%s: error body %s", tt.body, body)
		}
	}
}

func TestOpenAIResponsesDecodeRequestFields(t *testing.T) {
	req, err := openAIResponsesCodec{}.DecodeRequest([]byte(`{"model":"m","instructions":"Be brief.","input":"hi",
		"reasoning":{"effort":"high","summary":"detailed"},"max_output_tokens":500,"temperature":0.2,
		"tool_choice":{"type":"function","name":"f"},"parallel_tool_calls":false,"stream":true,"store":false,
		"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}},"user":"u1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.System[0].Text != "Be brief." || req.Messages[0].Parts[0].Text != "hi" || req.MaxTokens != 500 || *req.Temperature != 0.2 ||
		req.Reasoning.Effort != "high" || req.Reasoning.Display != "detailed" || req.ToolChoice.Name != "f" || *req.ParallelToolCalls ||
		!req.Stream || req.ResponseFormat.Name != "out" || string(req.ResponseFormat.Schema) != `{"type":"object"}` || req.User != "u1" || len(req.Dropped) != 0 {
		t.Errorf("decoded: %s dropped %q", oaiDumpJSON(req), req.Dropped)
	}
}

func TestOpenAIResponsesEncodeRequest(t *testing.T) {
	req := oaiClaudeCodeTurn()
	// Reasoning that came from a Responses backend goes back as its item;
	// Anthropic's signed thinking cannot.
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Parts: []Part{
			{Type: PartThinking, Text: "Plan.", Signature: "rs_abc123:gAAAAenc"},
			{Type: PartText, Text: "Done."},
		}},
		Message{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "Thanks"}}},
	)
	body, err := openAIResponsesCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	golden(t, "openai_responses/encode_claude_code_turn.json", oaiIndent(t, body))
	root := gjson.ParseBytes(body)
	if root.Get("store").Type != gjson.False || root.Get("include.0").Str != "reasoning.encrypted_content" {
		t.Errorf("store/include: %s", body)
	}
	if root.Get(`input.#(type=="reasoning").id`).Str != "rs_abc123" || root.Get(`input.#(type=="reasoning").encrypted_content`).Str != "gAAAAenc" {
		t.Errorf("reasoning item: %s", root.Get("input").Raw)
	}
	root.Get("tools").ForEach(func(_, tool gjson.Result) bool {
		if tool.Get("type").Str != "function" || tool.Get("function").Exists() || tool.Get("strict").Type != gjson.False {
			t.Errorf("tool not flat and non-strict: %s", tool.Raw)
		}
		return true
	})
}

func TestOpenAIResponsesResponseRoundTrip(t *testing.T) {
	oaiFixedNow(t)
	req := respAgentRequest()
	body, err := openAIResponsesCodec{}.EncodeResponse(respAgentResponse(), req)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai_responses/encode_response_agent.json", respMaskIDs(oaiIndent(t, body)))
	back, err := openAIResponsesCodec{}.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if back.StopReason != StopToolUse || back.Usage != respAgentResponse().Usage || len(back.Parts) != 5 ||
		back.Parts[1].Type != PartRedactedThinking || back.Parts[1].Signature != "EmwKAhgBEgy3" {
		t.Errorf("decoded back: %s", respSummary(back))
	}

	// Failed and incomplete responses.
	if _, err := (openAIResponsesCodec{}).DecodeResponse([]byte(`{"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"slow"},"output":[]}`)); err == nil || err.(*Error).Kind != ErrRateLimit {
		t.Errorf("failed response: %v", err)
	}
	r, err := openAIResponsesCodec{}.DecodeResponse([]byte(`{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`))
	if err != nil || r.StopReason != StopRefusal {
		t.Errorf("incomplete response: %v %v", r, err)
	}
}

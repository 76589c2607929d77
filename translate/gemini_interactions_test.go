package translate

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// interactionsDump is the IR as the golden files hold it.
func interactionsDump(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// interactionsRequests are requests as Interactions clients send them.
var interactionsRequests = map[string]string{
	"string_input": `{"model":"gemini-3.5-flash","input":"Tell me a story","stream":true}`,
	"content_list": `{"model":"models/gemini-3.5-flash","system_instruction":"Be brief.",
		"input":[{"type":"text","text":"What is this?"},{"type":"image","data":"iVBORw0KGgo=","mime_type":"image/png"},
		{"type":"document","uri":"https://example.com/a.pdf","mime_type":"application/pdf"}],"store":false}`,
	// A stateless tool round trip: the whole history as steps, the
	// thought signature and the call id (a Gemini backend's signature
	// folded in) handed back as the previous answer gave them.
	"tool_round_trip": `{"model":"gemini-3.5-flash","system_instruction":"You are a coding agent.","store":false,
		"input":[
		 {"type":"user_input","content":[{"type":"text","text":"List the repo files."}]},
		 {"type":"thought","signature":"Et0ECtoE","summary":[{"type":"text","text":"Need the file list."}]},
		 {"type":"thought","signature":"redacted_thinking:EmwKAhgB"},
		 {"type":"function_call","id":"call_1-ts-AAEC","name":"list_files","arguments":{"dir":"."}},
		 {"type":"function_result","call_id":"call_1-ts-AAEC","name":"list_files","result":"README.md\nmain.go"},
		 {"type":"function_result","call_id":"call_2","result":[{"type":"text","text":"denied"}],"is_error":true},
		 {"type":"user_input","content":[{"type":"text","text":"Now summarise."}]},
		 {"type":"model_output","content":[{"type":"text","text":"Two files."}]}],
		"tools":[{"type":"function","name":"list_files","description":"List files","parameters":{"type":"object","properties":{"dir":{"type":"string"}}}},
		 {"function_declarations":[{"name":"read_file","parameters":{"type":"object"}}]},
		 {"type":"google_search"}],
		"generation_config":{"temperature":0.2,"top_p":0.9,"seed":7,"max_output_tokens":1024,"stop_sequences":["END"],
		 "thinking_level":"low","thinking_summaries":"auto","tool_choice":{"allowed_tools":{"mode":"any","tools":["list_files"]}},
		 "speech_config":{"voice":"x"}},
		"response_format":{"type":"text","mime_type":"application/json","schema":{"type":"object"}},
		"safety_settings":[],"made_up":1}`,
}

// TestInteractionsDecodeRequest checks the IR of each request against its
// golden file (go test -run TestInteractionsDecodeRequest -update).
func TestInteractionsDecodeRequest(t *testing.T) {
	for name, body := range interactionsRequests {
		t.Run(name, func(t *testing.T) {
			req, err := interactionsCodec{}.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "gemini_interactions/"+name+".ir.json", interactionsDump(t, req))
		})
	}
}

// TestInteractionsRefusals checks the 400s: each names its field, in the
// Interactions API's error shape, and none is a silent drop.
func TestInteractionsRefusals(t *testing.T) {
	for _, tt := range []struct{ name, body, param, says string }{
		{"not json", `{"model":`, "", "not valid JSON"},
		{"no model", `{"input":"hi"}`, "model", "model name is required"},
		{"model not a string", `{"model":3,"input":"hi"}`, "model", "expected a string"},
		{"agent", `{"agent":"deep-research-preview-04-2026","input":"hi"}`, "agent", "agents run only at Google"},
		{"no input", `{"model":"m"}`, "input", "input: field is required"},
		{"empty input", `{"model":"m","input":[]}`, "input", "no input"},
		{"previous interaction", `{"model":"m","input":"hi","previous_interaction_id":"v1_abc"}`, "previous_interaction_id", "interactions are not stored here"},
		{"store true", `{"model":"m","input":"hi","store":true}`, "store", "interactions are not stored here"},
		{"continuation", `{"model":"m","input":"hi","continuation_token":"tok"}`, "continuation_token", "interactions are not stored here"},
		{"background", `{"model":"m","input":"hi","background":true}`, "background", "background interactions are not supported"},
		{"stream not bool", `{"model":"m","input":"hi","stream":"yes"}`, "stream", "expected a boolean"},
		{"call without id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":{}}]}`, "input[0].id", "needs the call's id"},
		{"result without call id", `{"model":"m","input":[{"type":"function_result","result":"x"}]}`, "input[0].call_id", "needs the id of the call"},
		{"builtin step", `{"model":"m","input":[{"type":"google_search_call","id":"x"}]}`, "input[0].type", "run only at Google"},
		{"unknown step", `{"model":"m","input":[{"type":"user_input","content":"hi"},{"type":"nope"}]}`, "input[1].type", "unknown step type"},
		{"audio", `{"model":"m","input":[{"type":"audio","data":"AAAA","mime_type":"audio/wav"}]}`, "input[0].type", "audio content is not supported"},
		{"temperature", `{"model":"m","input":"hi","generation_config":{"temperature":9}}`, "generation_config.temperature", "above the maximum"},
		{"image output", `{"model":"m","input":"hi","response_modalities":["image"]}`, "response_modalities", "text only"},
		{"tool without name", `{"model":"m","input":"hi","tools":[{"type":"function"}]}`, "tools[0].name", "needs a name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := interactionsCodec{}.DecodeRequest([]byte(tt.body))
			e, ok := err.(*Error)
			if !ok || e.Status != 400 || e.Param != tt.param || !strings.Contains(e.Message, tt.says) {
				t.Fatalf("got %#v, want a 400 on %q saying %q", err, tt.param, tt.says)
			}
			body := interactionsCodec{}.EncodeError(e)
			if got := gjson.GetBytes(body, "error.code"); got.Str != "invalid_request" || gjson.GetBytes(body, "error.message").Str != e.Message {
				t.Fatalf("error body %s", body)
			}
		})
	}
}

var (
	reInteractionID   = regexp.MustCompile(`v1_[0-9a-f]{24}`)
	reInteractionTime = regexp.MustCompile(`"(created|updated)":"[^"]+"`)
)

// TestInteractionsEncodeResponse checks an interaction against its golden
// file: one step per part (text parts sharing a model_output step),
// requires_action after calls, the signatures where the client hands them
// back from, usage with thoughts apart.
func TestInteractionsEncodeResponse(t *testing.T) {
	resp := &Response{
		ID: "msg_1", Model: "backend-model", StopReason: StopEndTurn,
		Parts: []Part{
			{Type: PartThinking, Text: "Need the file list.", Signature: "Et0ECtoE"},
			{Type: PartRedactedThinking, Signature: "EmwKAhgB"},
			{Type: PartText, Text: "Let me look."},
			{Type: PartText, Text: " Right away."},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_1-ts-AAEC", Name: "list_files", Arguments: `{"dir":"."}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "call_2", Name: "broken", Arguments: `{"dir":`}},
		},
		Usage: Usage{InputTokens: 100, OutputTokens: 40, CacheReadTokens: 10, ReasoningTokens: 25},
	}
	body, err := interactionsCodec{}.EncodeResponse(resp, &Request{Model: "client-model"})
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	body = reInteractionID.ReplaceAll(body, []byte("v1_GENERATED"))
	body = reInteractionTime.ReplaceAll(body, []byte(`"$1":"TIME"`))
	var pretty map[string]any
	if err := json.Unmarshal(body, &pretty); err != nil {
		t.Fatal(err)
	}
	golden(t, "gemini_interactions/encode_response.json", interactionsDump(t, pretty))

	// What the client sends back decodes to the same calls and thoughts.
	steps := gjson.GetBytes(body, "steps").Raw
	req, err := interactionsCodec{}.DecodeRequest([]byte(`{"model":"m","input":` + steps + `}`))
	if err != nil {
		t.Fatal(err)
	}
	parts := req.Messages[0].Parts
	if len(req.Messages) != 1 || len(parts) != 6 || parts[0].Signature != "Et0ECtoE" || parts[1].Type != PartRedactedThinking ||
		parts[1].Signature != "EmwKAhgB" || parts[4].ToolCall.ID != "call_1-ts-AAEC" || parts[4].ToolCall.Arguments != `{"dir":"."}` {
		t.Fatalf("round trip: %+v", req.Messages)
	}
}

// TestInteractionsErrors checks the error shape both ways.
func TestInteractionsErrors(t *testing.T) {
	for _, tt := range []struct {
		e            *Error
		status       int
		code, starts string
	}{
		{&Error{Status: 429, Kind: ErrRateLimit, Message: "slow down"}, 429, "rate_limit_exceeded", "slow down"},
		{&Error{Status: 529, Kind: ErrOverloaded, Message: "busy"}, 503, "unavailable", "busy"},
		{&Error{Status: 401, Kind: ErrAuthentication, Message: "bad key"}, 401, "authentication", "bad key"},
		{&Error{Kind: ErrContextOverflow, Message: "too long", PromptTokens: 9, ContextLimit: 5}, 400, "invalid_request", "The input token count (9)"},
	} {
		body := interactionsCodec{}.EncodeError(tt.e)
		if gjson.GetBytes(body, "error.code").Str != tt.code || !strings.HasPrefix(gjson.GetBytes(body, "error.message").Str, tt.starts) {
			t.Errorf("%v: %s", tt.e, body)
		}
		if got := ClientStatus(ProtocolGeminiInteractions, tt.e); got != tt.status {
			t.Errorf("%v: status %d, want %d", tt.e, got, tt.status)
		}
	}
	e := interactionsCodec{}.DecodeError(404, []byte(`{"error":{"code":"model_not_found","message":"no such model"}}`))
	if e.Kind != ErrNotFound || e.Code != "model_not_found" || e.Message != "no such model" {
		t.Errorf("decode: %+v", e)
	}
	e = interactionsCodec{}.DecodeError(400, []byte(`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`))
	if e.Kind != ErrInvalidRequest || e.Message != "bad" {
		t.Errorf("decode google.rpc: %+v", e)
	}
}

// TestInteractionsBackendRefused checks that the backend half answers with
// an error, not a panic or an empty body.
func TestInteractionsBackendRefused(t *testing.T) {
	c := interactionsCodec{}
	if _, err := c.EncodeRequest(&Request{}); err == nil {
		t.Error("EncodeRequest: no error")
	}
	if _, err := c.DecodeResponse([]byte(`{}`)); err == nil {
		t.Error("DecodeResponse: no error")
	}
	evs := c.NewStreamDecoder().Decode(nil, "step.delta", []byte(`{}`))
	if len(evs) != 1 || evs[0].Type != EventError {
		t.Errorf("stream decoder: %+v", evs)
	}
}

// FuzzInteractionsDecodeRequest: any body gets a request or a 400, never a
// panic; a request always has a model and a conversation.
func FuzzInteractionsDecodeRequest(f *testing.F) {
	for _, body := range interactionsRequests {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"model":"m","input":{"type":"text","text":"hi"}}`))
	f.Add([]byte(`{"model":"m","input":[{"type":"thought"},{"type":"function_result","call_id":"c","result":{"a":1}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := interactionsCodec{}.DecodeRequest(body)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != 400 || e.Message == "" {
				t.Fatalf("error %#v", err)
			}
			return
		}
		if req.Model == "" || len(req.Messages) == 0 {
			t.Fatalf("request without model or messages: %+v", req)
		}
	})
}

// TestInteractionsMixedInput: content blocks among steps are user input.
func TestInteractionsMixedInput(t *testing.T) {
	req, err := interactionsCodec{}.DecodeRequest([]byte(`{"model":"m","input":[
		{"type":"model_output","content":[{"type":"text","text":"Hi."}]},{"type":"text","text":"Hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 2 || req.Messages[1].Role != RoleUser || req.Messages[1].Parts[0].Text != "Hello" {
		t.Fatalf("%+v", req.Messages)
	}
}

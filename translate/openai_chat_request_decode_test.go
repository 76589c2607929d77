package translate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func oaiDecode(t *testing.T, body string) *Request {
	t.Helper()
	req, err := openAIChatCodec{}.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	return req
}

func TestOpenAIChatDecodeRequestGolden(t *testing.T) {
	for _, name := range []string{"request_agent_turn", "request_minimal", "request_legacy_functions", "request_self_hosted"} {
		t.Run(name, func(t *testing.T) {
			req, err := openAIChatCodec{}.DecodeRequest(oaiFixture(t, name+".json"))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			golden(t, "openai_chat/"+name+".ir.json", oaiDumpJSON(req))
		})
	}
}

// TestOpenAIChatDecodeRequestAgentTurn spells out the facts the agent-turn
// golden holds, so a careless -update cannot bless a regression.
func TestOpenAIChatDecodeRequestAgentTurn(t *testing.T) {
	req, err := openAIChatCodec{}.DecodeRequest(oaiFixture(t, "request_agent_turn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.System) != 3 || req.System[1].Text != "Prefer small, reviewable diffs." {
		t.Errorf("System = %+v, want the system text and both developer parts", req.System)
	}
	roles := []Role{}
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
	}
	wantRoles := []Role{RoleUser, RoleAssistant, RoleUser, RoleAssistant, RoleUser, RoleSystem}
	if !reflect.DeepEqual(roles, wantRoles) {
		t.Fatalf("roles = %v, want %v", roles, wantRoles)
	}
	img := req.Messages[0].Parts[1]
	if img.Type != PartImage || img.Media.MediaType != "image/png" || !strings.HasPrefix(img.Media.Data, "iVBOR") || img.Media.Detail != "high" {
		t.Errorf("image part = %+v %+v", img, img.Media)
	}
	asst := req.Messages[1].Parts
	if asst[0].Type != PartThinking || asst[0].Signature != "" || asst[1].Type != PartText || asst[2].Type != PartToolCall {
		t.Errorf("assistant parts out of order: %+v", asst)
	}
	if got := asst[3].ToolCall.Arguments; got != `{"path":"go.mod",  "limit": 20}` {
		t.Errorf("arguments not kept verbatim: %q", got)
	}
	// Two tool messages and the user text that followed: one user message,
	// results first.
	turn := req.Messages[2].Parts
	if len(turn) != 3 || turn[0].ToolResult.CallID != "call_log001" || turn[1].ToolResult.CallID != "call_mod002" || turn[2].Text != "Also check the CI config." {
		t.Errorf("merged tool turn = %+v", turn)
	}
	if got := turn[1].ToolResult.Content; len(got) != 2 || got[1].Text != "go 1.21" {
		t.Errorf("tool result content = %+v", got)
	}
	if len(req.Tools) != 2 || req.Tools[0].Strict == nil || !*req.Tools[0].Strict || req.Tools[1].Strict != nil {
		t.Errorf("tools = %+v", req.Tools)
	}
	if string(req.Tools[0].Schema) != `{"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}}, "required": ["path", "limit"], "additionalProperties": false}` {
		t.Errorf("schema not kept verbatim: %s", req.Tools[0].Schema)
	}
	if req.ToolChoice == nil || req.ToolChoice.Mode != ToolChoiceTool || req.ToolChoice.Name != "read_file" {
		t.Errorf("tool choice = %+v", req.ToolChoice)
	}
	if req.ParallelToolCalls == nil || *req.ParallelToolCalls {
		t.Errorf("parallel_tool_calls = %v", req.ParallelToolCalls)
	}
	if req.MaxTokens != 4096 {
		t.Errorf("MaxTokens = %d, want max_completion_tokens (4096)", req.MaxTokens)
	}
	if rf := req.ResponseFormat; rf == nil || rf.Type != "json_schema" || rf.Name != "diagnosis" || rf.Strict == nil || len(rf.Schema) == 0 {
		t.Errorf("response format = %+v", rf)
	}
	if r := req.Reasoning; r == nil || r.Effort != "high" || r.Mode != ReasoningEnabled {
		t.Errorf("reasoning = %+v", r)
	}
	if !req.Stream || !req.IncludeUsage || req.User != "user-1234" || *req.Seed != 42 || len(req.StopSequences) != 2 {
		t.Errorf("stream=%v usage=%v user=%q seed=%v stop=%v", req.Stream, req.IncludeUsage, req.User, req.Seed, req.StopSequences)
	}
	wantDropped := []string{
		"store: louter does not store completions",
		"metadata: stored-completion metadata has no equivalent",
		"service_tier: service tiers are provider-specific",
	}
	if !reflect.DeepEqual(req.Dropped, wantDropped) {
		t.Errorf("Dropped = %q, want %q", req.Dropped, wantDropped)
	}
}

func TestOpenAIChatDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, wantMsg, wantParam string
	}{
		{"invalid JSON", `{"model":`, "not valid JSON", ""},
		{"not an object", `["model"]`, "must be a JSON object", ""},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model", "model"},
		{"empty model", `{"model":"","messages":[{"role":"user","content":"hi"}]}`, "model", "model"},
		{"missing messages", `{"model":"m"}`, "messages: field is required", "messages"},
		{"messages not array", `{"model":"m","messages":{"role":"user"}}`, "expected an array", "messages"},
		{"empty messages", `{"model":"m","messages":[]}`, "at least one message", "messages"},
		{"message not object", `{"model":"m","messages":["hi"]}`, "must be an object", "messages[0]"},
		{"missing role", `{"model":"m","messages":[{"content":"hi"}]}`, "a role is required", "messages[0].role"},
		{"unknown role", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"robot","content":"hi"}]}`, `unknown role "robot"`, "messages[1].role"},
		{"tool without tool_call_id", `{"model":"m","messages":[{"role":"tool","content":"42"}]}`, "tool_call_id", "messages[0].tool_call_id"},
		{"tool call without name", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"arguments":"{}"}}]}]}`, "function name is required", "messages[0].tool_calls[0].function.name"},
		{"n > 1", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, "n > 1 is not supported", "n"},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "must be a string or an array", "messages[0].content"},
		{"part without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"x"}]}]}`, "part type is required", "messages[0].content[0].type"},
		{"image without url", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "image URL is required", "messages[0].content[0].image_url.url"},
		{"tool without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"parameters":{}}}]}`, "function name is required", "tools[0].function.name"},
		{"bad tool_choice", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"}`, "unknown value", "tool_choice"},
		{"temperature string", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":"hot"}`, "expected a decimal", "temperature"},
		{"negative max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":-1}`, "below minimum value", "max_tokens"},
		{"stop of numbers", `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]}`, "stop", "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := openAIChatCodec{}.DecodeRequest([]byte(tt.body))
			if err == nil {
				t.Fatalf("no error, request %+v", req)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error", err)
			}
			if e.Status != 400 || e.Kind != ErrInvalidRequest {
				t.Errorf("status %d kind %s, want 400 invalid_request", e.Status, e.Kind)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("message %q does not mention %q", e.Message, tt.wantMsg)
			}
			if e.Param != tt.wantParam {
				t.Errorf("param %q, want %q", e.Param, tt.wantParam)
			}
		})
	}
}

func TestOpenAIChatDecodeRequestMessages(t *testing.T) {
	t.Run("tool results merge, later user text joins them", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[
			{"role":"user","content":"go"},
			{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":""}}]},
			{"role":"tool","tool_call_id":"a","content":"1"},
			{"role":"tool","tool_call_id":"b","content":[{"type":"text","text":"2"}]},
			{"role":"user","content":"thanks"},
			{"role":"user","content":"again"}]}`)
		if len(req.Messages) != 4 {
			t.Fatalf("%d messages, want 4: %s", len(req.Messages), oaiDumpJSON(req.Messages))
		}
		m := req.Messages[2]
		if m.Role != RoleUser || len(m.Parts) != 3 || m.Parts[0].ToolResult.CallID != "a" || m.Parts[1].ToolResult.CallID != "b" || m.Parts[2].Text != "thanks" {
			t.Errorf("merged message = %s", oaiDumpJSON(m))
		}
		if req.Messages[3].Parts[0].Text != "again" {
			t.Errorf("a second user message must stay separate: %s", oaiDumpJSON(req.Messages[3]))
		}
		if args := req.Messages[1].Parts[1].ToolCall.Arguments; args != "{}" {
			t.Errorf("empty arguments = %q, want {}", args)
		}
	})
	t.Run("system between tool results and user text ends the run", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[
			{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"a","content":"1"},
			{"role":"system","content":"note"},
			{"role":"user","content":"next"}]}`)
		var roles []Role
		for _, m := range req.Messages {
			roles = append(roles, m.Role)
		}
		if !reflect.DeepEqual(roles, []Role{RoleAssistant, RoleUser, RoleSystem, RoleUser}) {
			t.Errorf("roles = %v", roles)
		}
	})
	t.Run("reasoning field precedence", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[
			{"role":"assistant","reasoning_content":"A","reasoning":"B","reasoning_details":[{"text":"C"}],"content":"x"},
			{"role":"assistant","reasoning":"B","reasoning_details":[{"text":"C"}],"content":"x"},
			{"role":"assistant","reasoning_details":[{"type":"reasoning.text","text":"C"},{"type":"reasoning.encrypted","data":"zzz"},{"text":"D"}],"content":"x"}]}`)
		for i, want := range []string{"A", "B", "CD"} {
			p := req.Messages[i].Parts[0]
			if p.Type != PartThinking || p.Text != want {
				t.Errorf("message %d thinking = %+v, want %q", i, p, want)
			}
		}
	})
	t.Run("deprecated function call and result share an id", func(t *testing.T) {
		req := oaiDecode(t, string(oaiFixture(t, "request_legacy_functions.json")))
		call := req.Messages[1].Parts[0].ToolCall
		res := req.Messages[2].Parts[0].ToolResult
		if call == nil || res == nil || call.ID == "" || call.ID != res.CallID || res.Name != "get_weather" {
			t.Errorf("call %+v result %+v", call, res)
		}
		if req.ToolChoice.Mode != ToolChoiceAuto || len(req.Tools) != 1 || req.MaxTokens != 256 || req.User != "hash-99" || *req.TopK != 40 {
			t.Errorf("legacy fields: choice %+v tools %d max %d user %q", req.ToolChoice, len(req.Tools), req.MaxTokens, req.User)
		}
		if !reflect.DeepEqual(req.StopSequences, []string{"\n\n"}) {
			t.Errorf("stop = %q", req.StopSequences)
		}
		if got := req.Messages[3].Parts; len(got) != 2 || got[1].Text != "but I won't guess tomorrow." {
			t.Errorf("refusal part = %+v", got)
		}
	})
	t.Run("assistant refusal field and null content", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"assistant","content":null,"refusal":"No."}]}`)
		if p := req.Messages[0].Parts; len(p) != 1 || p[0].Text != "No." {
			t.Errorf("parts = %+v", p)
		}
	})
	t.Run("tool call arguments as an object", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x": 1}}}]}]}`)
		if got := req.Messages[0].Parts[0].ToolCall.Arguments; got != `{"x": 1}` {
			t.Errorf("arguments = %q", got)
		}
	})
	t.Run("tool call without id gets one", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}]}`)
		if id := req.Messages[0].Parts[0].ToolCall.ID; !oaiGeneratedID.MatchString(id) {
			t.Errorf("id = %q", id)
		}
	})
	t.Run("only system messages", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"system","content":"s"}]}`)
		if len(req.System) != 1 || len(req.Messages) != 0 {
			t.Errorf("system %+v messages %+v", req.System, req.Messages)
		}
	})
	t.Run("non-base64 data URL is dropped", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/svg+xml,<svg/>"}}]}]}`)
		if len(req.Messages[0].Parts) != 1 || len(req.Dropped) != 1 || !strings.Contains(req.Dropped[0], "base64") {
			t.Errorf("parts %+v dropped %q", req.Messages[0].Parts, req.Dropped)
		}
	})
	t.Run("cache_control on a text part is kept", func(t *testing.T) {
		req := oaiDecode(t, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"big","cache_control":{"type":"ephemeral"}}]}]}`)
		if cc := string(req.Messages[0].Parts[0].CacheControl); cc != `{"type":"ephemeral"}` {
			t.Errorf("cache_control = %q", cc)
		}
	})
}

func TestOpenAIChatDecodeRequestFields(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"x"}]`
	tests := []struct {
		name  string
		extra string
		check func(t *testing.T, r *Request)
	}{
		{"max_tokens alone", `"max_tokens":77`, func(t *testing.T, r *Request) {
			if r.MaxTokens != 77 {
				t.Errorf("MaxTokens = %d", r.MaxTokens)
			}
		}},
		{"max_completion_tokens wins in any order", `"max_completion_tokens":5,"max_tokens":9`, func(t *testing.T, r *Request) {
			if r.MaxTokens != 5 {
				t.Errorf("MaxTokens = %d", r.MaxTokens)
			}
		}},
		{"reasoning_effort none disables", `"reasoning_effort":"none"`, func(t *testing.T, r *Request) {
			if r.Reasoning == nil || r.Reasoning.Mode != ReasoningDisabled || r.Reasoning.Effort != "none" {
				t.Errorf("Reasoning = %+v", r.Reasoning)
			}
		}},
		{"reasoning_effort minimal enables", `"reasoning_effort":"minimal"`, func(t *testing.T, r *Request) {
			if r.Reasoning == nil || r.Reasoning.Mode != ReasoningEnabled || r.Reasoning.Effort != "minimal" {
				t.Errorf("Reasoning = %+v", r.Reasoning)
			}
		}},
		{"tool_choice strings", `"tool_choice":"required"`, func(t *testing.T, r *Request) {
			if r.ToolChoice == nil || r.ToolChoice.Mode != ToolChoiceRequired {
				t.Errorf("ToolChoice = %+v", r.ToolChoice)
			}
		}},
		{"allowed_tools", `"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}}`, func(t *testing.T, r *Request) {
			if r.ToolChoice == nil || r.ToolChoice.Mode != ToolChoiceAuto || !reflect.DeepEqual(r.ToolChoice.Allowed, []string{"a", "b"}) {
				t.Errorf("ToolChoice = %+v", r.ToolChoice)
			}
		}},
		{"user wins over safety_identifier", `"safety_identifier":"s","user":"u"`, func(t *testing.T, r *Request) {
			if r.User != "u" {
				t.Errorf("User = %q", r.User)
			}
		}},
		{"n = 1 is fine", `"n":1`, func(t *testing.T, r *Request) {}},
		{"explicit defaults are not drops", `"logprobs":false,"store":false,"metadata":null,"modalities":["text"]`, func(t *testing.T, r *Request) {
			if len(r.Dropped) != 0 {
				t.Errorf("Dropped = %q", r.Dropped)
			}
		}},
		{"drops with reasons", `"logprobs":true,"top_logprobs":3,"prediction":{"type":"content","content":"x"},"audio":{"voice":"alloy"},"modalities":["text","audio"],"frobnicate":1`, func(t *testing.T, r *Request) {
			want := []string{
				"logprobs: log probabilities are not translated",
				"top_logprobs: log probabilities are not translated",
				"prediction: predicted outputs are not supported",
				"audio: audio output is not supported",
				"modalities: only text output is supported",
				"frobnicate: unknown field",
			}
			if !reflect.DeepEqual(r.Dropped, want) {
				t.Errorf("Dropped = %q", r.Dropped)
			}
		}},
		{"stream without include_usage", `"stream":true,"stream_options":{"include_usage":false}`, func(t *testing.T, r *Request) {
			if !r.Stream || r.IncludeUsage {
				t.Errorf("Stream %v IncludeUsage %v", r.Stream, r.IncludeUsage)
			}
		}},
		{"response_format json_object", `"response_format":{"type":"json_object"}`, func(t *testing.T, r *Request) {
			if r.ResponseFormat == nil || r.ResponseFormat.Type != "json_object" {
				t.Errorf("ResponseFormat = %+v", r.ResponseFormat)
			}
		}},
		{"custom tool dropped", `"tools":[{"type":"custom","custom":{"name":"patch"}},{"type":"function","function":{"name":"f"}}]`, func(t *testing.T, r *Request) {
			if len(r.Tools) != 1 || r.Tools[0].Name != "f" || r.Tools[0].Schema != nil || len(r.Dropped) != 1 {
				t.Errorf("Tools = %+v Dropped = %q", r.Tools, r.Dropped)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, oaiDecode(t, `{"model":"m",`+msgs+`,`+tt.extra+`}`))
		})
	}
}

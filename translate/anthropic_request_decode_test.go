package translate

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func anthDecode(t *testing.T, body []byte) *Request {
	t.Helper()
	req, err := anthropicCodec{}.DecodeRequest(body)
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	return req
}

func TestAnthropicDecodeRequestGolden(t *testing.T) {
	for _, name := range []string{"request_claude_code", "request_features", "request_roundtrip"} {
		t.Run(name, func(t *testing.T) {
			req := anthDecode(t, anthFixture(t, name+".json"))
			golden(t, "anthropic/"+name+".ir.json", anthDumpJSON(req))
		})
	}
}

// TestAnthropicDecodeClaudeCode checks the facts of a Claude Code request
// that other codecs rely on, independently of the golden file.
func TestAnthropicDecodeClaudeCode(t *testing.T) {
	req := anthDecode(t, anthFixture(t, "request_claude_code.json"))

	if req.Model != "claude-sonnet-4-5-20250929" || req.MaxTokens != 128000 || !req.Stream {
		t.Errorf("model/max_tokens/stream = %q/%d/%v", req.Model, req.MaxTokens, req.Stream)
	}
	if len(req.System) != 3 {
		t.Fatalf("system parts = %d, want 3", len(req.System))
	}
	if string(req.System[1].CacheControl) != `{"type": "ephemeral"}` {
		t.Errorf("system[1] cache_control = %s, want the raw bytes", req.System[1].CacheControl)
	}
	if string(req.System[2].CacheControl) != `{"type": "ephemeral", "ttl": "1h"}` {
		t.Errorf("system[2] cache_control = %s", req.System[2].CacheControl)
	}

	if n := len(req.Messages); n != 4 {
		t.Fatalf("messages = %d, want 4", n)
	}
	last := req.Messages[3]
	if last.Role != RoleSystem || len(last.Parts) != 1 || !strings.Contains(last.Parts[0].Text, "TodoWrite") {
		t.Errorf("last message = %+v, want the role:system reminder", last)
	}
	user := req.Messages[0]
	if img := user.Parts[2]; img.Type != PartImage || img.Media.MediaType != "image/png" || !strings.HasPrefix(img.Media.Data, "iVBORw0KGgo") {
		t.Errorf("image part = %+v", img)
	}
	asst := req.Messages[1]
	if th := asst.Parts[0]; th.Type != PartThinking || !strings.HasPrefix(th.Signature, "EqQBCkYIBxgCKk") || !strings.HasSuffix(th.Signature, "Wq==") {
		t.Errorf("thinking part = %+v", th)
	}
	call := asst.Parts[2].ToolCall
	if call == nil || call.ID != "toolu_01A09q90qw90lq917835lq9" || call.Arguments != `{"command": "go test ./...", "description": "Run all tests"}` {
		t.Errorf("tool call = %+v, want the raw input text", call)
	}
	res := req.Messages[2].Parts[0]
	if res.Type != PartToolResult || res.ToolResult.CallID != call.ID || string(res.CacheControl) != `{"type": "ephemeral"}` ||
		len(res.ToolResult.Content) != 1 || res.ToolResult.Content[0].Text != "ok  \tgithub.com/example/work\t0.012s" {
		t.Errorf("tool result = %+v / %+v", res, res.ToolResult)
	}

	if len(req.Tools) != 3 {
		t.Fatalf("tools = %d, want 3", len(req.Tools))
	}
	schema := string(req.Tools[0].Schema)
	for _, want := range []string{`"$schema":"http://json-schema.org/draft-07/schema#"`, `"additionalProperties":false`, `"exclusiveMinimum":0`} {
		if !strings.Contains(schema, want) {
			t.Errorf("Bash schema lost %s: %s", want, schema)
		}
	}
	if string(req.Tools[2].Schema) != "{}" {
		t.Errorf("empty schema = %q, want {}", req.Tools[2].Schema)
	}
	if r := req.Reasoning; r == nil || r.Mode != ReasoningAdaptive || r.Display != "omitted" || r.Effort != "high" {
		t.Errorf("reasoning = %+v", r)
	}
	if !strings.HasPrefix(req.User, `{"device_id":"5f1c`) {
		t.Errorf("user = %q", req.User)
	}
	for _, want := range []string{
		"tools.defer_loading: tool search is Anthropic-only; the tool is sent up front",
	} {
		if !slices.Contains(req.Dropped, want) {
			t.Errorf("Dropped = %q, missing %q", req.Dropped, want)
		}
	}
	if len(req.Dropped) != 1 {
		t.Errorf("Dropped = %q, want exactly 1 entry", req.Dropped)
	}
	// context_management is kept for the backend (EditContext).
	if cm := req.ContextManagement; cm == nil || string(cm.Raw) != `{"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}` {
		t.Errorf("ContextManagement = %+v", cm)
	}
}

func TestAnthropicDecodeFeatures(t *testing.T) {
	req := anthDecode(t, anthFixture(t, "request_features.json"))

	if len(req.Tools) != 1 || req.Tools[0].Name != "lookup" || req.Tools[0].Strict == nil || !*req.Tools[0].Strict {
		t.Errorf("tools = %+v, want only the custom strict tool", req.Tools)
	}
	if tc := req.ToolChoice; tc == nil || tc.Mode != ToolChoiceTool || tc.Name != "lookup" {
		t.Errorf("tool_choice = %+v", tc)
	}
	if p := req.ParallelToolCalls; p == nil || *p {
		t.Errorf("ParallelToolCalls = %v, want false", p)
	}
	if r := req.Reasoning; r == nil || r.Mode != ReasoningEnabled || r.BudgetTokens != 4096 {
		t.Errorf("reasoning = %+v", r)
	}
	if rf := req.ResponseFormat; rf == nil || rf.Type != "json_schema" || !strings.Contains(string(rf.Schema), `"required": ["answer"]`) {
		t.Errorf("response format = %+v", rf)
	}
	if req.User != "user-42" || len(req.StopSequences) != 2 || req.StopSequences[1] != "\n\nHuman:" {
		t.Errorf("user/stop = %q/%q", req.User, req.StopSequences)
	}
	if req.Temperature == nil || *req.Temperature != 0.5 || req.TopP == nil || *req.TopP != 0.9 || req.TopK == nil || *req.TopK != 40 {
		t.Errorf("sampling = %v %v %v", req.Temperature, req.TopP, req.TopK)
	}
	if len(req.System) != 1 || req.System[0].Text != "You are a careful assistant." {
		t.Errorf("system = %+v", req.System)
	}

	user := req.Messages[0].Parts
	wantTypes := []PartType{PartText, PartImage, PartImage, PartDocument, PartDocument, PartDocument, PartText, PartImage}
	var got []PartType
	for _, p := range user {
		got = append(got, p.Type)
	}
	if !slices.Equal(got, wantTypes) {
		t.Fatalf("user part types = %v, want %v", got, wantTypes)
	}
	if m := user[1].Media; m.URL != "https://example.com/cat.jpg" {
		t.Errorf("url image = %+v", m)
	}
	if m := user[2].Media; m.FileID != "file_011CNha8iCJcU1wXNR6q4V8w" {
		t.Errorf("file image = %+v", m)
	}
	if m := user[3].Media; m.MediaType != "application/pdf" || m.Data != "JVBERi0xLjQKJcfsj6IK" || m.Title != "Spec" {
		t.Errorf("pdf = %+v", m)
	}
	if m := user[4].Media; m.MediaType != "text/plain" || m.Data != "cGxhaW4gbm90ZXM=" {
		t.Errorf("text document = %+v, want base64 of the text", m)
	}
	if m := user[5].Media; m.MediaType != "application/pdf" || m.URL != "https://example.com/paper.pdf" {
		t.Errorf("url document = %+v", m)
	}

	asst := req.Messages[1].Parts
	if len(asst) != 5 || asst[0].Type != PartRedactedThinking || asst[0].Signature != "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" {
		t.Fatalf("assistant parts = %+v, want redacted thinking, a web search and its result, and two tool calls", asst)
	}
	if s := asst[1].Server; asst[1].Type != PartServerToolCall || s.ID != "srvtoolu_01" || s.Kind != ServerWebSearch || s.Query != "louter" {
		t.Errorf("server tool call = %+v", s)
	}
	if s := asst[2].Server; asst[2].Type != PartServerToolResult || s.ID != "srvtoolu_01" || len(s.Results) != 0 {
		t.Errorf("server tool result = %+v", s)
	}
	if asst[4].ToolCall.Arguments != "{}" {
		t.Errorf("empty input = %q", asst[4].ToolCall.Arguments)
	}
	results := req.Messages[2].Parts
	tr := results[0].ToolResult
	if !tr.IsError || len(tr.Content) != 2 || tr.Content[0].Text != "not found" || tr.Content[1].Type != PartImage {
		t.Errorf("error tool result = %+v", tr)
	}
	if tr := results[1].ToolResult; tr.CallID != "toolu_03" || len(tr.Content) != 0 {
		t.Errorf("empty tool result = %+v", tr)
	}
	if req.Messages[3].Parts[0].Text != "Partial answer" || req.Messages[4].Role != RoleUser {
		t.Errorf("string contents = %+v", req.Messages[3:])
	}

	for _, want := range []string{
		"messages.content.citations: citations are not translated",
		"messages.content.document.source: a content document is flattened into its text and image blocks",
		"messages.content.document.citations: citations are not translated",
		"messages.content.document.context: not translated",
		"messages.content: block type search_result is not translated",
		"messages.content.tool_result.content: block type tool_reference is not translated",
		"tools: server tool bash_20250124 is not translated",
		"tools.eager_input_streaming: Anthropic-only streaming option",
		"tools.input_examples: not translated",
		"service_tier: Anthropic-specific routing option",
		"mcp_servers: Anthropic-hosted MCP connector is not translated",
		"container: Anthropic code execution container",
		"cache_control: Anthropic automatic prompt caching has no equivalent elsewhere",
		"x_future_field: unknown field",
		"metadata.tags: not translated",
	} {
		if !slices.Contains(req.Dropped, want) {
			t.Errorf("Dropped lacks %q; got:\n%s", want, strings.Join(req.Dropped, "\n"))
		}
	}
}

func TestAnthropicDecodeRequestVariants(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r *Request)
	}{
		{
			name: "minimal, no max_tokens",
			body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.MaxTokens != 0 || len(r.Messages) != 1 || r.Messages[0].Parts[0].Text != "hi" || len(r.Dropped) != 0 {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "system message with blocks, image dropped",
			body: `{"model":"m","messages":[{"role":"system","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://x"}}]}]}`,
			check: func(t *testing.T, r *Request) {
				m := r.Messages[0]
				if m.Role != RoleSystem || len(m.Parts) != 1 || m.Parts[0].Text != "a" {
					t.Errorf("got %+v", m)
				}
				if !slices.Contains(r.Dropped, "messages.content: image content in a system prompt is not translated") {
					t.Errorf("Dropped = %q", r.Dropped)
				}
			},
		},
		{
			name: "thinking disabled, tool choice none and any, nulls ignored",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"thinking":{"type":"disabled"},"tool_choice":{"type":"any"},"temperature":null,"system":null,"metadata":{"user_id":null}}`,
			check: func(t *testing.T, r *Request) {
				if r.Reasoning == nil || r.Reasoning.Mode != ReasoningDisabled || r.ToolChoice.Mode != ToolChoiceRequired ||
					r.Temperature != nil || r.ParallelToolCalls != nil || len(r.Dropped) != 0 {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "output_config before thinking",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"output_config":{"effort":"low"},"thinking":{"type":"enabled","budget_tokens":2000}}`,
			check: func(t *testing.T, r *Request) {
				if r.Reasoning == nil || *r.Reasoning != (Reasoning{Mode: ReasoningEnabled, BudgetTokens: 2000, Effort: "low"}) {
					t.Errorf("reasoning = %+v", r.Reasoning)
				}
			},
		},
		{
			name: "tool_use with non-object input keeps the raw text",
			body: `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":"oops"}]}]}`,
			check: func(t *testing.T, r *Request) {
				if a := r.Messages[0].Parts[0].ToolCall.Arguments; a != `"oops"` {
					t.Errorf("arguments = %q", a)
				}
			},
		},
		{
			name: "unknown tool_choice and thinking types are dropped",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"maybe"},"thinking":{"type":"deep"}}`,
			check: func(t *testing.T, r *Request) {
				if r.ToolChoice != nil || r.Reasoning != nil || len(r.Dropped) != 2 {
					t.Errorf("got %+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, anthDecode(t, []byte(tt.body)))
		})
	}
}

func TestAnthropicDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"invalid JSON", `{"model":`, ""},
		{"not an object", `[1,2]`, ""},
		{"missing model", `{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"empty model", `{"model":"","messages":[{"role":"user","content":"x"}]}`, "model"},
		{"model not a string", `{"model":42,"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"model null", `{"model":null,"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"missing messages", `{"model":"m"}`, "messages"},
		{"messages not an array", `{"model":"m","messages":{"role":"user"}}`, "messages"},
		{"message not an object", `{"model":"m","messages":["hi"]}`, "messages.0"},
		{"unknown role", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages.0.role"},
		{"missing role", `{"model":"m","messages":[{"content":"x"}]}`, "messages.0.role"},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":3}]}`, "messages.0.content"},
		{"content missing", `{"model":"m","messages":[{"role":"user"}]}`, "messages.0.content"},
		{"block not an object", `{"model":"m","messages":[{"role":"user","content":["x"]}]}`, "messages.0.content.0"},
		{"tool_use without id", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","name":"n","input":{}}]}]}`, "messages.1.content.0.id"},
		{"tool_use without name", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","input":{}}]}]}`, "messages.0.content.1.name"},
		{"tool_result without tool_use_id", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages.0.content.0.tool_use_id"},
		{"tool without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"input_schema":{}}]}`, "tools.0.name"},
		{"custom tool with empty name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"name":"a"},{"type":"custom","name":""}]}`, "tools.1.name"},
		{"tool not an object", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":["x"]}`, "tools.0"},
		{"content nested too deeply", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"content","content":[{"type":"document","source":{"type":"content","content":[{"type":"text","text":"x"}]}}]}}]}]}]}`, "messages.0.content.0.content.0.source.content.0.source.content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := anthropicCodec{}.DecodeRequest([]byte(tt.body))
			if err == nil {
				t.Fatalf("no error; decoded %+v", req)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if e.Status != http.StatusBadRequest || e.Kind != ErrInvalidRequest {
				t.Errorf("status/kind = %d/%s, want 400/invalid_request", e.Status, e.Kind)
			}
			if e.Param != tt.param {
				t.Errorf("param = %q, want %q", e.Param, tt.param)
			}
			if e.Message == "" {
				t.Error("empty message")
			}
		})
	}
}

// FuzzAnthropicRequest: any body decodes or fails with a 400, never
// panics; whatever decodes encodes to valid JSON that decodes again.
func FuzzAnthropicRequest(f *testing.F) {
	for _, name := range []string{"request_claude_code.json", "request_features.json", "request_roundtrip.json"} {
		f.Add(anthFixture(f, name))
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"content","content":"x"}}]}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c := anthropicCodec{}
		req, err := c.DecodeRequest(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Fatalf("error %v is not a 400 *Error", err)
			}
			return
		}
		out, err := c.EncodeRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON from %s:\n%s", body, out)
		}
		if _, err := c.DecodeRequest(out); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
	})
}

// TestAnthropicDecodeRequestRoleMessages checks that a refused role is
// named in the error, and a missing one called missing.
func TestAnthropicDecodeRequestRoleMessages(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	for body, want := range map[string]string{
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`: `messages.0.role: unknown role "tool": user or assistant`,
		`{"model":"m","messages":[{"content":"x"}]}`:               `messages.0.role: a role is required: user or assistant`,
	} {
		_, err := c.DecodeRequest([]byte(body))
		e, ok := errors.AsType[*Error](err)
		if !ok || !strings.Contains(e.Message, want) {
			t.Errorf("%s: got %v, want a message containing %q", body, err, want)
		}
	}
}

package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// geminiFixture reads testdata/gemini/<name>.
func geminiFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "gemini", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// geminiSSEEvents splits an SSE fixture into the data of its events.
func geminiSSEEvents(body []byte) [][]byte {
	var out [][]byte
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		ev = bytes.TrimSpace(ev)
		if d, ok := bytes.CutPrefix(ev, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(d))
		}
	}
	return out
}

// geminiDecodeStream runs a fixture through a fresh stream decoder.
func geminiDecodeStream(t testing.TB, body []byte) []Event {
	t.Helper()
	d := geminiCodec{}.NewStreamDecoder()
	var evs []Event
	for _, data := range geminiSSEEvents(body) {
		evs = d.Decode(evs, "", data)
	}
	return d.End(evs)
}

func TestGeminiCodecRegistered(t *testing.T) {
	c, ok := Lookup(ProtocolGemini)
	if !ok || c.Protocol() != ProtocolGemini {
		t.Fatalf("gemini codec not registered: %v", c)
	}
}

func TestGeminiCallIDCarriesSignature(t *testing.T) {
	tests := []struct {
		id, sig, wantID, wantSig string
	}{
		{"call_1", "AAECAw==", "call_1", "AAECAw=="},
		{"call_1", "+//+IA==", "call_1", "+//+IA=="},
		{"call_1", "", "call_1", ""},
		{"call_1", geminiSkipSignature, "call_1", ""},
		{"call_1", "not base64!", "call_1", ""}, // not folded
		{"a-ts-b", "AAECAw==", "a-ts-b", ""},    // id already holds the separator: not folded
		{"run_shell_command__x", "AA==", "run_shell_command__x", "AA=="},
	}
	for _, tt := range tests {
		joined := geminiJoinCallID(tt.id, tt.sig)
		for i := 0; i < len(joined); i++ {
			c := joined[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				t.Errorf("%q: id %q has %q, outside Anthropic's tool id alphabet", tt.sig, joined, c)
			}
		}
		id, sig := geminiSplitCallID(joined)
		if tt.id == "a-ts-b" {
			id, sig = joined, "" // an id with the separator is not a carrier
		}
		if id != tt.wantID || sig != tt.wantSig {
			t.Errorf("join(%q,%q)=%q split to (%q,%q), want (%q,%q)", tt.id, tt.sig, joined, id, sig, tt.wantID, tt.wantSig)
		}
	}
}

func TestGeminiDecodeRequestGolden(t *testing.T) {
	for _, name := range []string{"request_gemini_cli", "request_snake_case", "request_router"} {
		t.Run(name, func(t *testing.T) {
			req, err := geminiCodec{}.DecodeRequest(geminiFixture(t, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "gemini/decode_"+name+".json", oaiDumpJSON(req))
			// And back: a Gemini backend gets an equivalent request.
			req.Dropped = nil
			out, err := geminiCodec{}.EncodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			golden(t, "gemini/reencode_"+name+".json", geminiIndent(t, out))
		})
	}
}

func geminiIndent(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	buf.WriteByte('\n')
	return oaiMaskIDs(buf.Bytes())
}

func TestGeminiDecodeRequestDetails(t *testing.T) {
	req, err := geminiCodec{}.DecodeRequest(geminiFixture(t, "request_snake_case.json"))
	if err != nil {
		t.Fatal(err)
	}
	if req.Model != "gemini-2.5-flash" {
		t.Errorf("model %q", req.Model)
	}
	// Calls without ids get ids from their position; their responses,
	// which come in another order and carry no ids, find them by name.
	calls := req.Messages[1].Parts
	results := req.Messages[2].Parts
	if calls[0].ToolCall.ID == calls[1].ToolCall.ID {
		t.Fatalf("ids not distinct: %q", calls[0].ToolCall.ID)
	}
	if tc := calls[0].ToolCall; tc.Signature == "" || tc.ID != "call_1_0" {
		t.Errorf("the real signature is not carried beside the id: %+v", tc)
	}
	if results[0].ToolResult.CallID != calls[1].ToolCall.ID || results[1].ToolResult.CallID != calls[0].ToolCall.ID {
		t.Errorf("results not linked: %q %q vs %q %q", results[0].ToolResult.CallID, results[1].ToolResult.CallID, calls[0].ToolCall.ID, calls[1].ToolCall.ID)
	}
	if !results[0].ToolResult.IsError {
		t.Error("a response with error is not an error")
	}
	if n := len(results[1].ToolResult.Content); n != 2 || results[1].ToolResult.Content[1].Type != PartImage {
		t.Errorf("image inside the function response lost: %+v", results[1].ToolResult.Content)
	}
	// The same history decodes to the same ids every turn.
	again, _ := geminiCodec{}.DecodeRequest(geminiFixture(t, "request_snake_case.json"))
	if again.Messages[1].Parts[1].ToolCall.ID != calls[1].ToolCall.ID {
		t.Error("ids are not stable across turns")
	}
	if tc := req.ToolChoice; tc == nil || tc.Mode != ToolChoiceRequired || len(tc.Allowed) != 2 {
		t.Errorf("tool choice %+v", tc)
	}
	if rf := req.ResponseFormat; rf == nil || rf.Type != "json_schema" || !strings.Contains(string(rf.Schema), `"type":"object"`) {
		t.Errorf("response format %+v", rf)
	}
	if got := string(req.Tools[0].Schema); !strings.Contains(got, `"type":["integer","null"]`) || strings.Contains(got, "propertyOrdering") {
		t.Errorf("Gemini schema not turned into JSON Schema: %s", got)
	}

	// Gemini CLI's router: upper-case types in responseJsonSchema.
	router, _ := geminiCodec{}.DecodeRequest(geminiFixture(t, "request_router.json"))
	if s := string(router.ResponseFormat.Schema); strings.Contains(s, "OBJECT") || strings.Contains(s, "STRING") {
		t.Errorf("router schema keeps Gemini types: %s", s)
	}
}

func TestGeminiDecodeRequestErrors(t *testing.T) {
	for _, body := range []string{`nope`, `[]`, `{"contents":{}}`, `{"contents":[1]}`, `{"contents":[{"parts":[1]}]}`,
		`{"contents":[{"role":"user","parts":[{"functionCall":{"name":"x"}}]}]}`,
		`{"contents":[],"generationConfig":{"candidateCount":2}}`,
		`{"contents":[],"tools":[{"functionDeclarations":[{"description":"no name"}]}]}`} {
		_, err := geminiCodec{}.DecodeRequest([]byte(body))
		e, ok := err.(*Error)
		if !ok || e.Status != 400 {
			t.Errorf("%s: got %v, want a 400", body, err)
		}
	}
}

// TestGeminiEncodeClaudeCodeRequest sends Claude Code's real request to a
// Gemini backend: schemas keep their JSON Schema form, tool results find
// their function names, and nothing is invalid.
func TestGeminiEncodeClaudeCodeRequest(t *testing.T) {
	anth, _ := Lookup(ProtocolAnthropic)
	body, err := os.ReadFile(filepath.Join("..", "testdata", "anthropic", "request_claude_code.json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := anth.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	req.Model = "gemini-2.5-pro"
	out, err := geminiCodec{}.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	root := gjson.ParseBytes(out)
	if root.Get("model").Exists() || root.Get("stream").Exists() {
		t.Error("model and stream belong in the URL")
	}
	decls := root.Get("tools.0.functionDeclarations").Array()
	if len(decls) != len(req.Tools) {
		t.Fatalf("%d declarations for %d tools", len(decls), len(req.Tools))
	}
	for _, d := range decls {
		if d.Get("parameters").Exists() {
			t.Errorf("%s: sent in the OpenAPI form although its JSON Schema needs no rewrite", d.Get("name"))
		}
	}
	root.Get("contents").ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			if fr := p.Get("functionResponse"); fr.Exists() && fr.Get("name").Str == "" {
				t.Errorf("functionResponse without a name: %s", fr.Raw)
			}
			return true
		})
		return true
	})
	golden(t, "gemini/encode_claude_code.json", geminiIndent(t, out))
}

// TestGeminiOpenAPISchema checks the sanitizer on the schemas Gemini's
// OpenAPI form rejects (REFERENCE §4.2), and on Claude Code's real ones.
func TestGeminiOpenAPISchema(t *testing.T) {
	allowed := map[string]bool{"type": true, "format": true, "title": true, "description": true, "nullable": true, "enum": true,
		"items": true, "properties": true, "required": true, "propertyOrdering": true, "minItems": true, "maxItems": true,
		"minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true, "minProperties": true,
		"maxProperties": true, "anyOf": true, "default": true, "example": true}
	var check func(path string, s gjson.Result)
	check = func(path string, s gjson.Result) {
		s.ForEach(func(k, v gjson.Result) bool {
			if !allowed[k.Str] {
				t.Errorf("%s: keyword %q is not in Gemini's Schema", path, k.Str)
			}
			switch k.Str {
			case "type":
				if v.Type != gjson.String || strings.ToUpper(v.Str) != v.Str {
					t.Errorf("%s: type %s", path, v.Raw)
				}
			case "properties":
				v.ForEach(func(name, p gjson.Result) bool { check(path+"."+name.Str, p); return true })
			case "items":
				check(path+"[]", v)
			case "anyOf":
				v.ForEach(func(_, p gjson.Result) bool { check(path+"|", p); return true })
			}
			return true
		})
	}
	tests := []struct{ name, in, want string }{
		{"type array", `{"type":["string","null"]}`, `{"type":"STRING","nullable":true}`},
		{"const", `{"const":"a","$schema":"x"}`, `{"enum":["a"]}`},
		{"exclusive", `{"type":"integer","exclusiveMinimum":0,"additionalProperties":false,"propertyNames":{"pattern":"x"}}`, `{"type":"INTEGER","minimum":0}`},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"d"}},"$defs":{"A":{"type":"string","format":"uri"}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","description":"d"}}}`},
		{"cycle", `{"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"$ref":"#/$defs/N"}`, ""},
		{"oneOf null", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, `{"type":"STRING","nullable":true}`},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `{"anyOf":[{"type":"STRING"},{"type":"NUMBER"}]}`},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b","zz"]}]}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"BOOLEAN"}},"required":["a","b"]}`},
		{"numeric enum", `{"type":"integer","enum":[1,2]}`, `{"type":"INTEGER"}`},
	}
	for _, tt := range tests {
		got := geminiOpenAPISchema([]byte(tt.in))
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON %s", tt.name, got)
			continue
		}
		check(tt.name, gjson.ParseBytes(got))
		if tt.want != "" && string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}

	// Claude Code's and Codex's real tool schemas.
	real := map[string]string{
		filepath.Join("anthropic", "request_claude_code.json"):  "tools.#.input_schema",
		filepath.Join("openai_responses", "request_codex.json"): "tools.#.parameters",
	}
	n := 0
	for file, path := range real {
		body, err := os.ReadFile(filepath.Join("..", "testdata", file))
		if err != nil {
			t.Logf("skipping %s: %v", file, err) // the Codex capture ships with the Responses codec
			continue
		}
		for _, schema := range gjson.GetBytes(body, path).Array() {
			if !schema.IsObject() {
				continue
			}
			n++
			got := geminiOpenAPISchema([]byte(schema.Raw))
			if !json.Valid(got) {
				t.Fatalf("%s: invalid JSON %s", file, got)
			}
			check(file, gjson.ParseBytes(got))
			if js, ok := geminiJSONSchema([]byte(schema.Raw)); !ok || !json.Valid(js) {
				t.Errorf("%s: JSON Schema form refused: %s", file, schema.Raw)
			}
		}
	}
	if n < 3 {
		t.Errorf("only %d real schemas checked", n)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGeminiJSONSchemaInlinesRefs(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"q":{"$ref":"#/definitions/Q","description":"the question"}},"definitions":{"Q":{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}}}`)
	got, ok := geminiJSONSchema(raw)
	want := `{"type":"object","properties":{"q":{"description":"the question","type":"object","additionalProperties":false,"properties":{"text":{"type":"string"}}}}}`
	if !ok || string(got) != want {
		t.Errorf("got %s (ok %v)\nwant %s", got, ok, want)
	}
	plain := []byte(`{"$schema":"x","type":"object","properties":{"a":{"type":["string","null"]}},"additionalProperties":false}`)
	if got, ok := geminiJSONSchema(plain); !ok || !bytes.Equal(got, plain) {
		t.Errorf("a schema without references must pass untouched, got %s", got)
	}
	if _, ok := geminiJSONSchema([]byte(`{"$ref":"https://example.com/s.json"}`)); ok {
		t.Error("a remote reference cannot be inlined")
	}
}

func TestGeminiStreamFixtures(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "gemini", "*.sse"))
	if len(paths) == 0 {
		t.Fatal("no fixtures")
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".sse")
		t.Run(name, func(t *testing.T) {
			evs := geminiDecodeStream(t, mustRead(t, p))
			golden(t, "gemini/stream_decode_"+name+".txt", oaiDumpEvents(evs))
		})
	}
}

func TestGeminiStreamSemantics(t *testing.T) {
	result := func(name string) (*Response, *Error) {
		var acc Accumulator
		for _, ev := range geminiDecodeStream(t, geminiFixture(t, name)) {
			acc.Add(&ev)
		}
		return acc.Result()
	}
	tests := []struct {
		name  string
		stop  StopReason
		tools int
		err   string
		usage Usage
	}{
		{"stream_text.sse", StopEndTurn, 0, "", Usage{InputTokens: 8, OutputTokens: 30, ReasoningTokens: 23}},
		{"stream_thinking_gemini3.sse", StopEndTurn, 0, "", Usage{InputTokens: 12, OutputTokens: 33, CacheReadTokens: 4, ReasoningTokens: 28}},
		{"stream_function_call.sse", StopToolUse, 1, "", Usage{InputTokens: 61, OutputTokens: 85, ReasoningTokens: 70}},
		{"stream_parallel_calls.sse", StopToolUse, 2, "", Usage{InputTokens: 70, OutputTokens: 40}},
		{"stream_no_args_call.sse", StopToolUse, 1, "", Usage{InputTokens: 20, OutputTokens: 3}},
		{"stream_prompt_blocked.sse", StopRefusal, 0, "", Usage{InputTokens: 9}},
		{"stream_max_tokens.sse", StopMaxTokens, 0, "", Usage{InputTokens: 5, OutputTokens: 4}},
		{"stream_safety.sse", StopRefusal, 0, "", Usage{InputTokens: 11, OutputTokens: 2}},
		{"stream_malformed_function_call.sse", "", 0, "MALFORMED_FUNCTION_CALL", Usage{}},
		{"stream_error.sse", "", 0, "UNAVAILABLE", Usage{}},
		{"stream_cut.sse", "", 0, "ended before", Usage{}},
	}
	for _, tt := range tests {
		resp, err := result(tt.name)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Message+err.Code, tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		n := 0
		for _, p := range resp.Parts {
			if p.Type == PartToolCall {
				n++
				if !gjson.Valid(p.ToolCall.Arguments) || p.ToolCall.Name == "" || p.ToolCall.ID == "" {
					t.Errorf("%s: bad call %+v", tt.name, p.ToolCall)
				}
			}
		}
		if resp.StopReason != tt.stop || n != tt.tools || resp.Usage != tt.usage {
			t.Errorf("%s: stop %s, %d calls, usage %+v; want %s, %d, %+v", tt.name, resp.StopReason, n, resp.Usage, tt.stop, tt.tools, tt.usage)
		}
	}
	// The signature of the call comes back when the call is replayed.
	resp, _ := result("stream_function_call.sse")
	req := &Request{Messages: []Message{
		{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "weather?"}}},
		{Role: RoleAssistant, Parts: resp.Parts},
		{Role: RoleUser, Parts: []Part{{Type: PartToolResult, ToolResult: &ToolResult{CallID: resp.Parts[0].ToolCall.ID, Content: []Part{{Type: PartText, Text: "sunny"}}}}}},
	}}
	out, _ := geminiCodec{}.EncodeRequest(req)
	part := gjson.GetBytes(out, "contents.1.parts.0")
	if part.Get("thoughtSignature").Str != "+//+IHRob3VnaHQgc2lnbmF0dXJlIG9mIHRoZSBjYWxs+//+IHRob3VnaHQgc2lnbmF0dXJlIG9mIHRoZSBjYWxs" {
		t.Errorf("signature not restored: %s", part.Raw)
	}
	if fr := gjson.GetBytes(out, "contents.2.parts.0.functionResponse"); fr.Get("name").Str != "getWeather" || fr.Get("response.output").Str != "sunny" {
		t.Errorf("function response %s", fr.Raw)
	}
}

func TestGeminiResponses(t *testing.T) {
	for _, name := range []string{"response_text", "response_function_call", "response_blocked", "stream_array"} {
		t.Run(name, func(t *testing.T) {
			resp, err := geminiCodec{}.DecodeResponse(geminiFixture(t, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "gemini/response_decode_"+name+".json", oaiDumpJSON(resp))
			out, err := geminiCodec{}.EncodeResponse(resp, &Request{Model: "client-model"})
			if err != nil || !json.Valid(out) {
				t.Fatalf("%v: %s", err, out)
			}
			golden(t, "gemini/response_encode_"+name+".json", geminiIndent(t, out))
		})
	}
	resp, _ := geminiCodec{}.DecodeResponse(geminiFixture(t, "response_text.json"))
	if resp.Usage != (Usage{InputTokens: 3, OutputTokens: 19, CacheReadTokens: 1, ReasoningTokens: 17}) || resp.Parts[0].Type != PartThinking {
		t.Errorf("usage %+v parts %+v", resp.Usage, resp.Parts)
	}
	if _, err := (geminiCodec{}).DecodeResponse([]byte(`{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`)); err == nil {
		t.Error("an error body in a 200 is an error")
	}
}

func TestGeminiErrors(t *testing.T) {
	c := geminiCodec{}
	e := c.DecodeError(400, geminiFixture(t, "error_api_key_invalid.json"))
	if e.Status != 401 || e.Kind != ErrAuthentication || e.Code != "API_KEY_INVALID" || !strings.Contains(e.Message, "API key not valid") {
		t.Errorf("invalid key: %+v", e)
	}
	e = c.DecodeError(429, geminiFixture(t, "error_rate_limit.json"))
	if e.Status != 429 || e.Kind != ErrRateLimit {
		t.Errorf("rate limit: %+v", e)
	}
	e = c.DecodeError(502, []byte("<html>bad gateway</html>"))
	if e.Status != 502 || e.Message != "<html>bad gateway</html>" {
		t.Errorf("plain body: %+v", e)
	}
	e = c.DecodeError(503, []byte(`[{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}]`))
	if e.Kind != ErrOverloaded || e.Message != "overloaded" {
		t.Errorf("array body: %+v", e)
	}
	for _, tt := range []struct {
		name string
		from Codec
		code int
		body string
	}{
		{"anthropic 529", anthropicCodec{}, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"openai 503", openAIChatCodec{}, 503, `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`},
	} {
		e := tt.from.DecodeError(tt.code, []byte(tt.body))
		body := c.EncodeError(e)
		if got := ClientStatus(ProtocolGemini, e); got != 503 {
			t.Errorf("%s: ClientStatus = %d, want 503", tt.name, got)
		}
		if gjson.GetBytes(body, "error.code").Int() != 503 || gjson.GetBytes(body, "error.status").Str != "UNAVAILABLE" {
			t.Errorf("%s: %s, want code 503 UNAVAILABLE", tt.name, body)
		}
		if got := ClientStatus(ProtocolAnthropic, e); got != tt.code {
			t.Errorf("%s: Anthropic client status %d, want %d", tt.name, got, tt.code)
		}
	}
	for kind, status := range map[ErrorKind]string{ErrAuthentication: "UNAUTHENTICATED", ErrNotFound: "NOT_FOUND", ErrRateLimit: "RESOURCE_EXHAUSTED", ErrOverloaded: "UNAVAILABLE"} {
		body := c.EncodeError(&Error{Status: StatusForKind(kind), Kind: kind, Message: "m"})
		if gjson.GetBytes(body, "error.status").Str != status || gjson.GetBytes(body, "error.code").Int() != int64(ClientStatus(ProtocolGemini, &Error{Kind: kind})) {
			t.Errorf("%s: %s", kind, body)
		}
		back := c.DecodeError(StatusForKind(kind), body)
		if back.Kind != kind {
			t.Errorf("%s round trip: %s", kind, back.Kind)
		}
	}
}

// geminiFrames collects what a stream encoder writes.
type geminiFrames struct {
	names []string
	data  [][]byte
}

func (f *geminiFrames) WriteFrame(name string, data []byte) {
	f.names = append(f.names, name)
	f.data = append(f.data, append([]byte(nil), data...))
}

func TestGeminiStreamEncoder(t *testing.T) {
	// An Anthropic stream with thinking, text and a tool call whose
	// arguments come in fragments.
	anth, _ := Lookup(ProtocolAnthropic)
	dec := anth.NewStreamDecoder()
	var evs []Event
	body := mustRead(t, filepath.Join("..", "testdata", "anthropic", "stream_tool_use.sse"))
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		var name, data []byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
				name = v
			}
			if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				data = v
			}
		}
		if data != nil {
			evs = dec.Decode(evs, string(name), data)
		}
	}
	evs = dec.End(evs)

	var f geminiFrames
	enc := geminiCodec{}.NewStreamEncoder(&Request{Model: "gemini-client"})
	for i := range evs {
		enc.Encode(&f, &evs[i])
	}
	var all bytes.Buffer
	calls := 0
	for i, d := range f.data {
		if f.names[i] != "" {
			t.Errorf("frame %d has an event name %q", i, f.names[i])
		}
		if !json.Valid(d) || bytes.ContainsAny(d, "\n") {
			t.Errorf("frame %d is not one compact JSON line: %s", i, d)
		}
		gjson.GetBytes(d, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
			if fc := p.Get("functionCall"); fc.Exists() {
				calls++
				if !fc.Get("args").IsObject() {
					t.Errorf("functionCall without whole args: %s", fc.Raw)
				}
			}
			return true
		})
		all.Write(d)
		all.WriteByte('\n')
	}
	last := f.data[len(f.data)-1]
	if gjson.GetBytes(last, "candidates.0.finishReason").Str != "STOP" || !gjson.GetBytes(last, "usageMetadata").Exists() {
		t.Errorf("last chunk: %s", last)
	}
	if calls == 0 {
		t.Error("no functionCall part")
	}
	golden(t, "gemini/stream_encode_from_anthropic_tool_use.jsonl", oaiMaskIDs(all.Bytes()))

	// An error ends the stream with the google.rpc envelope.
	f = geminiFrames{}
	enc = geminiCodec{}.NewStreamEncoder(&Request{Model: "m"})
	enc.Encode(&f, &Event{Type: EventMessageStart})
	enc.Encode(&f, &Event{Type: EventError, Err: &Error{Status: 529, Kind: ErrOverloaded, Message: "Overloaded"}})
	enc.Encode(&f, &Event{Type: EventMessageStop, Stop: StopEndTurn})
	if len(f.data) != 1 || gjson.GetBytes(f.data[0], "error.status").Str != "UNAVAILABLE" {
		t.Errorf("error frames: %q", f.data)
	}
}

// A functionResponse's response becomes the tool result's text: "output"
// and "error" (go-genai's convention, Gemini CLI's) unwrapped, the Vercel
// AI SDK's {"name","content"} wrapper (opencode's Google provider)
// unwrapped when it is exactly that, any other object as its JSON.
func TestGeminiFunctionResponseText(t *testing.T) {
	for _, tt := range []struct {
		name, response, want string
		isError              bool
	}{
		{"output", `{"output":"louter-ok\n"}`, "louter-ok\n", false},
		{"error", `{"error":"exit 1"}`, "exit 1", true},
		{"ai sdk text", `{"name":"bash","content":"louter-ok\n"}`, "louter-ok\n", false},
		{"ai sdk json", `{"name":"bash","content":{"exit":0}}`, `{"exit":0}`, false},
		{"another function's name", `{"name":"other","content":"x"}`, `{"name":"other","content":"x"}`, false},
		{"more members", `{"name":"bash","content":"x","extra":1}`, `{"name":"bash","content":"x","extra":1}`, false},
		{"plain object", `{"temperature":18}`, `{"temperature":18}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"contents":[{"role":"user","parts":[{"text":"go"}]},` +
				`{"role":"model","parts":[{"functionCall":{"name":"bash","args":{"command":"echo louter-ok"}}}]},` +
				`{"role":"user","parts":[{"functionResponse":{"name":"bash","response":` + tt.response + `}}]}]}`
			req, err := geminiCodec{}.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			tr := req.Messages[2].Parts[0].ToolResult
			if tr == nil || len(tr.Content) != 1 || tr.Content[0].Text != tt.want || tr.IsError != tt.isError {
				t.Fatalf("tool result %+v, want text %q (error %v)", tr, tt.want, tt.isError)
			}
		})
	}
}

package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

const chatPath = "/v1/chat/completions"

// chatAnswer is an OpenAI Chat answer read field by field, streamed or not.
type chatAnswer struct {
	content          string
	pieces           []string // the content deltas of a stream
	reasoningContent string
	reasoning        string
	toolCalls        []string // name + " " + arguments
	finish           string
	usage            bool
	done             bool // a stream ended with [DONE]
}

// readChat reads an OpenAI Chat answer without the codec, so the fields
// are the wire's own.
func readChat(t *testing.T, w *httptest.ResponseRecorder) chatAnswer {
	t.Helper()
	var a chatAnswer
	body := w.Body.Bytes()
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		msg := gjson.GetBytes(body, "choices.0.message")
		a.content = msg.Get("content").String()
		a.reasoningContent = msg.Get("reasoning_content").String()
		a.reasoning = msg.Get("reasoning").String()
		msg.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
			a.toolCalls = append(a.toolCalls, c.Get("function.name").String()+" "+c.Get("function.arguments").String())
			return true
		})
		a.finish = gjson.GetBytes(body, "choices.0.finish_reason").String()
		a.usage = gjson.GetBytes(body, "usage.completion_tokens").Int() > 0
		return a
	}
	var args []string
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			a.done = true
			continue
		}
		if !json.Valid([]byte(data)) {
			t.Fatalf("chunk is not JSON: %s", data)
		}
		c := gjson.Parse(data)
		if c.Get("usage.completion_tokens").Int() > 0 {
			a.usage = true
		}
		d := c.Get("choices.0.delta")
		if s := d.Get("content").String(); s != "" {
			a.pieces = append(a.pieces, s)
			a.content += s
		}
		a.reasoningContent += d.Get("reasoning_content").String()
		a.reasoning += d.Get("reasoning").String()
		d.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			if n := tc.Get("function.name").String(); n != "" {
				a.toolCalls = append(a.toolCalls, n)
				args = append(args, "")
			}
			if len(args) > 0 {
				args[len(args)-1] += tc.Get("function.arguments").String()
			}
			return true
		})
		if f := c.Get("choices.0.finish_reason").String(); f != "" {
			a.finish = f
		}
	}
	for i := range a.toolCalls {
		a.toolCalls[i] += " " + args[i]
	}
	return a
}

// chatBody is an OpenAI Chat request with the given messages (JSON) and
// tools.
func chatBody(stream bool, messages string, tools ...testTool) string {
	var ts []string
	for _, t := range tools {
		ts = append(ts, fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":"test tool","parameters":%s}}`, t.name, t.schema))
	}
	toolsJSON := ""
	if len(ts) > 0 {
		toolsJSON = `,"tools":[` + strings.Join(ts, ",") + `]`
	}
	return fmt.Sprintf(`{"model":"qwen-test","stream":%v,"stream_options":{"include_usage":true}%s,"messages":[%s]}`, stream, toolsJSON, messages)
}

func userMessage(text string) string { return `{"role":"user","content":` + jsonString(text) + `}` }

const weatherArgs = `{"city":"louter","days":1,"metric":true}`

func TestParseDialect(t *testing.T) {
	tests := []struct {
		in   string
		want dialect
	}{
		{"", dialect{}},
		{"native", dialect{}},
		{"native reasoning_content", dialect{}},
		{"hermes", dialect{tools: toolsHermes}},
		{"qwen3_coder think_open", dialect{tools: toolsQwen3Coder, reasoning: reasoningThinkOpen}},
		{"  qwen3_coder_bare   think ", dialect{tools: toolsQwen3CoderBare, reasoning: reasoningThink}},
		{"hermes reasoning", dialect{tools: toolsHermes, reasoning: reasoningField}},
		{"think", dialect{reasoning: reasoningThink}},
		{"think hermes", dialect{tools: toolsHermes, reasoning: reasoningThink}},
		{"harmony", dialect{harmony: true}},
	}
	for _, tt := range tests {
		got, err := parseDialect(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDialect(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for in, want := range map[string]string{
		"bogus":                  `unknown dialect word "bogus"`,
		"hermes qwen3_coder":     "two tool-call styles",
		"think think_open":       "two reasoning styles",
		"harmony think":          "harmony sets both styles",
		"native harmony":         "harmony sets both styles",
		"hermes think reasoning": "3 words",
		"Hermes":                 "unknown dialect word",
	} {
		if _, err := parseDialect(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseDialect(%q): error %v, want one containing %q", in, err, want)
		}
	}
}

func TestDialectCaddyfile(t *testing.T) {
	for in, want := range map[string]string{
		"louter_mock {\n dialect qwen3_coder think_open\n}": "qwen3_coder think_open",
		"louter_mock {\n dialect harmony\n}":                "harmony",
		"louter_mock {\n dialect hermes\n}":                 "hermes",
		"louter_mock {\n dialect think\n}":                  "think",
	} {
		var m Mock
		if err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in)); err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if m.Dialect != want {
			t.Errorf("%q: dialect %q, want %q", in, m.Dialect, want)
		}
	}
	for in, want := range map[string]string{
		"louter_mock {\n dialect\n}":                        "wrong argument count",
		"louter_mock {\n dialect hermes think reasoning\n}": "wrong argument count",
		"louter_mock {\n dialect qwen3\n}":                  `unknown dialect word "qwen3"`,
		"louter_mock {\n dialect harmony think\n}":          "harmony",
		"louter_mock {\n dialect hermes qwen3_coder\n}":     "two tool-call styles",
	} {
		var m Mock
		err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
	// The JSON field is checked by Validate and Provision.
	bad := Mock{DefaultScenario: "text", Dialect: "hermes bogus"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "louter_mock: dialect") {
		t.Errorf("Validate: %v", err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := bad.Provision(ctx); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("Provision: %v", err)
	}
	var m Mock
	if err := json.Unmarshal([]byte(`{"dialect":"qwen3_coder think_open"}`), &m); err != nil || m.Dialect != "qwen3_coder think_open" {
		t.Fatalf("JSON: %+v, %v", m, err)
	}
	newMock(t, &m)
	if want := (dialect{tools: toolsQwen3Coder, reasoning: reasoningThinkOpen}); m.dialect != want {
		t.Errorf("provisioned dialect %+v, want %+v", m.dialect, want)
	}
}

func TestDialectRendering(t *testing.T) {
	hello := func(m *Mock) string { return "Hello from louter_mock (" + m.Name + ")." }
	const qwenWeather = "<function=get_weather>\n<parameter=city>\nlouter\n</parameter>\n<parameter=days>\n1\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n</function>"
	const hermesWeather = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + weatherArgs + "}\n</tool_call>"
	tests := []struct {
		dialect  string
		scenario string
		tools    []testTool
		// content is the expected content, with %s for the greeting.
		content          string
		reasoningContent string
		reasoning        string
		toolCalls        []string
		finish           string
		markup           bool // the content is streamed in small pieces
	}{
		{"hermes", "tool", []testTool{weatherTool}, hermesWeather, "", "", nil, "stop", true},
		{"hermes", "parallel_tools", []testTool{weatherTool, timeTool},
			hermesWeather + "\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>", "", "", nil, "stop", true},
		{"hermes", "reasoning", nil, "%s", "Let me think about this.", "", nil, "stop", false},
		{"hermes reasoning", "reasoning", nil, "%s", "", "Let me think about this.", nil, "stop", false},
		{"hermes reasoning", "text", nil, "%s", "", "", nil, "stop", false},
		{"qwen3_coder", "tool", []testTool{weatherTool}, "<tool_call>\n" + qwenWeather + "\n</tool_call>", "", "", nil, "stop", true},
		{"qwen3_coder", "parallel_tools", []testTool{weatherTool, timeTool},
			"<tool_call>\n" + qwenWeather + "\n</tool_call>\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>", "", "", nil, "stop", true},
		{"qwen3_coder_bare", "parallel_tools", []testTool{weatherTool, timeTool},
			qwenWeather + "\n<function=get_time>\n</function>", "", "", nil, "stop", true},
		{"qwen3_coder think", "reasoning", nil, "<think>\nLet me think about this.\n</think>\n\n%s", "", "", nil, "stop", true},
		{"qwen3_coder think_open", "reasoning", nil, "Let me think about this.\n</think>\n\n%s", "", "", nil, "stop", true},
		{"qwen3_coder think_open", "tool", []testTool{weatherTool},
			"\n</think>\n\n<tool_call>\n" + qwenWeather + "\n</tool_call>", "", "", nil, "stop", true},
		{"hermes think", "tool", []testTool{weatherTool}, "<think>\n\n</think>\n\n" + hermesWeather, "", "", nil, "stop", true},
		{"qwen3_coder_bare think", "text", nil, "<think>\n\n</think>\n\n%s", "", "", nil, "stop", true},
		{"native think", "tool", []testTool{weatherTool}, "<think>\n\n</think>\n\n", "", "", []string{"get_weather " + weatherArgs}, "tool_calls", true},
		{"native reasoning", "reasoning", nil, "%s", "", "Let me think about this.", nil, "stop", false},
		{"native reasoning", "tool", []testTool{weatherTool}, "", "", "", []string{"get_weather " + weatherArgs}, "tool_calls", false},
		{"", "reasoning", nil, "%s", "Let me think about this.", "", nil, "stop", false},
		{"", "tool", []testTool{weatherTool}, "", "", "", []string{"get_weather " + weatherArgs}, "tool_calls", false},
		{"harmony", "reasoning", nil,
			"<|channel|>analysis<|message|>Let me think about this.<|end|><|start|>assistant<|channel|>final<|message|>%s<|return|>", "", "", nil, "stop", true},
		{"harmony", "text", nil, "<|channel|>final<|message|>%s<|return|>", "", "", nil, "stop", true},
		{"harmony", "parallel_tools", []testTool{weatherTool, timeTool},
			"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + weatherArgs + "<|call|>" +
				"<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>", "", "", nil, "stop", true},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s/stream=%v", tt.dialect, tt.scenario, streamed), func(t *testing.T) {
				m := newMock(t, &Mock{Dialect: tt.dialect})
				w := serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(streamed, userMessage("hi"), tt.tools...), ScenarioHeader, tt.scenario))
				if w.Code != http.StatusOK {
					t.Fatalf("status %d: %s", w.Code, w.Body)
				}
				a := readChat(t, w)
				want := tt.content
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, hello(m))
				}
				if a.content != want {
					t.Errorf("content\n%q, want\n%q", a.content, want)
				}
				if a.reasoningContent != tt.reasoningContent || a.reasoning != tt.reasoning {
					t.Errorf("reasoning_content %q, reasoning %q; want %q, %q", a.reasoningContent, a.reasoning, tt.reasoningContent, tt.reasoning)
				}
				if !reflect.DeepEqual(a.toolCalls, tt.toolCalls) {
					t.Errorf("tool calls %q, want %q", a.toolCalls, tt.toolCalls)
				}
				if a.finish != tt.finish || !a.usage {
					t.Errorf("finish_reason %q (want %q), usage %v", a.finish, tt.finish, a.usage)
				}
				if !streamed {
					return
				}
				if !a.done {
					t.Error("no [DONE]")
				}
				if !tt.markup {
					return
				}
				if len(a.pieces) < len(want)/maxMarkupPiece {
					t.Errorf("%d content pieces for %d bytes", len(a.pieces), len(want))
				}
				for _, p := range a.pieces {
					if len(p) < 1 || len(p) > maxMarkupPiece {
						t.Errorf("content piece %q of %d bytes", p, len(p))
					}
				}
			})
		}
	}
}

func TestMarkupPieces(t *testing.T) {
	for _, s := range []string{"", "a", "<tool_call>\n{\"name\": \"x\"}\n</tool_call>", "día ☀️ 日本語 🌍🌍🌍 end", strings.Repeat("🌍", 10)} {
		pieces := markupPieces(s)
		if strings.Join(pieces, "") != s {
			t.Errorf("%q: pieces %q do not join to it", s, pieces)
		}
		for _, p := range pieces {
			if len(p) == 0 || len(p) > maxMarkupPiece || !json.Valid([]byte(jsonString(p))) || strings.ToValidUTF8(p, "?") != p {
				t.Errorf("%q: bad piece %q", s, p)
			}
		}
		if again := markupPieces(s); !reflect.DeepEqual(again, pieces) {
			t.Errorf("%q: cut differently on a second run", s)
		}
	}
	sizes := map[int]bool{}
	for _, p := range markupPieces(strings.Repeat("x", 500)) {
		sizes[len(p)] = true
	}
	if len(sizes) != maxMarkupPiece {
		t.Errorf("piece sizes %v, want every size from 1 to %d", sizes, maxMarkupPiece)
	}
}

func TestDialectHeader(t *testing.T) {
	m := newMock(t, &Mock{Dialect: "hermes"})
	body := chatBody(false, userMessage("hi"), weatherTool, timeTool)
	w := serve(t, m, newRequest(http.MethodPost, chatPath, body, ScenarioHeader, "parallel_tools", DialectHeader, "qwen3_coder_bare think"))
	want := "<think>\n\n</think>\n\n<function=get_weather>\n<parameter=city>\nlouter\n</parameter>\n<parameter=days>\n1\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n<function=get_time>\n</function>"
	if a := readChat(t, w); a.content != want || a.finish != "stop" {
		t.Errorf("content %q, finish %q; want %q", a.content, a.finish, want)
	}
	// The header can also ask for OpenAI's own answers.
	w = serve(t, m, newRequest(http.MethodPost, chatPath, body, ScenarioHeader, "tool", DialectHeader, "native"))
	if a := readChat(t, w); a.content != "" || len(a.toolCalls) != 1 || a.finish != "tool_calls" {
		t.Errorf("native by header: %+v", a)
	}
	w = serve(t, m, newRequest(http.MethodPost, chatPath, body, ScenarioHeader, "tool", DialectHeader, "klingon"))
	if w.Code != http.StatusBadRequest || !strings.Contains(gjson.Get(w.Body.String(), "error.message").String(), DialectHeader) {
		t.Errorf("invalid header: %d %s", w.Code, w.Body)
	}
}

func TestDialectLeavesOtherProtocolsAlone(t *testing.T) {
	pc := protocolCases[0] // Anthropic
	m := newMock(t, &Mock{Dialect: "hermes think"})
	for _, streamed := range []bool{false, true} {
		w := serve(t, m, newRequest(http.MethodPost, pc.path, pc.body(streamed, "hi", "", []testTool{weatherTool}), ScenarioHeader, "tool", DialectHeader, "qwen3_coder"))
		d := decodeBody(t, pc.protocol, w, false)
		if calls := toolCalls(d.resp); len(calls) != 1 || calls[0].Arguments != weatherArgs || partsText(d.resp, translate.PartText) != "" {
			t.Errorf("stream=%v: %+v", streamed, d.resp)
		}
	}
}

func TestDialectFaultsAndFixtures(t *testing.T) {
	dir := t.TempDir()
	fixture := "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"<tool_call>\"}}]}\n\ndata: [DONE]\n\n"
	if err := os.WriteFile(filepath.Join(dir, "raw.sse"), []byte(fixture), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newMock(t, &Mock{Dialect: "hermes think", FixturesDir: dir})
	w := serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(true, userMessage("hi")), ScenarioHeader, "fixture=raw.sse"))
	if w.Body.String() != fixture {
		t.Errorf("fixture replayed as %q", w.Body)
	}
	// A fault still strikes after two content deltas.
	w = serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(true, userMessage("hi")), ScenarioHeader, "stream_error"))
	d := decodeBody(t, translate.ProtocolOpenAIChat, w, false)
	if d.err == nil || d.err.Kind != translate.ErrOverloaded || countDeltas(d.events, translate.BlockText) != faultAfter {
		t.Errorf("stream_error: %v, %d deltas\n%s", d.err, countDeltas(d.events, translate.BlockText), w.Body)
	}
	w = serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(false, userMessage("hi")), ScenarioHeader, "error_429"))
	if w.Code != http.StatusTooManyRequests {
		t.Errorf("error_429: %d", w.Code)
	}
}

// forecastSchema has a property of every JSON type, all required, with
// keys beyond type and description.
const forecastSchema = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":3},"hourly":{"type":"boolean"},"scale":{"type":"number","minimum":2},"units":{"type":"string","enum":["metric","imperial"]},"options":{"type":"object","properties":{"alerts":{"type":"boolean"}},"required":["alerts"]},"fields":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["city","days","hourly","scale","units","options","fields"]}`

// forecastArgs is what the mock synthesizes for forecastSchema.
const forecastArgs = `{"city":"louter","days":3,"hourly":true,"scale":2,"units":"metric","options":{"alerts":true},"fields":["louter"]}`

// The system prompts of a server without tool support, in the wording of
// the chat templates.
const (
	hermesToolsPrompt = "You are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
		`{"type": "function", "function": {"name": "get_forecast", "description": "Get a weather forecast", "parameters": ` + forecastSchema + "}}\n" +
		`{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}` + "\n" +
		"</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
		"<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"

	qwen3CoderToolsPrompt = "You are helpful.\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>get_forecast</name>\n<description>Get a weather forecast</description>\n<parameters>\n" +
		"<parameter>\n<name>city</name>\n<type>string</type>\n</parameter>\n" +
		"<parameter>\n<name>days</name>\n<type>integer</type>\n<minimum>3</minimum>\n</parameter>\n" +
		"<parameter>\n<name>hourly</name>\n<type>boolean</type>\n</parameter>\n" +
		"<parameter>\n<name>scale</name>\n<type>number</type>\n<minimum>2</minimum>\n</parameter>\n" +
		"<parameter>\n<name>units</name>\n<type>string</type>\n<enum>[\"metric\", \"imperial\"]</enum>\n</parameter>\n" +
		"<parameter>\n<name>options</name>\n<type>object</type>\n<properties>{\"alerts\": {\"type\": \"boolean\"}}</properties>\n<required>[\"alerts\"]</required>\n</parameter>\n" +
		"<parameter>\n<name>fields</name>\n<type>array</type>\n<items>{\"type\":\"string\"}</items>\n<minItems>1</minItems>\n</parameter>\n" +
		"<required>[\"city\", \"days\", \"hourly\", \"scale\", \"units\", \"options\", \"fields\"]</required>\n</parameters>\n</function>\n" +
		"<function>\n<name>get_time</name>\n<parameters>\n</parameters>\n</function>\n</tools>\n\n" +
		"If you choose to call a function ONLY reply in the following format with NO suffix:\n\n" +
		"<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>"
)

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestToolsFromPrompt(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		want   []translate.Tool
	}{
		{"hermes", hermesToolsPrompt, []translate.Tool{
			{Name: "get_forecast", Description: "Get a weather forecast", Schema: json.RawMessage(forecastSchema)},
			{Name: "get_time", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
		}},
		{"qwen3_coder", qwen3CoderToolsPrompt, []translate.Tool{
			{Name: "get_forecast", Description: "Get a weather forecast", Schema: json.RawMessage(forecastSchema)},
			{Name: "get_time", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
		}},
		{"qwen3_coder python literals and text", "<tools>\n<function>\n<name>Bash</name>\n<description>Run a command.\nUse <b>care</b>.</description>\n<parameters>\n" +
			"<parameter>\n<name>command</name>\n<type>['string', 'null']</type>\n<description>The command</description>\n<default>ls</default>\n<deprecated>False</deprecated>\n</parameter>\n" +
			"<parameter>\n<name>timeout</name>\n<type>null</type>\n<description>42</description>\n</parameter>\n" +
			"<additionalProperties>False</additionalProperties>\n</parameters>\n<strict>True</strict>\n</function>\n</tools>",
			[]translate.Tool{{Name: "Bash", Description: "Run a command.\nUse <b>care</b>.", Schema: json.RawMessage(
				`{"type":"object","properties":{"command":{"type":["string","null"],"description":"The command","default":"ls","deprecated":false},"timeout":{"type":"null","description":"42"}},"additionalProperties":false}`)}}},
		{"none", "You are helpful. Tools are listed within <tools></tools> tags.", nil},
		{"unclosed", "<tools>\n{\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}", []translate.Tool{{Name: "f", Schema: json.RawMessage(`{"type":"object"}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolsFromPrompt(tt.prompt)
			if len(got) != len(tt.want) {
				t.Fatalf("tools %+v, want %d", got, len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Name != w.Name || g.Description != w.Description || !jsonEqual(string(g.Schema), string(w.Schema)) {
					t.Errorf("tool %d: %s %q %s\nwant %s %q %s", i, g.Name, g.Description, g.Schema, w.Name, w.Description, w.Schema)
				}
			}
			if len(got) > 0 && tt.want[0].Name == "get_forecast" {
				if args := synthesizeArguments(got[0].Schema); args != forecastArgs {
					t.Errorf("arguments %s, want %s", args, forecastArgs)
				}
			}
		})
	}
}

func TestPromptToolsScenarios(t *testing.T) {
	system := func(prompt string) string { return `{"role":"system","content":` + jsonString(prompt) + `}` }
	qwenForecast := "<function=get_forecast>\n<parameter=city>\nlouter\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=hourly>\ntrue\n</parameter>\n" +
		"<parameter=scale>\n2\n</parameter>\n<parameter=units>\nmetric\n</parameter>\n<parameter=options>\n{\"alerts\":true}\n</parameter>\n" +
		"<parameter=fields>\n[\"louter\"]\n</parameter>\n</function>"
	tests := []struct {
		name, dialect, scenario, messages, want string
	}{
		{"hermes tool", "hermes", "tool", system(hermesToolsPrompt) + "," + userMessage("forecast?"),
			"<tool_call>\n{\"name\": \"get_forecast\", \"arguments\": " + forecastArgs + "}\n</tool_call>"},
		{"qwen3_coder parallel", "qwen3_coder_bare", "parallel_tools", system(qwen3CoderToolsPrompt) + "," + userMessage("forecast?"),
			qwenForecast + "\n<function=get_time>\n</function>"},
		{"hermes prompt, qwen3_coder answer", "qwen3_coder", "tool", system(hermesToolsPrompt) + "," + userMessage("forecast?"),
			"<tool_call>\n" + qwenForecast + "\n</tool_call>"},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, streamed), func(t *testing.T) {
				m := newMock(t, &Mock{Dialect: tt.dialect})
				w := serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(streamed, tt.messages), ScenarioHeader, tt.scenario))
				if a := readChat(t, w); a.content != tt.want || a.finish != "stop" {
					t.Errorf("status %d, content\n%q, finish %q; want\n%q", w.Code, a.content, a.finish, tt.want)
				}
			})
		}
	}
}

func TestPromptToolsAgent(t *testing.T) {
	bashHermes := "<tools>\n" + `{"type": "function", "function": {"name": "Bash", "description": "Run a command", "parameters": ` + bashTool.schema + "}}\n</tools>"
	bashQwen := "<tools>\n<function>\n<name>Bash</name>\n<description>Run a command</description>\n<parameters>\n" +
		"<parameter>\n<name>command</name>\n<type>string</type>\n</parameter>\n<parameter>\n<name>description</name>\n<type>string</type>\n</parameter>\n" +
		"<required>[\"command\"]</required>\n</parameters>\n</function>\n</tools>"
	system := func(prompt string) string { return `{"role":"system","content":` + jsonString(prompt) + `}` }
	assistant := func(text string) string { return `{"role":"assistant","content":` + jsonString(text) + `}` }
	ask := userMessage(`Run the shell command "echo louter-ok" and tell me its output.`)
	const callArgs = `{"command":"echo louter-ok","description":"Run the command"}`
	tests := []struct {
		name, dialect, messages, want string
	}{
		{"hermes first turn", "hermes", system(bashHermes) + "," + ask,
			"<tool_call>\n{\"name\": \"Bash\", \"arguments\": " + callArgs + "}\n</tool_call>"},
		{"qwen3_coder first turn", "qwen3_coder", system(bashQwen) + "," + ask,
			"<tool_call>\n<function=Bash>\n<parameter=command>\necho louter-ok\n</parameter>\n<parameter=description>\nRun the command\n</parameter>\n</function>\n</tool_call>"},
		{"hermes history", "hermes", system(bashHermes) + "," + ask + "," +
			assistant("<tool_call>\n{\"name\": \"Bash\", \"arguments\": {\"command\": \"echo louter-ok\"}}\n</tool_call>") + "," +
			userMessage("<tool_response>\nlouter-ok\n</tool_response>"),
			"The command printed: louter-ok"},
		{"qwen3_coder history with text", "qwen3_coder think", system(bashQwen) + "," + ask + "," +
			assistant("I will run it.\n\n<tool_call>\n<function=Bash>\n<parameter=command>\necho louter-ok\n</parameter>\n</function>\n</tool_call>") + "," +
			userMessage("<tool_response>\nlouter-ok\n</tool_response>\n<tool_response>\nsunny, 21C\n</tool_response>\nGo on."),
			"<think>\n\n</think>\n\nThe command printed: louter-ok\nsunny, 21C"},
		{"bare history", "qwen3_coder_bare", system(bashQwen) + "," + ask + "," +
			assistant("<function=Bash>\n<parameter=command>\necho louter-ok\n</parameter>\n</function>") + "," +
			userMessage("<tool_response>\nlouter-ok\n</tool_response>"),
			"The command printed: louter-ok"},
		{"tool role with the wrapper", "hermes", system(bashHermes) + "," + ask + "," +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"<tool_response>\nlouter-ok\n</tool_response>"}`,
			"The command printed: louter-ok"},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, streamed), func(t *testing.T) {
				m := newMock(t, &Mock{Dialect: tt.dialect}) // agent is the default scenario
				w := serve(t, m, newRequest(http.MethodPost, chatPath, chatBody(streamed, tt.messages)))
				if a := readChat(t, w); a.content != tt.want || a.finish != "stop" || len(a.toolCalls) != 0 {
					t.Errorf("status %d, content\n%q, finish %q, calls %q; want\n%q", w.Code, a.content, a.finish, a.toolCalls, tt.want)
				}
			})
		}
	}
}

// TestPromptToolsNeedNoTools checks that declared tools win over the
// prompt, and that the tool results of a native request are untouched.
func TestPromptToolsNeedNoTools(t *testing.T) {
	req := &translate.Request{
		System: []translate.Part{{Type: translate.PartText, Text: hermesToolsPrompt}},
		Tools:  []translate.Tool{{Name: "Bash"}},
		Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{
			{Type: translate.PartText, Text: "<tool_response>\nx\n</tool_response>"}}}},
	}
	readPromptTools(req)
	if len(req.Tools) != 1 || req.Tools[0].Name != "Bash" || req.Messages[0].Parts[0].Type != translate.PartText {
		t.Errorf("a request with tools was changed: %+v", req)
	}
}

// TestDialectTextBeforeCalls pins the separators of text followed by calls,
// which no scenario answers.
func TestDialectTextBeforeCalls(t *testing.T) {
	r := &reply{
		blocks: []block{
			{kind: translate.PartThinking, deltas: []string{"Plan."}},
			{kind: translate.PartText, deltas: []string{"I will", " call."}},
			{kind: translate.PartToolCall, name: "get_time", deltas: []string{"{}"}},
			{kind: translate.PartToolCall, name: "run", deltas: []string{`{"cmd":"a\nb",`, `"n":[1]}`}},
		},
		stop: translate.StopToolUse,
	}
	tests := []struct{ dialect, want string }{
		{"hermes think_open", "Plan.\n</think>\n\nI will call.\n\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n" +
			"<tool_call>\n{\"name\": \"run\", \"arguments\": {\"cmd\":\"a\\nb\",\"n\":[1]}}\n</tool_call>"},
		{"qwen3_coder think", "<think>\nPlan.\n</think>\n\nI will call.\n\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>\n" +
			"<tool_call>\n<function=run>\n<parameter=cmd>\na\nb\n</parameter>\n<parameter=n>\n[1]\n</parameter>\n</function>\n</tool_call>"},
		{"harmony", "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary<|message|>I will call.<|end|>" +
			"<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>" +
			"<|start|>assistant<|channel|>commentary to=functions.run <|constrain|>json<|message|>{\"cmd\":\"a\\nb\",\"n\":[1]}<|call|>"},
	}
	for _, tt := range tests {
		d, err := parseDialect(tt.dialect)
		if err != nil {
			t.Fatal(err)
		}
		out := d.render(r)
		if len(out.blocks) != 1 || out.blocks[0].kind != translate.PartText || out.stop != translate.StopEndTurn {
			t.Fatalf("%s: blocks %+v, stop %q", tt.dialect, out.blocks, out.stop)
		}
		if got := out.blocks[0].text(); got != tt.want {
			t.Errorf("%s:\n%q, want\n%q", tt.dialect, got, tt.want)
		}
	}
	// Reasoning in a field stays a thinking block before the markup.
	d, _ := parseDialect("hermes")
	if out := d.render(r); len(out.blocks) != 2 || out.blocks[0].kind != translate.PartThinking || !strings.HasPrefix(out.blocks[1].text(), "I will call.\n\n<tool_call>") {
		t.Errorf("hermes: %+v", out.blocks)
	}
}

package dialect_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// contentTools are the declared tools of the test requests. get_weather's
// schema exercises every typing rule of qwen3_coder values.
var contentTools = []translate.Tool{
	{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{
		"city":{"type":"string"},
		"days":{"type":"integer"},
		"temp":{"type":"number"},
		"metric":{"type":"boolean"},
		"opts":{"type":"object"},
		"tags":{"type":"array","items":{"type":"string"}},
		"note":{"type":["string","null"]},
		"limit":{"type":["integer","null"]},
		"mixed":{"anyOf":[{"type":"integer"},{"type":"string"}]},
		"unit":{"enum":["c","f"]}
	}}`)},
	{Name: "run", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
}

func txt(s string) dialect.Segment { return dialect.Segment{Kind: dialect.SegmentText, Text: s} }
func rsn(s string) dialect.Segment { return dialect.Segment{Kind: dialect.SegmentReasoning, Text: s} }
func call(name, args string) dialect.Segment {
	return dialect.Segment{Kind: dialect.SegmentToolCall, Name: name, Arguments: args}
}

type contentCase struct {
	name string
	cfg  dialect.ContentConfig
	in   string
	want []dialect.Segment // merged
	warn bool              // a warning is expected
}

var (
	cfgPlain  = dialect.ContentConfig{ToolCalls: translate.ToolCallsNative, Reasoning: translate.ReasoningFormatFields}
	cfgAuto   = dialect.ContentConfig{Tools: contentTools}
	cfgAutoNT = dialect.ContentConfig{}
	cfgHermes = dialect.ContentConfig{ToolCalls: translate.ToolCallsHermes, Reasoning: translate.ReasoningFormatFields, Tools: contentTools}
	cfgQwen   = dialect.ContentConfig{ToolCalls: translate.ToolCallsQwen3Coder, Reasoning: translate.ReasoningFormatFields, Tools: contentTools}
	cfgThink  = dialect.ContentConfig{ToolCalls: translate.ToolCallsQwen3Coder, Reasoning: translate.ReasoningFormatThink, Tools: contentTools}
	cfgThinkN = dialect.ContentConfig{ToolCalls: translate.ToolCallsNative, Reasoning: translate.ReasoningFormatThink}
	cfgHarm   = dialect.ContentConfig{Reasoning: translate.ReasoningFormatHarmony}
)

const qwenWeather = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"

var contentCases = []contentCase{
	// Nothing to parse.
	{name: "plain passthrough", cfg: cfgPlain, in: "a <tool_call>{\"name\":\"x\"}</tool_call> </think> <|end|> é",
		want: []dialect.Segment{txt("a <tool_call>{\"name\":\"x\"}</tool_call> </think> <|end|> é")}},
	{name: "auto without tools leaves calls as text", cfg: cfgAutoNT, in: "Hi <tool_call>{\"name\":\"get_weather\"}</tool_call>",
		want: []dialect.Segment{txt("Hi <tool_call>{\"name\":\"get_weather\"}</tool_call>")}},
	{name: "native with tools", cfg: dialect.ContentConfig{ToolCalls: translate.ToolCallsNative, Tools: contentTools}, in: "x <function=get_weather>\n</function>",
		want: []dialect.Segment{txt("x <function=get_weather>\n</function>")}},
	{name: "angle brackets in text", cfg: cfgAuto, in: "if a < b && c > d { <tool> <functional> <think> }",
		want: []dialect.Segment{txt("if a < b && c > d { <tool> <functional> <think> }")}},
	{name: "leading whitespace kept", cfg: cfgAuto, in: "\n\n  Hello",
		want: []dialect.Segment{txt("\n\n  Hello")}},
	{name: "utf-8", cfg: cfgHermes, in: "héllo 世界 <tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"東京\"}}</tool_call>",
		want: []dialect.Segment{txt("héllo 世界 "), call("get_weather", `{"city":"東京"}`)}},

	// Hermes.
	{name: "hermes", cfg: cfgHermes, in: "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		want: []dialect.Segment{txt("Let me check.\n"), call("get_weather", `{"city":"Paris"}`)}},
	{name: "hermes several and text after", cfg: cfgHermes,
		in:   "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"run\", \"arguments\": {\"cmd\": \"ls -l\"}}\n</tool_call>\n\nDone.",
		want: []dialect.Segment{call("get_weather", `{"city":"Paris"}`), call("run", `{"cmd":"ls -l"}`), txt("\n\nDone.")}},
	{name: "hermes arguments as a string", cfg: cfgHermes, in: `<tool_call>{"name":"run","arguments":"{\"cmd\": \"ls\"}"}</tool_call>`,
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`)}},
	{name: "hermes arguments missing", cfg: cfgHermes, in: `<tool_call>{"name":"run"}</tool_call>`,
		want: []dialect.Segment{call("run", `{}`)}},
	{name: "hermes parameters", cfg: cfgHermes, in: `<tool_call>{"name":"run","parameters":{"cmd":"a <b> </tool"}}</tool_call>`,
		want: []dialect.Segment{call("run", `{"cmd":"a <b> </tool"}`)}},
	{name: "hermes array", cfg: cfgHermes, in: `<tool_call>[{"name":"run","arguments":{"cmd":"a"}},{"name":"run","arguments":{"cmd":"b"}}]</tool_call>`,
		want: []dialect.Segment{call("run", `{"cmd":"a"}`), call("run", `{"cmd":"b"}`)}},
	{name: "hermes openai shape", cfg: cfgHermes, in: `<tool_call>{"type":"function","function":{"name":"run","arguments":"{}"}}</tool_call>`,
		want: []dialect.Segment{call("run", `{}`)}},
	{name: "hermes invalid json", cfg: cfgHermes, in: "a<tool_call>{\"name\": \"run\", \"arguments\": {</tool_call>b",
		want: []dialect.Segment{txt("a<tool_call>{\"name\": \"run\", \"arguments\": {</tool_call>b")}, warn: true},
	{name: "hermes no name", cfg: cfgHermes, in: `<tool_call>{"arguments": {}}</tool_call>`,
		want: []dialect.Segment{txt(`<tool_call>{"arguments": {}}</tool_call>`)}, warn: true},
	{name: "hermes arguments not an object", cfg: cfgHermes, in: `<tool_call>{"name":"run","arguments":[1]}</tool_call>`,
		want: []dialect.Segment{txt(`<tool_call>{"name":"run","arguments":[1]}</tool_call>`)}, warn: true},
	{name: "tool_call tag in prose", cfg: cfgHermes, in: "Wrap calls in <tool_call> tags.",
		want: []dialect.Segment{txt("Wrap calls in <tool_call> tags.")}, warn: true},
	{name: "llama.cpp function json", cfg: cfgHermes, in: "ok <function=get_weather>{\"city\": \"Paris\"}</function> done",
		want: []dialect.Segment{txt("ok "), call("get_weather", `{"city":"Paris"}`), txt(" done")}},
	{name: "call then text", cfg: cfgHermes, in: "<tool_call>{\"name\":\"run\"}</tool_call>\nThanks",
		want: []dialect.Segment{call("run", `{}`), txt("\nThanks")}},
	{name: "whitespace after last call dropped", cfg: cfgHermes, in: "<tool_call>{\"name\":\"run\"}</tool_call>\n\n",
		want: []dialect.Segment{call("run", `{}`)}},

	// Qwen3-Coder.
	{name: "qwen3 wrapped", cfg: cfgQwen, in: "Checking.\n\n" + qwenWeather,
		want: []dialect.Segment{txt("Checking.\n\n"), call("get_weather", `{"city":"Paris","days":3}`)}},
	{name: "qwen3 parallel", cfg: cfgQwen, in: qwenWeather + "\n" + qwenWeather,
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":3}`), call("get_weather", `{"city":"Paris","days":3}`)}},
	{name: "qwen3 bare", cfg: cfgQwen, in: "Run it:\n<function=run>\n<parameter=cmd>\necho hi\n</parameter>\n</function>\nthen stop",
		want: []dialect.Segment{txt("Run it:\n"), call("run", `{"cmd":"echo hi"}`), txt("\nthen stop")}},
	{name: "qwen3 missing </parameter>", cfg: cfgQwen, in: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n2\n</function>\n</tool_call>",
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":2}`)}},
	{name: "qwen3 value holds </function> wrapped", cfg: cfgQwen,
		in:   "<tool_call>\n<function=run>\n<parameter=cmd>\necho '</function>'\n</parameter>\n</function>\n</tool_call>",
		want: []dialect.Segment{call("run", `{"cmd":"echo '</function>'"}`)}},
	{name: "qwen3 value holds </function> bare", cfg: cfgQwen,
		in:   "<function=run>\n<parameter=cmd>\necho '</function>' done\n</parameter>\n</function>!",
		want: []dialect.Segment{call("run", `{"cmd":"echo '</function>' done"}`), txt("!")}},
	{name: "qwen3 multiline value keeps inner newlines", cfg: cfgQwen,
		in:   "<function=run>\n<parameter=cmd>\n\nline1\nline2\n\n</parameter>\n</function>",
		want: []dialect.Segment{call("run", `{"cmd":"\nline1\nline2\n"}`)}},
	{name: "qwen3 typed values", cfg: cfgQwen,
		in: "<tool_call>\n<function=get_weather>\n" +
			"<parameter=city>\n42\n</parameter>\n" +
			"<parameter=days>\n5.0\n</parameter>\n" +
			"<parameter=temp>\n21.50\n</parameter>\n" +
			"<parameter=metric>\nTrue\n</parameter>\n" +
			"<parameter=opts>\n{'deep': True, 'x': None, 'q': \"it's\"}\n</parameter>\n" +
			"<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n" +
			"<parameter=note>\nnull\n</parameter>\n" +
			"<parameter=limit>\nnull\n</parameter>\n" +
			"<parameter=mixed>\n12\n</parameter>\n" +
			"<parameter=unit>\nc\n</parameter>\n" +
			"<parameter=extra>\n7\n</parameter>\n" +
			"</function>\n</tool_call>",
		want: []dialect.Segment{call("get_weather", `{"city":"42","days":5,"temp":21.5,"metric":true,"opts":{"deep":true,"x":null,"q":"it's"},"tags":["a","b"],"note":null,"limit":null,"mixed":12,"unit":"c","extra":"7"}`)}},
	{name: "qwen3 values that do not fit the type stay strings", cfg: cfgQwen,
		in:   "<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n<parameter=mixed>\nabc\n</parameter>\n<parameter=opts>\nnot json\n</parameter>\n<parameter=city>\nnull\n</parameter>\n</function>",
		want: []dialect.Segment{call("get_weather", `{"days":"three","mixed":"abc","opts":"not json","city":"null"}`)}},
	{name: "qwen3 unknown tool keeps strings", cfg: cfgQwen, in: "<function=other>\n<parameter=n>\n1\n</parameter>\n</function>",
		want: []dialect.Segment{call("other", `{"n":"1"}`)}},
	{name: "qwen3 no parameters", cfg: cfgQwen, in: "<function=run>\n</function>",
		want: []dialect.Segment{call("run", `{}`)}},
	{name: "qwen3 function without name", cfg: cfgQwen, in: "a <function=>\n</function> b",
		want: []dialect.Segment{txt("a <function=>\n</function> b")}, warn: true},
	{name: "qwen3 function in prose", cfg: cfgQwen, in: "write <function=run> then the body",
		want: []dialect.Segment{txt("write <function=run> then the body")}, warn: true},
	{name: "qwen3 garbage body", cfg: cfgQwen, in: "<tool_call>\n<function=run>\nhello\n</function>\n</tool_call>",
		want: []dialect.Segment{txt("<tool_call>\n<function=run>\nhello\n</function>\n</tool_call>")}, warn: true},

	// Auto detection.
	{name: "auto hermes", cfg: cfgAuto, in: "x<tool_call>\n{\"name\": \"run\", \"arguments\": {\"cmd\": \"ls\"}}\n</tool_call>",
		want: []dialect.Segment{txt("x"), call("run", `{"cmd":"ls"}`)}},
	{name: "auto qwen3 wrapped", cfg: cfgAuto, in: qwenWeather,
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":3}`)}},
	{name: "auto bare declared", cfg: cfgAuto, in: "<function=run>\n<parameter=cmd>\nls\n</parameter>\n</function>",
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`)}},
	{name: "auto bare undeclared is text", cfg: cfgAuto, in: "see <function=foo>\n<parameter=a>\n1\n</parameter>\n</function>",
		want: []dialect.Segment{txt("see <function=foo>\n<parameter=a>\n1\n</parameter>\n</function>")}},
	{name: "auto bare name too long", cfg: cfgAuto, in: "<function=" + strings.Repeat("n", 300) + ">x",
		want: []dialect.Segment{txt("<function=" + strings.Repeat("n", 300) + ">x")}},
	{name: "auto bare declared in prose", cfg: cfgAuto, in: "use <function=run> for shell",
		want: []dialect.Segment{txt("use <function=run> for shell")}},

	{name: "auto bare declared before other markup", cfg: cfgAuto, in: "<function=run><b>x</b>",
		want: []dialect.Segment{txt("<function=run><b>x</b>")}},
	{name: "hermes mode reads a qwen3 block", cfg: cfgHermes, in: qwenWeather,
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":3}`)}},

	// Reasoning: think.
	{name: "think opening with a call", cfg: cfgThink, in: qwenWeather + "\nok",
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":3}`), txt("\nok")}},
	{name: "think without opening tag", cfg: cfgThinkN, in: "Let me think.\nOK.</think>\n\nThe answer is 4.",
		want: []dialect.Segment{rsn("Let me think.\nOK."), txt("The answer is 4.")}},
	{name: "think with opening tag", cfg: cfgThinkN, in: "\n<think>\nHmm.</think>\n\nYes.",
		want: []dialect.Segment{rsn("Hmm."), txt("Yes.")}},
	{name: "think never closed", cfg: cfgThinkN, in: "still thinking <b",
		want: []dialect.Segment{rsn("still thinking <b")}},
	{name: "think empty block", cfg: cfgThinkN, in: "<think>\n\n</think>\n\nHi",
		want: []dialect.Segment{txt("Hi")}},
	{name: "think second </think> dropped", cfg: cfgThinkN, in: "a</think>b</think>c",
		want: []dialect.Segment{rsn("a"), txt("bc")}, warn: true},
	{name: "think ended by a tool call", cfg: cfgThink,
		in:   "I should check the weather.\n\n" + qwenWeather + "\n",
		want: []dialect.Segment{rsn("I should check the weather.\n\n"), call("get_weather", `{"city":"Paris","days":3}`)}},
	{name: "think tool_call in prose stays reasoning", cfg: cfgThink,
		in:   "I could use <tool_call> here.</think>No.",
		want: []dialect.Segment{rsn("I could use <tool_call> here."), txt("No.")}, warn: true},

	// Reasoning: auto.
	{name: "auto think", cfg: cfgAuto, in: "<think>R</think>A",
		want: []dialect.Segment{rsn("R"), txt("A")}},
	{name: "auto think empty", cfg: cfgAutoNT, in: "<think>\n\n</think>\n\nHello",
		want: []dialect.Segment{txt("Hello")}},
	{name: "auto stray </think>", cfg: cfgAutoNT, in: "Answer</think>\n\nmore",
		want: []dialect.Segment{txt("Answermore")}, warn: true},
	{name: "auto think mid text is text", cfg: cfgAutoNT, in: "Hello <think>x",
		want: []dialect.Segment{txt("Hello <think>x")}},
	{name: "fields leaves think tags", cfg: cfgHermes, in: "<think>x</think>y",
		want: []dialect.Segment{txt("<think>x</think>y")}},
	{name: "auto think then calls", cfg: cfgAuto,
		in:   "<think>\nNeed weather.\n</think>\n\n" + qwenWeather,
		want: []dialect.Segment{rsn("Need weather."), call("get_weather", `{"city":"Paris","days":3}`)}},
	{name: "think: whitespace before </think> is the template's", cfg: cfgThink, in: "Let me think.\n \n</think>\n\nHi",
		want: []dialect.Segment{rsn("Let me think."), txt("Hi")}},
	{name: "think: whitespace inside reasoning stays", cfg: cfgThink, in: "a\n\nb\n</think>c",
		want: []dialect.Segment{rsn("a\n\nb"), txt("c")}},
	{name: "auto literal think pair in text stays text", cfg: cfgAutoNT, in: "Use <think>x</think> tags.",
		want: []dialect.Segment{txt("Use <think>x</think> tags.")}},
	{name: "auto whitespace opening a lone call is dropped", cfg: cfgAuto, in: "\n\n" + qwenWeather,
		want: []dialect.Segment{call("get_weather", `{"city":"Paris","days":3}`)}},

	// Harmony.
	{name: "harmony tool call", cfg: cfgHarm,
		in:   "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>",
		want: []dialect.Segment{rsn("Need to use function get_weather."), call("get_weather", `{"location":"San Francisco"}`)}},
	{name: "harmony final", cfg: cfgHarm,
		in:   "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple.<|end|>\n<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
		want: []dialect.Segment{rsn("User asks: \"What is 2 + 2?\" Simple."), txt("2 + 2 = 4.")}},
	{name: "harmony auto detected", cfg: cfgAuto,
		in:   "\n<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>done<|return|>",
		want: []dialect.Segment{rsn("think"), txt("done")}},
	{name: "harmony recipient in role", cfg: cfgHarm,
		in:   "<|start|>assistant to=functions.run<|channel|>commentary json<|message|>{\"cmd\": \"ls\"}<|call|>",
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`)}},
	{name: "harmony preamble", cfg: cfgHarm,
		in:   "<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant<|channel|>commentary to=functions.run<|message|><|call|>",
		want: []dialect.Segment{txt("Checking now."), call("run", `{}`)}},
	{name: "harmony bad arguments", cfg: cfgHarm,
		in:   "<|channel|>commentary to=functions.run<|message|>ls -l<|call|>",
		want: []dialect.Segment{txt("ls -l")}, warn: true},
	{name: "harmony unclosed call", cfg: cfgHarm,
		in:   "<|channel|>commentary to=functions.run <|constrain|>json<|message|>{\"cmd\":\"ls\"}",
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`)}, warn: true},
	{name: "harmony broken header", cfg: cfgHarm, in: "<|start|>assistant<|channel|>final<|end|>after",
		want: []dialect.Segment{txt("assistantfinalafter")}, warn: true},
	{name: "harmony built-in tool is reasoning", cfg: cfgHarm, in: "<|channel|>analysis to=browser.search<|message|>{\"q\":1}<|call|>",
		want: []dialect.Segment{rsn("{\"q\":1}")}},
	{name: "auto hermes inside think", cfg: cfgAuto, in: "<think>plan<tool_call>{\"name\":\"run\"}</tool_call>",
		want: []dialect.Segment{rsn("plan"), call("run", `{}`)}},
	{name: "harmony plain text", cfg: cfgHarm, in: "Just text.",
		want: []dialect.Segment{txt("Just text.")}},

	// The end of the content.
	{name: "close inside a marker", cfg: cfgHermes, in: "abc<tool_",
		want: []dialect.Segment{txt("abc<tool_")}},
	{name: "close unfinished hermes that parses", cfg: cfgHermes, in: "x<tool_call>\n{\"name\":\"run\",\"arguments\":{\"cmd\":\"ls\"}}\n",
		want: []dialect.Segment{txt("x"), call("run", `{"cmd":"ls"}`)}, warn: true},
	{name: "close unfinished hermes", cfg: cfgHermes, in: "x<tool_call>\n{\"name\":\"run\",\"argu",
		want: []dialect.Segment{txt("x<tool_call>\n{\"name\":\"run\",\"argu")}, warn: true},
	{name: "close unfinished qwen3 with </function>", cfg: cfgQwen, in: "<tool_call>\n<function=run>\n<parameter=cmd>\nls\n</parameter>\n</function>\n",
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`)}, warn: true},
	{name: "close unfinished bare qwen3", cfg: cfgQwen, in: "<function=run>\n<parameter=cmd>\nls\n",
		want: []dialect.Segment{txt("<function=run>\n<parameter=cmd>\nls\n")}, warn: true},
	{name: "close bare with unstructural </function>", cfg: cfgQwen, in: "<function=run>\n<parameter=cmd>\nls\n</function>\nok",
		want: []dialect.Segment{call("run", `{"cmd":"ls"}`), txt("\nok")}, warn: true},

	// Limits.
	{name: "call over the limit", cfg: dialect.ContentConfig{ToolCalls: translate.ToolCallsHermes, MaxCallBytes: 40},
		in: "<tool_call>{\"name\":\"run\",\"arguments\":{\"cmd\":\"" + strings.Repeat("x", 50) + "\"}}</tool_call>\n<tool_call>{\"name\":\"run\"}</tool_call>",
		want: []dialect.Segment{
			txt("<tool_call>{\"name\":\"run\",\"arguments\":{\"cmd\":\"" + strings.Repeat("x", 50) + "\"}}</tool_call>\n"),
			call("run", `{}`),
		}, warn: true},
}

// contentRun feeds pieces to a new parser and returns the merged segments
// and the warnings.
func contentRun(cfg dialect.ContentConfig, pieces []string) (segs []dialect.Segment, warns []string, raw []dialect.Segment) {
	cfg.Warn = func(msg string) { warns = append(warns, msg) }
	p := dialect.NewContentParser(cfg)
	for _, s := range pieces {
		raw = p.Feed(raw, s)
	}
	raw = p.Close(raw)
	return contentMerge(raw), warns, raw
}

// contentMerge joins adjacent text and adjacent reasoning segments, as
// callers do.
func contentMerge(segs []dialect.Segment) []dialect.Segment {
	var out []dialect.Segment
	var run strings.Builder // the text of out's last segment, built in linear time
	flush := func() {
		if n := len(out); n > 0 && out[n-1].Kind != dialect.SegmentToolCall {
			out[n-1].Text = run.String()
		}
		run.Reset()
	}
	for _, s := range segs {
		if s.Kind != dialect.SegmentToolCall && s.Text == "" {
			continue
		}
		if n := len(out); n > 0 && s.Kind != dialect.SegmentToolCall && out[n-1].Kind == s.Kind {
			run.WriteString(s.Text)
			continue
		}
		flush()
		out = append(out, s)
		run.WriteString(s.Text)
	}
	flush()
	return out
}

func contentDump(segs []dialect.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		switch s.Kind {
		case dialect.SegmentText:
			fmt.Fprintf(&b, "text %q\n", s.Text)
		case dialect.SegmentReasoning:
			fmt.Fprintf(&b, "reasoning %q\n", s.Text)
		case dialect.SegmentToolCall:
			fmt.Fprintf(&b, "call %s %s\n", s.Name, s.Arguments)
		default:
			fmt.Fprintf(&b, "kind %d %+v\n", s.Kind, s)
		}
	}
	return b.String()
}

// raceEnabled is set under the race detector (race_enabled_test.go).
var raceEnabled bool

// contentSplits are the ways a case is fed: whole, cut in two at every
// byte, and byte by byte.
func contentSplits(in string) [][]string {
	splits := [][]string{{in}}
	step := 1
	if raceEnabled {
		step = 7 // byte-by-byte feeding still crosses every boundary
	}
	for i := 1; i < len(in); i += step {
		splits = append(splits, []string{in[:i], in[i:]})
	}
	bytewise := make([]string, len(in))
	for i := 0; i < len(in); i++ {
		bytewise[i] = in[i : i+1]
	}
	return append(splits, bytewise)
}

func TestContentParser(t *testing.T) {
	for _, tc := range contentCases {
		t.Run(tc.name, func(t *testing.T) {
			want := contentDump(tc.want)
			// A well-formed case whose text has no markup must not leak a
			// fragment of any marker into any segment.
			clean := !tc.warn && !strings.ContainsAny(contentTextOf(tc.want), "<>|")
			for _, pieces := range contentSplits(tc.in) {
				got, warns, raw := contentRun(tc.cfg, pieces)
				if g := contentDump(got); g != want {
					t.Fatalf("fed in %d pieces (first %q):\n got:\n%s want:\n%s", len(pieces), pieces[0], g, want)
				}
				if (len(warns) > 0) != tc.warn {
					t.Fatalf("fed in %d pieces (first %q): warnings %q, want any: %v", len(pieces), pieces[0], warns, tc.warn)
				}
				for _, s := range raw {
					if s.Kind == dialect.SegmentToolCall {
						if !json.Valid([]byte(s.Arguments)) || s.Arguments[0] != '{' {
							t.Fatalf("arguments %q are not a JSON object", s.Arguments)
						}
					} else if clean && strings.ContainsAny(s.Text, "<>|") {
						t.Fatalf("fed in %d pieces (first %q): markup fragment in segment %q", len(pieces), pieces[0], s.Text)
					}
				}
			}
		})
	}
}

func contentTextOf(segs []dialect.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Text)
	}
	return b.String()
}

// TestContentParserFlows checks that text and reasoning leave Feed as soon
// as nothing could still turn them into markup.
func TestContentParserFlows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    dialect.ContentConfig
		pieces []string
		want   []string // the text or reasoning out of each Feed
	}{
		{"plain", cfgAuto, []string{"Hello", " wor", "ld"}, []string{"Hello", " wor", "ld"}},
		{"held marker prefix", cfgAuto, []string{"a <tool", "_x", " b"}, []string{"a ", "<tool_x", " b"}},
		{"reasoning", cfgThinkN, []string{"Let", " me</th", "ink>\n", "\nOK"}, []string{"Let", " me", "", "OK"}},
		{"harmony", cfgHarm, []string{"<|channel|>analysis<|message|>a", "b<|e", "nd|>"}, []string{"a", "b", ""}},
		{"text around a call", cfgHermes, []string{"x<tool_call>{\"name\":", "\"run\"}</tool_call>y"}, []string{"x", "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dialect.NewContentParser(tc.cfg)
			for i, s := range tc.pieces {
				var got string
				for _, seg := range p.Feed(nil, s) {
					got += seg.Text
				}
				if got != tc.want[i] {
					t.Fatalf("Feed(%q) gave %q, want %q", s, got, tc.want[i])
				}
			}
		})
	}
}

// TestContentParserPassthroughAllocs checks the steady state of plain text:
// no copy, no allocation beyond the segment itself.
func TestContentParserPassthroughAllocs(t *testing.T) {
	p := dialect.NewContentParser(dialect.ContentConfig{})
	p.Feed(nil, "Hello")
	dst := make([]dialect.Segment, 0, 4)
	chunk := "plain text with no markup in it, "
	if n := testing.AllocsPerRun(100, func() { dst = p.Feed(dst[:0], chunk) }); n != 0 {
		t.Fatalf("%v allocations per Feed", n)
	}
	if len(dst) != 1 || dst[0].Text != chunk {
		t.Fatalf("got %+v", dst)
	}
}

package dialect_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/internal/streamtest"
	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden/dialects")

// dialectTools are the tools every dialect fixture's request declares.
// get_forecast has a parameter of every JSON type, so Qwen3-Coder values
// (untyped text) must be typed by the schema.
var dialectTools = []translate.Tool{
	{Name: "get_forecast", Description: "Get a weather forecast", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"hourly":{"type":"boolean"},"scale":{"type":"number"},"units":{"type":"string","enum":["metric","imperial"]},"options":{"type":"object"},"fields":{"type":"array","items":{"type":"string"}}}}`)},
	{Name: "get_time", Description: "Get the time", Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
}

// dialectMarkers are text no client may see from a dialect backend.
var dialectMarkers = []string{"<tool_call", "</tool_call", "<function=", "</function", "<parameter=", "<think>", "</think>", "<|"}

type dialectCall struct {
	name string
	args string // JSON; "" checks the name only
}

type dialectCase struct {
	file    string // under testdata/dialects
	dialect *translate.Dialect
	// malformed: the fixture's call cannot be read and must reach the
	// client as text (dialectMarkers included).
	malformed bool
	warns     bool // the parser warns (about a call it repaired)
	calls     []dialectCall
	text      []string // substrings of the text
	thinking  []string // substrings of the thinking
	stop      translate.StopReason
}

var dialectCases = []dialectCase{
	{
		file: "hermes_single.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsHermes},
		calls: []dialectCall{{"get_forecast", `{"city":"Paris","days":3,"units":"metric"}`}},
		text:  []string{"I'll check the forecast for Paris."}, stop: translate.StopToolUse,
	},
	{
		file:  "hermes_parallel.sse", // auto: recognised because tools are declared
		calls: []dialectCall{{"get_forecast", `{"city":"Zürich ☀","days":2,"fields":["temp","wind"]}`}, {"get_time", `{}`}},
		text:  []string{"Let me look up both.", "and the time:", "Both requested."}, stop: translate.StopToolUse,
	},
	{
		file: "hermes_malformed.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsHermes}, malformed: true,
		text: []string{"Let me look that up.", "<tool_call>\n{\"name\": \"get_forecast\", \"arguments\": {\"city\": }\n</tool_call>"},
		stop: translate.StopEndTurn,
	},
	{
		file: "qwen3_coder_wrapped.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder},
		calls: []dialectCall{{"get_forecast", `{"city":"San Francisco","days":5,"hourly":true,"scale":1.5,"units":"metric","options":{"alerts":true},"fields":["temp","wind"]}`}},
		text:  []string{"I will fetch the forecast."}, stop: translate.StopToolUse,
	},
	{
		file: "qwen3_coder_bare.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder},
		calls: []dialectCall{{"get_time", `{}`}, {"get_forecast", `{"city":"Oslo","days":2}`}},
		text:  []string{"Checking."}, stop: translate.StopToolUse,
	},
	{
		// The model stopped after </function>: the call is complete
		// without its </tool_call>.
		file: "qwen3_coder_unclosed.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder}, warns: true,
		calls: []dialectCall{{"get_forecast", `{"city":"Lima","days":4}`}},
		text:  []string{"Fetching."}, stop: translate.StopToolUse,
	},
	{
		// The output limit cut the call inside a parameter: an unfinished
		// call is released as the text it was, and the stop reason stays
		// max_tokens.
		file: "qwen3_coder_truncated.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder}, malformed: true,
		text: []string{"Fetching.\n\n<tool_call>\n<function=get_forecast>\n<parameter=city>\nLima\n</parameter>\n<parameter=days>\n4"},
		stop: translate.StopMaxTokens,
	},
	{
		file:     "think_tags.sse", // auto: a leading <think> block
		thinking: []string{"Simple arithmetic: 4."},
		text:     []string{"2 + 2 = 4. A comparison: 3 < 4."}, stop: translate.StopEndTurn,
	},
	{
		file: "think_open.sse", dialect: &translate.Dialect{Reasoning: translate.ReasoningFormatThink},
		thinking: []string{"Okay, the user wants a haiku about rain."},
		text:     []string{"Soft rain on the roof\nwhispers"}, stop: translate.StopEndTurn,
	},
	{
		file:     "think_then_qwen_call.sse",
		dialect:  &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder, Reasoning: translate.ReasoningFormatThink},
		thinking: []string{"I should call get_forecast with days=3."},
		calls:    []dialectCall{{"get_forecast", `{"city":"Paris","days":3}`}}, stop: translate.StopToolUse,
	},
	{
		file: "harmony_text.sse", dialect: &translate.Dialect{Reasoning: translate.ReasoningFormatHarmony},
		thinking: []string{`User asks: "What is 2 + 2?" Simple arithmetic.`},
		text:     []string{"2 + 2 = 4."}, stop: translate.StopEndTurn,
	},
	{
		file: "harmony_tool.sse", dialect: &translate.Dialect{Reasoning: translate.ReasoningFormatHarmony},
		thinking: []string{"Need to use function get_forecast."},
		calls:    []dialectCall{{"get_forecast", `{"city":"Tokyo","days":2}`}}, stop: translate.StopToolUse,
	},
	{
		file: "reasoning_content_hermes.sse", dialect: &translate.Dialect{ToolCalls: translate.ToolCallsHermes},
		thinking: []string{"The user wants the time. get_time takes no arguments."},
		calls:    []dialectCall{{"get_time", `{}`}}, stop: translate.StopToolUse,
	},
	{
		file:     "vllm_reasoning_qwen3.sse",
		dialect:  &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder, Reasoning: translate.ReasoningFormatFields},
		thinking: []string{"Forecast for Rome, hourly, in imperial units."},
		calls:    []dialectCall{{"get_forecast", `{"city":"Rome","hourly":false,"units":"imperial"}`}},
		text:     []string{"Sure."}, stop: translate.StopToolUse,
	},
	{
		file:  "ollama_native.sse", // native calls; auto still reads the text
		calls: []dialectCall{{"get_forecast", `{"city":"Berlin","days":1}`}},
		text:  []string{"Checking the forecast."}, stop: translate.StopToolUse,
	},
}

func (c *dialectCase) request() *translate.Request {
	return &translate.Request{Model: "client-model", Stream: true, IncludeUsage: true, Tools: dialectTools}
}

func (c *dialectCase) config() dialect.Config {
	return dialect.Config{Dialect: c.dialect, Request: c.request()}
}

func (c *dialectCase) body(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "dialects", c.file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (c *dialectCase) name() string { return strings.TrimSuffix(c.file, ".sse") }

func dialectChatCodec() translate.Codec {
	codec, _ := translate.Lookup(translate.ProtocolOpenAIChat)
	return codec
}

// dialectTranscode runs body, cut into writes, through a transcoder whose
// decoder is the dialect decoder, to the client protocol to. The output is
// not normalized.
func dialectTranscode(c *dialectCase, to translate.Protocol, writes [][]byte) []byte {
	enc, _ := translate.Lookup(to)
	dec := dialect.NewDecoder(dialectChatCodec().NewStreamDecoder(), c.config())
	tc := stream.NewTranscoder(&stream.SSEParser{}, dec, enc.NewStreamEncoder(c.request()), &stream.SSEOutput{})
	var out []byte
	for _, w := range writes {
		out = append(out, tc.Write(w)...)
	}
	return append(out, tc.Close()...)
}

// dialectNormalize blanks what differs from run to run (generated ids: 24
// hex digits; timestamps) like normalize, with a plain scan: the split
// tests compare thousands of outputs, and the regular expressions would
// take minutes.
func dialectNormalize(b []byte) []byte {
	hex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
	word := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case hex(c) && (i == 0 || !word(b[i-1])):
			j := i
			for j < len(b) && hex(b[j]) {
				j++
			}
			if j-i == 24 && (j == len(b) || !word(b[j])) {
				out = append(out, "GENERATED"...)
			} else {
				out = append(out, b[i:j]...)
			}
			i = j
		case c == '"' && (bytes.HasPrefix(b[i:], []byte(`"created":`)) || bytes.HasPrefix(b[i:], []byte(`"created_at":`))):
			j := i + bytes.IndexByte(b[i:], ':') + 1
			out = append(out, b[i:j]...)
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			out = append(out, '0')
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// TestDialectTranscode is the golden test of every fixture to every client
// protocol. The client gets the same bytes however the upstream body is
// cut into writes: at every event boundary, every 61 bytes, in chunks of
// 1, 7 and 512 bytes. (TestDialectSplitAnywhere tries every byte, on the
// IR the encoders are fed; cutting at every byte here too would cost
// framing every fixture 4 times per byte for little more.)
func TestDialectTranscode(t *testing.T) {
	for i := range dialectCases {
		c := &dialectCases[i]
		body := c.body(t)
		var splits []int
		for i := 0; i < len(body); i += 61 {
			splits = append(splits, i)
		}
		for i := 0; ; {
			n := bytes.Index(body[i:], []byte("\n\n"))
			if n < 0 {
				break
			}
			i += n + 2
			splits = append(splits, i-1, i)
		}
		for _, to := range translate.ClientProtocols() {
			t.Run(c.name()+"->"+string(to), func(t *testing.T) {
				raw := dialectTranscode(c, to, [][]byte{body})
				whole := dialectNormalize(raw)
				enc, _ := translate.Lookup(to)
				newEnc := func() translate.StreamEncoder { return enc.NewStreamEncoder(c.request()) }
				memo, ref := streamtest.NewTranscodeMemo(streamtest.SSEFramer, streamtest.SSEOutput, dialectDecoder(c), newEnc, body)
				if got := dialectNormalize(ref); !bytes.Equal(got, whole) {
					t.Fatalf("the decoder keeps a framed event's bytes past Decode: with them overwritten after the call the client gets\n%s\n--- instead of\n%s", got, whole)
				}
				out := streamtest.SSEOutput()
				for _, i := range splits {
					if got := memo.Run(streamtest.SSEFramer(), out, [][]byte{body[:i], body[i:]}); !bytes.Equal(got, ref) && !bytes.Equal(dialectNormalize(got), whole) {
						t.Fatalf("split at byte %d differs:\n--- split\n%s\n--- whole\n%s", i, dialectNormalize(got), whole)
					}
				}
				for _, size := range []int{1, 7, 512} {
					if got := dialectNormalize(dialectTranscode(c, to, streamtest.Chunks(body, size))); !bytes.Equal(got, whole) {
						t.Fatalf("chunks of %d bytes differ:\n--- chunked\n%s\n--- whole\n%s", size, got, whole)
					}
				}
				streamtest.Golden(t, filepath.Join("dialects", c.name()+".to_"+string(to)+".sse"), streamtest.Normalize(raw), *update)
			})
		}
	}
}

// dialectDecoder returns the factory of case c's dialect decoder.
func dialectDecoder(c *dialectCase) func() translate.StreamDecoder {
	return func() translate.StreamDecoder {
		return dialect.NewDecoder(dialectChatCodec().NewStreamDecoder(), c.config())
	}
}

// dialectBlankIDs blanks the call ids the dialect decoder generates.
func dialectBlankIDs(evs []translate.Event) []translate.Event {
	for i := range evs {
		if reDialectCallID.MatchString(evs[i].ID) {
			evs[i].ID = "call_GENERATED"
		}
	}
	return evs
}

// TestDialectSplitAnywhere feeds each fixture in two writes split at every
// byte: the IR events, delta for delta, are those of one write. A
// streamtest.Memo shares the decoding across the cuts (see its doc).
func TestDialectSplitAnywhere(t *testing.T) {
	for i := range dialectCases {
		c := &dialectCases[i]
		t.Run(c.name(), func(t *testing.T) {
			body := c.body(t)
			memo, ref, err := streamtest.NewDecodeMemo(streamtest.SSEFramer, dialectDecoder(c), body)
			if err != nil {
				t.Fatal(err)
			}
			raw := append([]translate.Event(nil), ref...)
			ref = dialectBlankIDs(ref)
			plain, err := streamtest.DecodeWrites(nil, streamtest.SSEFramer(), dialectDecoder(c)(), [][]byte{body})
			if err != nil {
				t.Fatal(err)
			}
			if whole := dialectBlankIDs(plain); !reflect.DeepEqual(ref, whole) {
				t.Fatalf("the decoder keeps a framed event's bytes past Decode: with them overwritten after the call it gives\n%s\nnot\n%s", dialectDumpEvents(ref), dialectDumpEvents(whole))
			}
			for i := 0; i <= len(body); i++ {
				got, err := memo.Decode(streamtest.SSEFramer(), [][]byte{body[:i], body[i:]})
				if err != nil {
					t.Fatal(err)
				}
				// Replayed calls repeat the reference's generated ids;
				// only a run that went live needs them blanked.
				if !streamtest.SameEvents(got, raw) && !reflect.DeepEqual(dialectBlankIDs(got), ref) {
					t.Fatalf("split at byte %d differs:\n got %s\nwant %s", i, dialectDumpEvents(got), dialectDumpEvents(ref))
				}
			}
		})
	}
}

// dialectReplay stands in for the OpenAI Chat decoder: each Decode yields
// the next of a prepared IR event stream, End the rest.
type dialectReplay struct {
	evs []translate.Event
	i   int
}

func (r *dialectReplay) Decode(dst []translate.Event, _ string, _ []byte) []translate.Event {
	if r.i < len(r.evs) {
		dst = append(dst, r.evs[r.i])
		r.i++
	}
	return dst
}

func (r *dialectReplay) End(dst []translate.Event) []translate.Event {
	dst = append(dst, r.evs[r.i:]...)
	r.i = len(r.evs)
	return dst
}

// dialectInner is what the plain OpenAI Chat decoder makes of body.
func dialectInner(t testing.TB, body []byte) []translate.Event {
	t.Helper()
	dec := dialectChatCodec().NewStreamDecoder()
	var evs []translate.Event
	var p stream.SSEParser
	fn := func(name string, data []byte) { evs = dec.Decode(evs, name, data) }
	if err := p.Feed(body, fn); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(fn); err != nil {
		t.Fatal(err)
	}
	return dec.End(evs)
}

// dialectRun feeds an IR event stream through the dialect decoder.
func dialectRun(inner []translate.Event, cfg dialect.Config) []translate.Event {
	dec := dialect.NewDecoder(&dialectReplay{evs: inner}, cfg)
	var out []translate.Event
	for range inner {
		out = dec.Decode(out, "", nil)
	}
	return dec.End(out)
}

var reDialectCallID = regexp.MustCompile(`^call_[0-9a-f]{24}$`)

// dialectMerge joins adjacent deltas of the same block (text and argument
// fragments; signatures stay apart) and normalizes generated call ids, so
// streams that differ only in how their deltas were cut compare equal.
func dialectMerge(evs []translate.Event) []translate.Event {
	var out []translate.Event
	for _, ev := range evs {
		if ev.Type == translate.EventBlockStart && reDialectCallID.MatchString(ev.ID) {
			ev.ID = "call_GENERATED"
		}
		if n := len(out); n > 0 && ev.Type == translate.EventBlockDelta && ev.Signature == "" {
			last := &out[n-1]
			if last.Type == translate.EventBlockDelta && last.Index == ev.Index && last.Signature == "" {
				last.Text += ev.Text
				continue
			}
		}
		out = append(out, ev)
	}
	return out
}

// dialectRecut returns inner with the text of each text block (merged first) cut
// by cut into deltas.
func dialectRecut(inner []translate.Event, cut func(string) []string) []translate.Event {
	var out []translate.Event
	for _, ev := range dialectMerge(inner) {
		if ev.Type == translate.EventBlockDelta && ev.Block == translate.BlockText {
			for _, s := range cut(ev.Text) {
				ev.Text = s
				out = append(out, ev)
			}
			continue
		}
		out = append(out, ev)
	}
	return out
}

func dialectCutAt(i int) func(string) []string {
	return func(s string) []string {
		i := min(i, len(s))
		for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
			i-- // a delta is always whole runes
		}
		return []string{s[:i], s[i:]}
	}
}

func dialectCutRunes(s string) []string {
	var out []string
	for i, r := range s {
		out = append(out, s[i:i+utf8.RuneLen(r)])
	}
	return out
}

// TestDialectRechunk holds the parser to its guarantee: however the content
// is cut into deltas, the merged IR is the same, and no marker reaches the
// text or the thinking.
func TestDialectRechunk(t *testing.T) {
	for i := range dialectCases {
		c := &dialectCases[i]
		t.Run(c.name(), func(t *testing.T) {
			inner := dialectInner(t, c.body(t))
			cfg := c.config()
			var warnings []string
			cfg.Warn = func(msg string) { warnings = append(warnings, msg) }
			want := dialectMerge(dialectRun(inner, cfg))
			c.check(t, want)
			// A call kept as text or repaired is worth a warning; nothing
			// else is.
			if (c.malformed || c.warns) != (len(warnings) > 0) {
				t.Errorf("warnings %q", warnings)
			}
			textLen := 0
			for _, ev := range dialectMerge(inner) {
				if ev.Type == translate.EventBlockDelta && ev.Block == translate.BlockText {
					textLen = max(textLen, len(ev.Text))
				}
			}
			variants := map[string]func(string) []string{"runes": dialectCutRunes}
			for i := 0; i <= textLen; i++ {
				variants[fmt.Sprintf("cut at %d", i)] = dialectCutAt(i)
			}
			for name, cut := range variants {
				got := dialectMerge(dialectRun(dialectRecut(inner, cut), c.config()))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("content %s:\n got %s\nwant %s", name, dialectDumpEvents(got), dialectDumpEvents(want))
				}
			}
		})
	}
}

// check holds a merged dialect stream to the case's expectations.
func (c *dialectCase) check(t *testing.T, evs []translate.Event) {
	t.Helper()
	var text, thinking strings.Builder
	var calls []dialectCall
	var stop translate.StopReason
	open := map[int]translate.BlockType{}
	for _, ev := range evs {
		switch ev.Type {
		case translate.EventBlockStart:
			open[ev.Index] = ev.Block
			if ev.Block == translate.BlockToolCall {
				calls = append(calls, dialectCall{name: ev.Name})
			}
		case translate.EventBlockDelta:
			switch ev.Block {
			case translate.BlockText:
				text.WriteString(ev.Text)
			case translate.BlockThinking:
				thinking.WriteString(ev.Text)
			case translate.BlockToolCall:
				calls[len(calls)-1].args += ev.Text
			}
		case translate.EventBlockStop:
			delete(open, ev.Index)
		case translate.EventMessageStop:
			stop = ev.Stop
		case translate.EventError:
			t.Errorf("stream failed: %+v", ev.Err)
		}
	}
	if len(open) != 0 {
		t.Errorf("blocks left open: %v", open)
	}
	if !c.malformed {
		for _, m := range dialectMarkers {
			if strings.Contains(text.String(), m) || strings.Contains(thinking.String(), m) {
				t.Errorf("marker %q reached the client: text %q, thinking %q", m, text.String(), thinking.String())
			}
		}
	}
	for _, s := range c.text {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text %q does not contain %q", text.String(), s)
		}
	}
	for _, s := range c.thinking {
		if !strings.Contains(thinking.String(), s) {
			t.Errorf("thinking %q does not contain %q", thinking.String(), s)
		}
	}
	if len(c.thinking) == 0 && thinking.Len() > 0 {
		t.Errorf("unexpected thinking %q", thinking.String())
	}
	if len(calls) != len(c.calls) {
		t.Fatalf("calls %+v, want %+v", calls, c.calls)
	}
	for i, w := range c.calls {
		if calls[i].name != w.name || (w.args != "" && !dialectJSONEqual(calls[i].args, w.args)) {
			t.Errorf("call %d: %s %s, want %s %s", i, calls[i].name, calls[i].args, w.name, w.args)
		}
		if !json.Valid([]byte(calls[i].args)) {
			t.Errorf("call %d: arguments %q are not JSON", i, calls[i].args)
		}
	}
	if stop != c.stop {
		t.Errorf("stop %q, want %q", stop, c.stop)
	}
}

func dialectJSONEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func dialectDumpEvents(evs []translate.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %s #%d %s id=%q name=%q text=%q", ev.Type, ev.Index, ev.Block, ev.ID, ev.Name, ev.Text)
		if ev.Stop != "" {
			fmt.Fprintf(&b, " stop=%s", ev.Stop)
		}
	}
	return b.String()
}

// dialectAccumulate folds an IR stream into a response.
func dialectAccumulate(t *testing.T, evs []translate.Event) *translate.Response {
	t.Helper()
	var a translate.Accumulator
	for i := range evs {
		a.Add(&evs[i])
	}
	resp, err := a.Result()
	if err != nil {
		t.Fatalf("stream failed: %+v", err)
	}
	return resp
}

func dialectNormParts(parts []translate.Part) []translate.Part {
	out := make([]translate.Part, len(parts))
	for i, p := range parts {
		if p.ToolCall != nil {
			tc := *p.ToolCall
			if reDialectCallID.MatchString(tc.ID) {
				tc.ID = "call_GENERATED"
			}
			p.ToolCall = &tc
		}
		out[i] = p
	}
	return out
}

func dialectCloneResponse(r *translate.Response) *translate.Response {
	c := *r
	c.Parts = make([]translate.Part, len(r.Parts))
	for i, p := range r.Parts {
		if p.ToolCall != nil {
			tc := *p.ToolCall
			p.ToolCall = &tc
		}
		c.Parts[i] = p
	}
	return &c
}

// TestResponse checks that a complete response gets the same parts
// and stop reason as its stream, and that the input is left alone.
func TestResponse(t *testing.T) {
	for i := range dialectCases {
		c := &dialectCases[i]
		t.Run(c.name(), func(t *testing.T) {
			inner := dialectInner(t, c.body(t))
			want := dialectAccumulate(t, dialectRun(inner, c.config()))
			in := dialectAccumulate(t, inner)
			before := dialectCloneResponse(in)
			got := dialect.Response(in, c.config())
			if !reflect.DeepEqual(in, before) {
				t.Errorf("input modified:\n got %+v\nwant %+v", in, before)
			}
			if !reflect.DeepEqual(dialectNormParts(got.Parts), dialectNormParts(want.Parts)) {
				t.Errorf("parts differ from the stream's:\n got %s\nwant %s", dialectDumpParts(got.Parts), dialectDumpParts(want.Parts))
			}
			if got.StopReason != want.StopReason || got.StopSequence != want.StopSequence || got.Usage != want.Usage ||
				got.ID != want.ID || got.Model != want.Model {
				t.Errorf("got %s %q %+v %s %s, want %s %q %+v %s %s", got.StopReason, got.StopSequence, got.Usage, got.ID, got.Model,
					want.StopReason, want.StopSequence, want.Usage, want.ID, want.Model)
			}
		})
	}
}

func dialectDumpParts(parts []translate.Part) string {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "\n  %s %q", p.Type, p.Text)
		if p.ToolCall != nil {
			fmt.Fprintf(&b, " %s %s %s", p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.Arguments)
		}
	}
	return b.String()
}

// dialectChatChunks builds a chat.completion.chunk stream out of deltas (raw JSON
// objects); the last one carries finish.
func dialectChatChunks(finish string, deltas ...string) []byte {
	var b bytes.Buffer
	for _, d := range deltas {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
	}
	fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", finish)
	return b.Bytes()
}

func dialectJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDialectNamesAndIDs checks that the names and ids the request encoder
// rewrote for the backend come back as the client wrote them, in native
// calls and in calls parsed out of the text.
func TestDialectNamesAndIDs(t *testing.T) {
	longName := "mcp__server__" + strings.Repeat("x", 87) // 100 bytes
	dotName := "mcp.search.web"
	clientID := "toolu_01:abc.def"
	req := &translate.Request{
		Model: "client-model",
		Tools: []translate.Tool{
			{Name: longName, Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			{Name: dotName, Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}}}`)},
		},
		Messages: []translate.Message{
			{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: "search"}}},
			{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: clientID, Name: dotName, Arguments: `{"q":"a"}`}}}},
			{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartToolResult, ToolResult: &translate.ToolResult{CallID: clientID, Content: []translate.Part{{Type: translate.PartText, Text: "ok"}}}}}},
		},
	}
	for _, format := range []translate.ToolCallFormat{translate.ToolCallsHermes, translate.ToolCallsQwen3Coder, translate.ToolCallsAuto} {
		t.Run(string(format), func(t *testing.T) {
			d := &translate.Dialect{ToolCalls: format}
			backLong, backDot, backID := d.BackendToolName(longName), d.BackendToolName(dotName), d.BackendToolID(clientID)
			if backLong == longName || backDot == dotName || backID == clientID {
				t.Fatalf("nothing to restore: %s %s %s", backLong, backDot, backID)
			}
			var call string
			if format == translate.ToolCallsQwen3Coder {
				call = "<tool_call>\n<function=" + backDot + ">\n<parameter=q>\nweather\n</parameter>\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>"
			} else {
				call = "<tool_call>\n{\"name\": \"" + backDot + "\", \"arguments\": {\"q\": \"weather\", \"n\": 2}}\n</tool_call>"
			}
			var deltas []string
			for _, s := range dialectCutRunes("Searching.\n" + call) {
				deltas = append(deltas, `{"content":`+dialectJSONString(s)+`}`)
			}
			deltas = append(deltas,
				`{"tool_calls":[{"index":0,"id":"`+backID+`","type":"function","function":{"name":"`+backLong+`","arguments":""}}]}`,
				`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`,
				`{"tool_calls":[{"index":0,"function":{"arguments":"\"rain\"}"}}]}`)
			body := dialectChatChunks("stop", deltas...)
			cfg := dialect.Config{Dialect: d, Request: req}

			inner := dialectInner(t, body)
			evs := dialectMerge(dialectRun(inner, cfg))
			resp := dialectAccumulate(t, evs)
			if len(resp.Parts) != 3 || resp.Parts[0].Type != translate.PartText || strings.TrimSpace(resp.Parts[0].Text) != "Searching." {
				t.Fatalf("parts: %s", dialectDumpParts(resp.Parts))
			}
			parsed, native := resp.Parts[1].ToolCall, resp.Parts[2].ToolCall
			if parsed == nil || parsed.Name != dotName || !dialectJSONEqual(parsed.Arguments, `{"q":"weather","n":2}`) || parsed.ID != "call_GENERATED" {
				t.Errorf("parsed call: %+v", parsed)
			}
			if native == nil || native.Name != longName || native.ID != clientID || native.Arguments != `{"q":"rain"}` {
				t.Errorf("native call: %+v", native)
			}
			if resp.StopReason != translate.StopToolUse {
				t.Errorf("stop %s, want tool_use", resp.StopReason)
			}

			// The complete response.
			in := dialectAccumulate(t, inner)
			in.StopReason = translate.StopEndTurn
			got := dialect.Response(in, cfg)
			if !reflect.DeepEqual(dialectNormParts(got.Parts), dialectNormParts(resp.Parts)) || got.StopReason != translate.StopToolUse {
				t.Errorf("response: %s %s, want %s", got.StopReason, dialectDumpParts(got.Parts), dialectDumpParts(resp.Parts))
			}
			if in.Parts[1].ToolCall.Name != backLong || in.StopReason != translate.StopEndTurn {
				t.Errorf("input modified: %s", dialectDumpParts(in.Parts))
			}

			// And as the client sees it.
			enc, _ := translate.Lookup(translate.ProtocolAnthropic)
			tc := stream.NewTranscoder(&stream.SSEParser{}, dialect.NewDecoder(dialectChatCodec().NewStreamDecoder(), cfg), enc.NewStreamEncoder(req), &stream.SSEOutput{})
			out := string(append(tc.Write(body), tc.Close()...))
			for _, s := range []string{`"name":"` + longName + `"`, `"name":"` + dotName + `"`, `"id":"` + clientID + `"`, `"stop_reason":"tool_use"`} {
				if !strings.Contains(out, s) {
					t.Errorf("client stream lacks %s:\n%s", s, out)
				}
			}
		})
	}
}

// TestDialectNilDialectKeepsNames checks a backend without a dialect block:
// its requests carry the client's own names and ids, so nothing is mapped
// back, and a bare call of a declared name that no dialect would let the
// backend see is still recognised.
func TestDialectNilDialectKeepsNames(t *testing.T) {
	dotName := "mcp.search.web"
	req := &translate.Request{Tools: []translate.Tool{{Name: dotName, Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}}}
	body := dialectChatChunks("stop",
		`{"content":"<function=`+dotName+`>\n<parameter=n>\n2\n</parameter>\n</function>"}`,
		`{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"`+dotName+`","arguments":"{}"}}]}`)
	resp := dialectAccumulate(t, dialectRun(dialectInner(t, body), dialect.Config{Request: req}))
	if len(resp.Parts) != 2 {
		t.Fatalf("parts: %s", dialectDumpParts(resp.Parts))
	}
	for i, p := range resp.Parts {
		if p.ToolCall == nil || p.ToolCall.Name != dotName {
			t.Errorf("part %d: %s", i, dialectDumpParts(resp.Parts))
		}
	}
	if resp.Parts[0].ToolCall != nil && resp.Parts[0].ToolCall.Arguments != `{"n":2}` {
		t.Errorf("arguments %s, want {\"n\":2}", resp.Parts[0].ToolCall.Arguments)
	}
}

// TestDialectStopReason checks the stop reason the client gets when the
// server's finish reason disagrees with what the text held.
func TestDialectStopReason(t *testing.T) {
	cfg := dialect.Config{Dialect: &translate.Dialect{ToolCalls: translate.ToolCallsHermes}, Request: &translate.Request{Tools: dialectTools}}
	var warnings []string
	cfg.Warn = func(msg string) { warnings = append(warnings, msg) }
	call := `<tool_call>{"name": "get_time", "arguments": {}}</tool_call>`
	for _, tc := range []struct {
		content string
		finish  string
		want    translate.StopReason
	}{
		{call, "stop", translate.StopToolUse},
		{call, "length", translate.StopMaxTokens},
		{"Hello.", "tool_calls", translate.StopEndTurn}, // no call at all
		{"Hello.", "stop", translate.StopEndTurn},
	} {
		body := dialectChatChunks(tc.finish, `{"content":`+dialectJSONString(tc.content)+`}`)
		resp := dialectAccumulate(t, dialectRun(dialectInner(t, body), cfg))
		if resp.StopReason != tc.want {
			t.Errorf("%q + %s: stop %s, want %s", tc.content, tc.finish, resp.StopReason, tc.want)
		}
		in := dialectAccumulate(t, dialectInner(t, body))
		if got := dialect.Response(in, cfg); got.StopReason != tc.want {
			t.Errorf("response %q + %s: stop %s, want %s", tc.content, tc.finish, got.StopReason, tc.want)
		}
	}
	if len(warnings) == 0 {
		t.Error("no warning for tool_calls without a call")
	}
}

// TestDialectTextAfterNativeCall checks that text after a native call is
// parsed by a fresh parser, which no longer takes it for the reasoning a
// "think" template opened in the prompt.
func TestDialectTextAfterNativeCall(t *testing.T) {
	cfg := dialect.Config{
		Dialect: &translate.Dialect{Reasoning: translate.ReasoningFormatThink},
		Request: &translate.Request{Tools: dialectTools},
	}
	body := dialectChatChunks("tool_calls",
		`{"content":"Plan.\n</th"}`, `{"content":"ink>\n\nCall"}`, `{"content":"ing. <"}`,
		`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`,
		`{"content":"After <"}`, `{"content":"b>."}`)
	resp := dialectAccumulate(t, dialectRun(dialectInner(t, body), cfg))
	want := []translate.Part{
		{Type: translate.PartThinking, Text: "Plan."},
		{Type: translate.PartText, Text: "Calling. <"},
		{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "call_1", Name: "get_time", Arguments: "{}"}},
		{Type: translate.PartText, Text: "After <b>."},
	}
	if !reflect.DeepEqual(resp.Parts, want) || resp.StopReason != translate.StopToolUse {
		t.Errorf("got %s %s, want %s", resp.StopReason, dialectDumpParts(resp.Parts), dialectDumpParts(want))
	}
	in := dialectAccumulate(t, dialectInner(t, body))
	if got := dialect.Response(in, cfg); !reflect.DeepEqual(got.Parts, want) {
		t.Errorf("response: %s, want %s", dialectDumpParts(got.Parts), dialectDumpParts(want))
	}
}

// TestDialectCutStream checks that a stream cut anywhere still ends with an
// error (or the stop the server had already sent), every block closed but
// the one the error interrupts.
func TestDialectCutStream(t *testing.T) {
	for i := range dialectCases {
		c := &dialectCases[i]
		body := c.body(t)
		events := bytes.SplitAfter(body, []byte("\n\n"))
		for n := 1; n < len(events)-1; n++ {
			cut := bytes.Join(events[:n], nil)
			evs := dialectRun(dialectInner(t, cut), c.config())
			last := evs[len(evs)-1]
			finished := bytes.Contains(cut, []byte(`"finish_reason":"`))
			if last.Type != translate.EventError && !(finished && last.Type == translate.EventMessageStop) {
				t.Fatalf("%s cut after %d events ends with %s", c.file, n, last.Type)
			}
		}
	}
}

// TestDialectFastPath checks that a dialect that can change nothing costs
// nothing: the inner decoder is returned as is.
func TestDialectFastPath(t *testing.T) {
	native := &translate.Dialect{ToolCalls: translate.ToolCallsNative, Reasoning: translate.ReasoningFormatFields}
	fields := &translate.Dialect{Reasoning: translate.ReasoningFormatFields}
	withTools := &translate.Request{Tools: dialectTools}
	history := &translate.Request{Messages: []translate.Message{{Role: translate.RoleAssistant, Parts: []translate.Part{
		{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_01:abc.def", Name: "get_time", Arguments: "{}"}}}}}}
	longTool := &translate.Request{Tools: []translate.Tool{{Name: strings.Repeat("t", 100)}}}
	for _, tc := range []struct {
		name string
		cfg  dialect.Config
		fast bool
	}{
		{"native with tools", dialect.Config{Dialect: native, Request: withTools}, true},
		{"auto without tools", dialect.Config{Dialect: fields}, true},
		{"auto without tools, empty request", dialect.Config{Dialect: fields, Request: &translate.Request{}}, true},
		{"defaults", dialect.Config{}, false}, // <think> and harmony are looked for
		{"auto with tools", dialect.Config{Dialect: fields, Request: withTools}, false},
		{"hermes", dialect.Config{Dialect: &translate.Dialect{ToolCalls: translate.ToolCallsHermes, Reasoning: translate.ReasoningFormatFields}}, false},
		{"think", dialect.Config{Dialect: &translate.Dialect{ToolCalls: translate.ToolCallsNative, Reasoning: translate.ReasoningFormatThink}}, false},
		{"id to restore", dialect.Config{Dialect: native, Request: history}, false},
		{"name to restore", dialect.Config{Dialect: native, Request: longTool}, false},
	} {
		inner := dialectChatCodec().NewStreamDecoder()
		if got := dialect.NewDecoder(inner, tc.cfg) == inner; got != tc.fast {
			t.Errorf("%s: inner decoder returned: %v, want %v", tc.name, got, tc.fast)
		}
		resp := &translate.Response{Parts: []translate.Part{{Type: translate.PartText, Text: "hi"}}}
		if got := dialect.Response(resp, tc.cfg) == resp; got != tc.fast {
			t.Errorf("%s: response returned as is: %v, want %v", tc.name, got, tc.fast)
		}
	}
	if dialect.Response(nil, dialect.Config{}) != nil {
		t.Error("Response(nil) is not nil")
	}
}

// dialectLongStream is a long Qwen3.5 answer as llama-server streams it
// with its parsers off: reasoning closed by </think>, text, then three
// Qwen3-Coder calls, one token (a few bytes) per chunk.
func dialectLongStream() []byte {
	var content strings.Builder
	for content.Len() < 24<<10 {
		content.WriteString("The user wants the forecast; I compare 3 < 4 and check the <units> first. ")
	}
	content.WriteString("\n</think>\n\nLet me fetch three forecasts.\n\n")
	for _, city := range []string{"Paris", "Oslo", "Lima"} {
		content.WriteString("<tool_call>\n<function=get_forecast>\n<parameter=city>\n" + city + "\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=fields>\n[\"temp\", \"wind\"]\n</parameter>\n</function>\n</tool_call>\n")
	}
	s := content.String()
	var deltas []string
	for i := 0; i < len(s); i += 4 {
		deltas = append(deltas, `{"content":`+dialectJSONString(s[i:min(i+4, len(s))])+`}`)
	}
	return dialectChatChunks("stop", deltas...)
}

// BenchmarkDialectDecoder compares the dialect decoder with the plain
// OpenAI Chat decoder it wraps, on a long think + Qwen3-Coder stream fed in
// 512-byte writes.
func BenchmarkDialectDecoder(b *testing.B) {
	body := dialectLongStream()
	cfg := dialect.Config{
		Dialect: &translate.Dialect{ToolCalls: translate.ToolCallsQwen3Coder, Reasoning: translate.ReasoningFormatThink},
		Request: &translate.Request{Tools: dialectTools},
	}
	for _, bc := range []struct {
		name string
		dec  func() translate.StreamDecoder
	}{
		{"plain", func() translate.StreamDecoder { return dialectChatCodec().NewStreamDecoder() }},
		{"dialect", func() translate.StreamDecoder {
			return dialect.NewDecoder(dialectChatCodec().NewStreamDecoder(), cfg)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var evs []translate.Event
			for b.Loop() {
				dec := bc.dec()
				var p stream.SSEParser
				n := 0
				fn := func(name string, data []byte) {
					evs = dec.Decode(evs[:0], name, data)
					n += len(evs)
				}
				for off := 0; off < len(body); off += 512 {
					if err := p.Feed(body[off:min(off+512, len(body))], fn); err != nil {
						b.Fatal(err)
					}
				}
				evs = dec.End(evs[:0])
				if n == 0 {
					b.Fatal("no events")
				}
			}
		})
	}
}

package translate

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// anthFixtureEvents decodes an Anthropic SSE fixture into IR events.
func anthFixtureEvents(t testing.TB, name string) []Event {
	t.Helper()
	anth, _ := Lookup(ProtocolAnthropic)
	dec := anth.NewStreamDecoder()
	var evs []Event
	body := mustRead(t, filepath.Join("..", "testdata", "anthropic", name))
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
	return dec.End(evs)
}

// A thinking+tool_call answer streamed from an Anthropic backend to a
// Gemini client comes back, on the next turn, as the client saw it: the
// reasoning in several thought parts, the signature on the last. The
// Anthropic backend must get it as one signed block, and thinking stays on.
func TestGeminiThoughtPartsRoundTripToAnthropic(t *testing.T) {
	evs := anthFixtureEvents(t, "stream_thinking_tool_use.sse")
	var f geminiFrames
	enc := geminiCodec{}.NewStreamEncoder(&Request{Model: "gemini-client"})
	for i := range evs {
		enc.Encode(&f, &evs[i])
	}
	// The client's view of the model turn: every part of every chunk, in
	// order, in one content (Gemini CLI) or one content per chunk (the
	// genai SDKs' chats).
	var parts, sdkParts []json.RawMessage
	var perChunk []string
	thoughts := 0
	for _, d := range f.data {
		content := gjson.GetBytes(d, "candidates.0.content")
		if len(content.Get("parts").Array()) > 0 {
			perChunk = append(perChunk, content.Raw)
		}
		content.Get("parts").ForEach(func(_, p gjson.Result) bool {
			parts = append(parts, json.RawMessage(p.Raw))
			sdkParts = append(sdkParts, omitEmptyText(t, p.Raw))
			if p.Get("thought").Bool() {
				thoughts++
			}
			return true
		})
	}
	if thoughts < 2 {
		t.Fatalf("the stream sent %d thought parts; the test needs the reasoning split", thoughts)
	}
	model, _ := json.Marshal(map[string]any{"role": "model", "parts": parts})
	// The genai SDKs keep a part as their Part struct, whose text is
	// omitempty: the signed empty part comes back without text.
	sdkModel, _ := json.Marshal(map[string]any{"role": "model", "parts": sdkParts})
	for _, view := range []string{string(model), strings.Join(perChunk, ","), string(sdkModel)} {
		geminiEchoToAnthropic(t, view)
	}
}

// omitEmptyText is a part as a client that omits empty fields re-encodes
// it: an empty text left out.
func omitEmptyText(t *testing.T, part string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(part), &m); err != nil {
		t.Fatal(err)
	}
	if string(m["text"]) == `""` {
		delete(m, "text")
	}
	out, _ := json.Marshal(m)
	return out
}

// geminiEchoToAnthropic sends the model turn a Gemini client kept, answered,
// to an Anthropic backend, and checks the turn's reasoning is one signed
// thinking block, with thinking on.
func geminiEchoToAnthropic(t *testing.T, model string) {
	t.Helper()
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},` + model +
		`,{"role":"user","parts":[{"functionResponse":{"id":"toolu_01ThinkTool","name":"get_weather","response":{"output":"18C"}}}]}],` +
		`"generationConfig":{"thinkingConfig":{"thinkingBudget":2048,"includeThoughts":true}}}`)
	req, err := geminiCodec{}.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	req.Model = "claude-sonnet-4-5"
	anth, _ := Lookup(ProtocolAnthropic)
	out, err := anth.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "thinking.type").Str; got != "enabled" {
		t.Errorf("thinking %q, want enabled (dropped: %q)", got, req.Dropped)
	}
	content := gjson.GetBytes(out, "messages.1.content").Array()
	var blocks []gjson.Result
	for _, c := range content {
		if c.Get("type").Str == "thinking" {
			blocks = append(blocks, c)
		}
	}
	if len(blocks) != 1 || content[0].Get("type").Str != "thinking" {
		t.Fatalf("want one thinking block leading the turn: %s", gjson.GetBytes(out, "messages.1"))
	}
	const wantText = "The user wants the weather in Paris. I will call get_weather."
	if blocks[0].Get("thinking").Str != wantText || !strings.HasPrefix(blocks[0].Get("signature").Str, "EuYBCkQYAiJA") {
		t.Errorf("thinking block %s", blocks[0].Raw)
	}
}

// Consecutive thought parts of a model turn join until a signed one ends the
// block; a signed part starts nothing, so signed blocks stay apart.
func TestGeminiDecodeJoinsThoughtParts(t *testing.T) {
	tests := []struct {
		name, parts string
		want        []Part
	}{
		{"signature on an empty last part",
			`{"text":"a","thought":true},{"text":"b","thought":true},{"text":"","thought":true,"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "ab", Signature: "AAAA"}}},
		// The genai SDKs echo louter's empty signed part without its
		// text (omitempty), with or without thought.
		{"signature on a last part without text",
			`{"text":"a","thought":true},{"text":"b","thought":true},{"thought":true,"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "ab", Signature: "AAAA"}}},
		{"a signature alone",
			`{"text":"a","thought":true},{"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "a", Signature: "AAAA"}}},
		{"a signature beside a null text",
			`{"text":"a","thought":true},{"text":null,"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "a", Signature: "AAAA"}}},
		{"signature on the last text",
			`{"text":"a","thought":true},{"text":"b","thought":true,"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "ab", Signature: "AAAA"}}},
		{"two signed blocks stay two",
			`{"text":"a","thought":true,"thoughtSignature":"AAAA"},{"text":"b","thought":true},{"text":"","thoughtSignature":"BBBB"}`,
			[]Part{{Type: PartThinking, Text: "a", Signature: "AAAA"}, {Type: PartThinking, Text: "b", Signature: "BBBB"}}},
		{"unsigned thoughts join unsigned",
			`{"text":"a","thought":true},{"text":"b","thought":true}`,
			[]Part{{Type: PartThinking, Text: "ab"}}},
		{"a text between splits them",
			`{"text":"a","thought":true},{"text":"said"},{"text":"b","thought":true,"thoughtSignature":"AAAA"}`,
			[]Part{{Type: PartThinking, Text: "a"}, {Type: PartText, Text: "said"}, {Type: PartThinking, Text: "b", Signature: "AAAA"}}},
		{"the placeholder signature signs nothing",
			`{"text":"a","thought":true},{"text":"b","thought":true,"thoughtSignature":"skip_thought_signature_validator"}`,
			[]Part{{Type: PartThinking, Text: "ab"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[` + tt.parts + `]}]}`
			checkJoined(t, body, tt.want)
		})
		// The genai SDKs' chats keep a streamed answer as one model
		// content per chunk: one content per part.
		t.Run(tt.name+", a content per part", func(t *testing.T) {
			var contents []string
			for _, p := range gjson.Parse("[" + tt.parts + "]").Array() {
				contents = append(contents, `{"role":"model","parts":[`+p.Raw+`]}`)
			}
			body := `{"contents":[{"role":"user","parts":[{"text":"q"}]},` + strings.Join(contents, ",") + `]}`
			req, err := geminiCodec{}.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			var got []Part
			for _, m := range req.Messages[1:] {
				got = append(got, m.Parts...)
			}
			checkParts(t, got, tt.want)
		})
	}
}

func checkJoined(t *testing.T, body string, want []Part) {
	t.Helper()
	req, err := geminiCodec{}.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, req.Messages[1].Parts, want)
}

func checkParts(t *testing.T, got, want []Part) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i].Type != want[i].Type || got[i].Text != want[i].Text || got[i].Signature != want[i].Signature {
			t.Errorf("part %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

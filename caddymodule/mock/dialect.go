package mock

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// The dialect setting makes OpenAI Chat answers look like those of a
// self-hosted server (llama-server, vLLM, Ollama) whose own tool-call or
// reasoning parser is off, so louter's dialect parsing can be tested
// against the markup the models' chat templates produce (REFERENCE §2.5,
// §6). The scenarios are not touched: a dialect only rewrites their reply.

// DialectHeader chooses the dialect of one request, with the words of the
// dialect setting; it wins over the configured one.
const DialectHeader = "X-Mock-Dialect"

// toolStyle is how a dialect answer carries tool calls.
type toolStyle uint8

const (
	toolsNative         toolStyle = iota // tool_calls, as OpenAI does
	toolsHermes                          // <tool_call>{"name": …, "arguments": …}</tool_call>
	toolsQwen3Coder                      // <tool_call><function=NAME><parameter=P>…
	toolsQwen3CoderBare                  // <function=NAME><parameter=P>… without <tool_call>
)

// reasoningStyle is how a dialect answer carries reasoning.
type reasoningStyle uint8

const (
	reasoningContentField reasoningStyle = iota // reasoning_content (llama.cpp, DeepSeek)
	reasoningField                              // reasoning (vLLM, Ollama)
	reasoningThink                              // <think>…</think> opens the content
	reasoningThinkOpen                          // …</think> opens the content (<think> was in the prompt)
)

var toolStyles = map[string]toolStyle{
	"native":           toolsNative,
	"hermes":           toolsHermes,
	"qwen3_coder":      toolsQwen3Coder,
	"qwen3_coder_bare": toolsQwen3CoderBare,
}

var reasoningStyles = map[string]reasoningStyle{
	"reasoning_content": reasoningContentField,
	"reasoning":         reasoningField,
	"think":             reasoningThink,
	"think_open":        reasoningThinkOpen,
}

// harmonyWord is the dialect of gpt-oss, which sets both styles at once.
const harmonyWord = "harmony"

// dialectWords lists the words a dialect is written with, for errors.
const dialectWords = "a tool-call style (native, hermes, qwen3_coder, qwen3_coder_bare) " +
	"and/or a reasoning style (reasoning_content, reasoning, think, think_open), or harmony alone"

// dialect is how the mock writes OpenAI Chat answers. The zero value is
// OpenAI's own: native tool calls, reasoning in reasoning_content.
type dialect struct {
	tools     toolStyle
	reasoning reasoningStyle
	// harmony writes everything as gpt-oss harmony messages in the content.
	harmony bool
}

// parseDialect reads a dialect from its words: a tool-call style and a
// reasoning style, either of which may be left out, or "harmony" alone.
func parseDialect(s string) (dialect, error) {
	var d dialect
	words := strings.Fields(s)
	if len(words) == 1 && words[0] == harmonyWord {
		return dialect{harmony: true}, nil
	}
	if len(words) > 2 {
		return d, fmt.Errorf("%d words in %q, want %s", len(words), s, dialectWords)
	}
	var seenTools, seenReasoning bool
	for _, w := range words {
		if w == harmonyWord {
			return d, fmt.Errorf("%q: harmony sets both styles and takes no other word", s)
		}
		if t, ok := toolStyles[w]; ok {
			if seenTools {
				return d, fmt.Errorf("%q names two tool-call styles", s)
			}
			d.tools, seenTools = t, true
			continue
		}
		if r, ok := reasoningStyles[w]; ok {
			if seenReasoning {
				return d, fmt.Errorf("%q names two reasoning styles", s)
			}
			d.reasoning, seenReasoning = r, true
			continue
		}
		return d, fmt.Errorf("unknown dialect word %q, want %s", w, dialectWords)
	}
	return d, nil
}

// callsInText reports whether tool calls are written into the content.
func (d dialect) callsInText() bool { return d.harmony || d.tools != toolsNative }

// reasoningInText reports whether reasoning is written into the content.
func (d dialect) reasoningInText() bool {
	return d.harmony || d.reasoning == reasoningThink || d.reasoning == reasoningThinkOpen
}

// renamesReasoning reports whether the reasoning field is "reasoning"
// rather than the codec's "reasoning_content".
func (d dialect) renamesReasoning() bool { return !d.harmony && d.reasoning == reasoningField }

// render rewrites a scenario's reply as a server whose parser is off sends
// it: reasoning and tool calls become markup in one text block, streamed in
// pieces of 1 to 7 bytes, and calls in text end with "stop", since such a
// server does not know they are calls. Errors and fixtures are left alone,
// and so is a reply with nothing to write as markup.
func (d dialect) render(r *reply) *reply {
	if r.err != nil || r.fixture != "" || r.raw != nil {
		return r
	}
	var (
		reasoning, text strings.Builder
		thinking, calls []block
	)
	for i := range r.blocks {
		b := &r.blocks[i]
		switch b.kind {
		case translate.PartThinking:
			reasoning.WriteString(b.text())
			thinking = append(thinking, *b)
		case translate.PartToolCall:
			calls = append(calls, *b)
		default:
			text.WriteString(b.text())
		}
	}
	callsInText := len(calls) > 0 && d.callsInText()
	if !callsInText && !d.reasoningInText() {
		return r
	}

	var content []byte
	if d.harmony {
		content = appendHarmony(nil, reasoning.String(), text.String(), calls)
	} else {
		switch d.reasoning {
		case reasoningThink:
			content = append(content, "<think>\n"...)
			fallthrough
		case reasoningThinkOpen:
			content = append(content, reasoning.String()...)
			content = append(content, "\n</think>\n\n"...)
		}
		content = append(content, text.String()...)
		if callsInText {
			for i := range calls {
				switch {
				case i > 0:
					content = append(content, '\n')
				case text.Len() > 0:
					content = append(content, "\n\n"...)
				}
				content = d.appendCall(content, calls[i].name, calls[i].text())
			}
		}
	}

	out := &reply{stop: r.stop, fault: r.fault, faultEvent: r.faultEvent, eventDelay: r.eventDelay}
	if !d.reasoningInText() {
		out.blocks = append(out.blocks, thinking...)
	}
	out.blocks = append(out.blocks, block{kind: translate.PartText, deltas: markupPieces(string(content))})
	if callsInText {
		out.stop = translate.StopEndTurn
	} else {
		out.blocks = append(out.blocks, calls...)
	}
	return out
}

// appendCall appends one tool call in the dialect's text form, as the
// model's chat template writes it (REFERENCE §6.1, §6.2).
func (d dialect) appendCall(dst []byte, name, args string) []byte {
	if d.tools == toolsHermes {
		dst = append(dst, "<tool_call>\n{\"name\": "...)
		dst = appendJSONString(dst, name)
		dst = append(dst, ", \"arguments\": "...)
		dst = append(dst, args...)
		return append(dst, "}\n</tool_call>"...)
	}
	bare := d.tools == toolsQwen3CoderBare
	if !bare {
		dst = append(dst, "<tool_call>\n"...)
	}
	dst = append(dst, "<function="...)
	dst = append(dst, name...)
	dst = append(dst, ">\n"...)
	// Strings go raw, everything else as JSON, as the template's tojson.
	gjson.Parse(args).ForEach(func(key, value gjson.Result) bool {
		dst = append(dst, "<parameter="...)
		dst = append(dst, key.String()...)
		dst = append(dst, ">\n"...)
		if value.Type == gjson.String {
			dst = append(dst, value.Str...)
		} else {
			dst = append(dst, value.Raw...)
		}
		dst = append(dst, "\n</parameter>\n"...)
		return true
	})
	dst = append(dst, "</function>"...)
	if !bare {
		dst = append(dst, "\n</tool_call>"...)
	}
	return dst
}

// appendHarmony appends an answer as gpt-oss harmony messages
// (REFERENCE §6.4): the analysis channel for reasoning, a commentary
// message to=functions.NAME per call, the final channel for text. Text
// that comes with calls is a commentary preamble, since a final message
// would end the turn. The first message has no <|start|>: the prompt
// wrote it.
func appendHarmony(dst []byte, reasoning, text string, calls []block) []byte {
	first := true
	message := func(header string) {
		if !first {
			dst = append(dst, "<|start|>assistant"...)
		}
		first = false
		dst = append(dst, header...)
		dst = append(dst, "<|message|>"...)
	}
	if reasoning != "" {
		message("<|channel|>analysis")
		dst = append(dst, reasoning...)
		dst = append(dst, "<|end|>"...)
	}
	if len(calls) == 0 {
		message("<|channel|>final")
		dst = append(dst, text...)
		return append(dst, "<|return|>"...)
	}
	if text != "" {
		message("<|channel|>commentary")
		dst = append(dst, text...)
		dst = append(dst, "<|end|>"...)
	}
	for i := range calls {
		message("<|channel|>commentary to=functions." + calls[i].name + " <|constrain|>json")
		dst = append(dst, calls[i].text()...)
		dst = append(dst, "<|call|>"...)
	}
	return dst
}

// maxMarkupPiece is the largest piece markup is streamed in.
const maxMarkupPiece = 7

// markupPieces cuts content into pieces of 1 to 7 bytes, as a server's
// tokens arrive, so every tag is split somewhere for some content. The
// sizes are pseudo-random but seeded by the content's length, so a run
// is reproducible. Cuts fall on UTF-8 character boundaries, since each
// piece is sent as a JSON string.
func markupPieces(s string) []string {
	state := uint32(len(s))*2654435761 | 1 // never zero, as xorshift needs
	var out []string
	for len(s) > 0 {
		state ^= state << 13
		state ^= state >> 17
		state ^= state << 5
		n := min(1+int(state%maxMarkupPiece), len(s))
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // inside the first character: take it whole
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// reasoningContentKey and reasoningKey are the reasoning fields of a chat
// completion message or delta, as written by the codec and by vLLM.
var (
	reasoningContentKey = []byte(`"reasoning_content":`)
	reasoningKey        = []byte(`"reasoning":`)
)

// renameReasoning renames the codec's reasoning_content field to
// reasoning. Matching the quoted key with its colon is exact: in valid
// JSON an unescaped quote never sits inside a string, so the pattern only
// matches a key.
func renameReasoning(body []byte) []byte {
	if !bytes.Contains(body, reasoningContentKey) {
		return body
	}
	return bytes.ReplaceAll(body, reasoningContentKey, reasoningKey)
}

// reasoningRenamer is a FrameWriter that renames the reasoning field of
// every frame on its way to w.
type reasoningRenamer struct{ w translate.FrameWriter }

// WriteFrame implements translate.FrameWriter.
func (r reasoningRenamer) WriteFrame(name string, data []byte) {
	r.w.WriteFrame(name, renameReasoning(data))
}

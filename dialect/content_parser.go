package dialect

import (
	"fmt"
	"strings"

	"github.com/louter/louter/translate"
)

// ContentConfig configures a ContentParser.
type ContentConfig struct {
	ToolCalls translate.ToolCallFormat  // "" or auto, native, hermes, qwen3_coder
	Reasoning translate.ReasoningFormat // "" or auto, fields, think, harmony
	// Tools are the request's declared tools, with the names the backend sees.
	// In auto mode text tool calls are parsed only when Tools is non-empty, and a
	// bare <function=NAME> only when NAME is one of them. Their schemas type
	// qwen3_coder parameter values.
	Tools []translate.Tool
	// MaxCallBytes bounds one buffered tool call (0: 4 MiB); a longer one is
	// released as text with a warning.
	MaxCallBytes int
	Warn         func(msg string) // nil: discard
}

// SegmentKind is what a Segment holds.
type SegmentKind uint8

// Segment kinds.
const (
	SegmentText SegmentKind = iota + 1
	SegmentReasoning
	SegmentToolCall
)

// Segment is one piece of parsed content.
type Segment struct {
	Kind      SegmentKind
	Text      string // SegmentText, SegmentReasoning
	Name      string // SegmentToolCall: the name as the model wrote it
	Arguments string // SegmentToolCall: a JSON object, compact
}

const (
	defaultMaxCallBytes = 4 << 20
	// maxLeadSpace bounds the whitespace held back while waiting to see how
	// the content opens, or whether another call follows a call. Models
	// emit a few newlines there, never pages of them.
	maxLeadSpace = 256
)

// contentState is where a ContentParser is in the content.
type contentState uint8

const (
	stPlain          contentState = iota // nothing to parse: every byte is text
	stStart                              // leading whitespace: does a <think> or harmony open the content?
	stText                               // text, looking for tool calls and stray </think>
	stReasoning                          // inside <think>, looking for </think>
	stAfterThink                         // whitespace after </think> is dropped
	stAfterCall                          // whitespace after a call is held: dropped if another call follows
	stCall                               // buffering a text tool call (content_call.go)
	stHarmonyOutside                     // harmony, between messages (harmony.go)
	stHarmonyHeader                      // harmony, a message header up to <|message|>
	stHarmonyContent                     // harmony, streaming a message's content
	stHarmonyCall                        // harmony, buffering a function call's arguments
)

// ContentParser splits the content text of an OpenAI-compatible response,
// fed in arbitrary pieces, into text, reasoning and tool calls that the
// server left as markup: hermes and Qwen3-Coder tool calls, <think> blocks
// and gpt-oss harmony (REFERENCE §6). It is a value with no goroutines: feed
// it with Feed and finish it with Close.
//
// Text and reasoning flow out as soon as they arrive; only a suffix that
// could still begin a marker is held back. A tool call is buffered from its
// opening marker and emitted whole once it is closed. Every byte is scanned
// a bounded number of times, however the content is split.
//
// A configured tool call format selects which markers open a call; the
// block is then parsed by its shape, so a hermes backend that answers with
// a Qwen3-Coder block still yields a call. Harmony function calls are parsed
// whatever the tool call format, as they are part of the harmony format.
type ContentParser struct {
	warn    func(string)
	maxCall int
	schemas toolSchemas
	bareAny bool // a bare <function=NAME> is a call whatever NAME is
	think   bool // reasoning format think: the content starts as reasoning

	startMarkers []string // how the content may open
	textMarkers  []string // markers of stText and stAfterCall
	thinkMarkers []string // markers of stReasoning

	state contentState
	hold  string // held-back suffix that may begin a marker
	// reasonLead is set until reasoning has produced a byte: the whitespace
	// a template puts after <think> is dropped, so an empty think block
	// yields no reasoning at all.
	reasonLead bool
	// thinkInText is set once the text held a literal <think>: a </think>
	// after it is text too, not a stray end of reasoning.
	thinkInText bool

	call    callBuffer
	harmony harmonyMsg
}

// NewContentParser returns a parser for one content stream.
func NewContentParser(cfg ContentConfig) *ContentParser {
	p := &ContentParser{warn: cfg.Warn, maxCall: cfg.MaxCallBytes}
	if p.maxCall <= 0 {
		p.maxCall = defaultMaxCallBytes
	}
	tools := false
	switch cfg.ToolCalls {
	case "", translate.ToolCallsAuto:
		tools = len(cfg.Tools) > 0
	case translate.ToolCallsHermes, translate.ToolCallsQwen3Coder:
		tools, p.bareAny = true, true
	}
	if tools {
		p.textMarkers = []string{tagToolCall, tagFunction}
		p.thinkMarkers = []string{tagThinkEnd, tagToolCall}
		p.schemas = newToolSchemas(cfg.Tools)
	} else {
		p.thinkMarkers = []string{tagThinkEnd}
	}
	switch cfg.Reasoning {
	case "", translate.ReasoningFormatAuto:
		p.startMarkers = []string{tagThink, harmonyChannel, harmonyStart}
		// <think> is looked for in the text only to tell a literal pair of
		// tags (prose, code) from a stray </think>.
		p.textMarkers = append(p.textMarkers, tagThink, tagThinkEnd)
		p.state = stStart
	case translate.ReasoningFormatThink:
		p.startMarkers = []string{tagThink}
		p.textMarkers = append(p.textMarkers, tagThinkEnd)
		p.think = true
		p.state = stStart
	case translate.ReasoningFormatHarmony:
		p.state = stHarmonyOutside
	default:
		p.state = stText
		if len(p.textMarkers) == 0 {
			p.state = stPlain
		}
	}
	return p
}

// Feed parses the next piece of content and appends the segments it completes.
func (p *ContentParser) Feed(dst []Segment, s string) []Segment {
	if p.state == stPlain {
		return appendSegment(dst, SegmentText, s)
	}
	if p.hold != "" {
		s = p.hold + s
		p.hold = ""
	}
	for s != "" {
		dst, s = p.step(dst, s)
	}
	return dst
}

// Passes reports whether Feed would give s back whole as text and hold
// nothing: the parser reads plain text, or text that holds nothing back
// and s holds no '<', with which every marker of the text starts. A
// caller may then take s as text itself, without the segments.
func (p *ContentParser) Passes(s string) bool {
	return p.state == stPlain || p.state == stText && p.hold == "" && strings.IndexByte(s, '<') < 0
}

// step consumes a prefix of s in the current state and returns what is
// left for the next state. A state that needs more input keeps what it
// cannot decide yet (in hold or in the call buffer) and returns "".
func (p *ContentParser) step(dst []Segment, s string) ([]Segment, string) {
	switch p.state {
	case stStart:
		return p.start(dst, s)
	case stText:
		return p.text(dst, s)
	case stReasoning:
		return p.reasoning(dst, s)
	case stAfterThink:
		i := skipSpace(s)
		if i < len(s) {
			p.state = stText
		}
		return dst, s[i:]
	case stAfterCall:
		return p.afterCall(dst, s)
	case stCall:
		return p.callStep(dst, s)
	case stHarmonyOutside:
		return p.harmonyOutside(dst, s)
	case stHarmonyHeader:
		return p.harmonyHeader(dst, s)
	case stHarmonyContent:
		return p.harmonyContent(dst, s)
	case stHarmonyCall:
		return p.harmonyCallStep(dst, s)
	}
	return appendSegment(dst, SegmentText, s), ""
}

// Close ends the content: releases held-back text, and turns an unfinished call into
// text (or a call, see below), with a warning.
//
// An unfinished call whose body is nonetheless complete (a hermes JSON object
// with a name, a Qwen3-Coder block with its </function>, harmony arguments
// that are a JSON object) is emitted as a call; any other is released as the
// text it was. After Close the parser passes text through unparsed.
func (p *ContentParser) Close(dst []Segment) []Segment {
	for {
		held := p.hold
		p.hold = ""
		rest := ""
		switch p.state {
		case stStart:
			if p.think {
				dst = appendSegment(dst, SegmentReasoning, held[skipSpace(held):])
			} else {
				dst = appendSegment(dst, SegmentText, held)
			}
		case stText, stHarmonyOutside:
			dst = appendSegment(dst, SegmentText, held)
		case stReasoning:
			if skipSpace(held) < len(held) { // whitespace alone ends the reasoning
				dst = appendSegment(dst, SegmentReasoning, held)
			}
		case stAfterCall:
			// Whitespace after the last call is dropped; the start of a
			// marker that never completed is text.
			if skipSpace(held) < len(held) {
				dst = appendSegment(dst, SegmentText, held)
			}
		case stCall:
			dst, rest = p.closeCall(dst)
		case stHarmonyHeader:
			p.closeHarmonyHeader()
		case stHarmonyContent:
			dst = appendSegment(dst, p.harmony.kind, held)
		case stHarmonyCall:
			dst = p.closeHarmonyCall(dst)
		}
		if rest == "" {
			break
		}
		// The text after a call recovered at the end is parsed like any
		// other, and may itself end in something unfinished.
		for rest != "" {
			dst, rest = p.step(dst, rest)
		}
	}
	p.state = stPlain
	p.call.reset()
	return dst
}

// start holds leading whitespace until the first other byte shows whether
// a <think> block or harmony markup opens the content.
func (p *ContentParser) start(dst []Segment, s string) ([]Segment, string) {
	i := skipSpace(s)
	if i > maxLeadSpace {
		p.startPlain()
		return dst, s
	}
	if i == len(s) {
		p.hold = s
		return dst, ""
	}
	k, partial := markerAt(s[i:], p.startMarkers)
	switch {
	case partial:
		p.hold = s
		return dst, ""
	case k < 0:
		if p.think {
			p.startPlain()
			return dst, s
		}
		return p.textAfterSpace(dst, s, i)
	case p.startMarkers[k] == tagThink:
		p.state = stReasoning
		p.reasonLead = true
		return dst, s[i+len(tagThink):]
	}
	p.state = stHarmonyOutside
	return dst, s[i:]
}

// startPlain leaves stStart for content that opens with neither <think>
// nor harmony: text, or reasoning with format think (whose <think> was in
// the prompt).
func (p *ContentParser) startPlain() {
	if p.think {
		p.state = stReasoning
		p.reasonLead = true
		return
	}
	p.state = stText
}

func (p *ContentParser) text(dst []Segment, s string) ([]Segment, string) {
	at, k := scanMarkers(s, 0, p.textMarkers)
	dst = appendSegment(dst, SegmentText, s[:at])
	if k < 0 {
		p.hold = s[at:]
		return dst, ""
	}
	m := p.textMarkers[k]
	if m == tagThink || (m == tagThinkEnd && p.thinkInText) {
		// Past the opening of the content, a think tag is the model
		// writing about one (code, prose), not reasoning markup.
		p.thinkInText = true
		dst = appendSegment(dst, SegmentText, m)
		return dst, s[at+len(m):]
	}
	if m == tagThinkEnd {
		// A client must never see reasoning markup as text; what came
		// before it was already sent as text and cannot be taken back.
		p.warnf("content: dropped a stray %s", tagThinkEnd)
		p.state = stAfterThink
		return dst, s[at+len(m):]
	}
	p.beginCall(m, stText)
	return dst, s[at:]
}

func (p *ContentParser) reasoning(dst []Segment, s string) ([]Segment, string) {
	if p.reasonLead {
		s = s[skipSpace(s):]
		if s == "" {
			return dst, ""
		}
	}
	at, k := scanMarkers(s, 0, p.thinkMarkers)
	// Whitespace that ends the reasoning is the template's ("\n</think>"),
	// as is the whitespace after <think>: a trailing run is held until
	// what follows it shows whether the reasoning goes on.
	end := at
	for (k < 0 || p.thinkMarkers[k] == tagThinkEnd) && end > 0 && isSpace(s[end-1]) {
		end--
	}
	if at-end > maxLeadSpace {
		end = at
	}
	if end > 0 {
		p.reasonLead = false
		dst = append(dst, Segment{Kind: SegmentReasoning, Text: s[:end]})
	}
	if k < 0 {
		p.hold = s[end:]
		return dst, ""
	}
	if p.thinkMarkers[k] == tagThinkEnd {
		p.state = stAfterThink
		return dst, s[at+len(tagThinkEnd):]
	}
	// Qwen3.5 may open a tool call inside its thinking without closing
	// it: the call ends the reasoning (REFERENCE §6.2).
	p.beginCall(tagToolCall, stReasoning)
	return dst, s[at:]
}

// afterCall holds the whitespace that follows a call: templates separate
// parallel calls with newlines, which must not become text between them.
func (p *ContentParser) afterCall(dst []Segment, s string) ([]Segment, string) {
	i := skipSpace(s)
	if i > maxLeadSpace {
		p.state = stText
		return dst, s
	}
	if i == len(s) {
		p.hold = s
		return dst, ""
	}
	return p.textAfterSpace(dst, s, i)
}

// textAfterSpace goes on as text after the whitespace s[:i] that opens the
// content or follows a call: the whitespace is the template's and dropped
// when a marker follows it, held while one may, and text otherwise.
func (p *ContentParser) textAfterSpace(dst []Segment, s string, i int) ([]Segment, string) {
	k, partial := markerAt(s[i:], p.textMarkers)
	if partial {
		p.hold = s
		return dst, ""
	}
	p.state = stText
	if k >= 0 {
		return dst, s[i:]
	}
	return dst, s
}

func (p *ContentParser) warnf(format string, args ...any) {
	if p.warn != nil {
		p.warn(fmt.Sprintf(format, args...))
	}
}

func appendSegment(dst []Segment, kind SegmentKind, s string) []Segment {
	if s == "" {
		return dst
	}
	return append(dst, Segment{Kind: kind, Text: s})
}

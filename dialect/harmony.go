package dialect

import (
	"encoding/json"
	"strings"
)

// gpt-oss harmony markup (REFERENCE §6.4), as a server that does not parse
// it leaves it in the content:
//
//	<|channel|>analysis<|message|>Need to use function get_weather.<|end|>
//	<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>
//
// A message is a header, <|message|>, and content up to <|end|>, <|call|>
// or <|return|>. The first message has no <|start|>: the prompt ended with
// it. No token ever reaches the client.
const (
	harmonyStart     = "<|start|>"
	harmonyEnd       = "<|end|>"
	harmonyMessage   = "<|message|>"
	harmonyChannel   = "<|channel|>"
	harmonyConstrain = "<|constrain|>"
	harmonyReturn    = "<|return|>"
	harmonyCall      = "<|call|>"
)

var harmonyTokens = []string{
	harmonyStart, harmonyEnd, harmonyMessage, harmonyChannel,
	harmonyConstrain, harmonyReturn, harmonyCall,
}

// maxHarmonyHeader bounds a message header ("assistant<|channel|>commentary
// to=functions.NAME <|constrain|>json" and the like).
const maxHarmonyHeader = 512

// harmonyMsg is the message being read.
type harmonyMsg struct {
	kind SegmentKind // how its content is streamed
	name string      // the function it calls, if it is a call
}

// harmonyOutside is between messages: whitespace there is the template's,
// and text without a header (a server that stripped the markup halfway)
// is text.
func (p *ContentParser) harmonyOutside(dst []Segment, s string) ([]Segment, string) {
	s = s[skipSpace(s):]
	if s == "" {
		return dst, ""
	}
	k, partial := markerAt(s, harmonyTokens)
	if partial {
		p.hold = s
		return dst, ""
	}
	if k < 0 {
		p.state = stHarmonyContent
		p.harmony = harmonyMsg{kind: SegmentText}
		return dst, s
	}
	tok := harmonyTokens[k]
	switch tok {
	case harmonyStart:
		p.beginHarmonyHeader("")
	case harmonyChannel:
		p.beginHarmonyHeader(harmonyChannel)
	case harmonyMessage:
		p.state = stHarmonyContent
		p.harmony = harmonyMsg{kind: SegmentText}
	case harmonyConstrain:
		p.warnf("content: dropped a stray %s", tok)
	}
	// End tokens between messages end nothing more.
	return dst, s[len(tok):]
}

// beginHarmonyHeader starts buffering a header; one that opens with
// <|channel|> (the first message) keeps it, so the channel is found.
func (p *ContentParser) beginHarmonyHeader(prefix string) {
	p.state = stHarmonyHeader
	p.call.buf = append(p.call.buf[:0], prefix...)
	p.call.scan = len(prefix)
}

func (p *ContentParser) harmonyHeader(dst []Segment, s string) ([]Segment, string) {
	c := &p.call
	c.add(s)
	for {
		at, k := scanMarkersBytes(c.buf, c.scan, harmonyTokens)
		if k < 0 {
			c.scan = at
			if len(c.buf) > maxHarmonyHeader {
				return p.releaseHarmonyHeader(dst, runeCut(c.buf, maxHarmonyHeader))
			}
			return dst, ""
		}
		tok := harmonyTokens[k]
		if at+len(tok) > maxHarmonyHeader {
			return p.releaseHarmonyHeader(dst, runeCut(c.buf, maxHarmonyHeader))
		}
		switch tok {
		case harmonyChannel, harmonyConstrain:
			c.scan = at + len(tok)
			continue
		case harmonyMessage:
			p.harmony = parseHarmonyHeader(string(c.buf[:at]))
			rest := c.from(at + len(tok))
			c.reset()
			p.state = stHarmonyContent
			if p.harmony.kind == SegmentToolCall {
				p.state = stHarmonyCall
				c.scan = 0
			}
			return dst, rest
		}
		// A message cannot start or end inside a header.
		return p.releaseHarmonyHeader(dst, at)
	}
}

// releaseHarmonyHeader gives up on a malformed header: its words, without
// tokens, go out as text, and the rest is read as content.
func (p *ContentParser) releaseHarmonyHeader(dst []Segment, n int) ([]Segment, string) {
	c := &p.call
	p.warnf("content: malformed harmony header kept as text")
	dst = appendSegment(dst, SegmentText, stripHarmonyTokens(string(c.buf[:n])))
	rest := c.from(n)
	c.reset()
	p.state = stHarmonyContent
	p.harmony = harmonyMsg{kind: SegmentText}
	return dst, rest
}

func (p *ContentParser) closeHarmonyHeader() {
	if len(p.call.buf) > 0 {
		p.warnf("content: dropped a harmony header the content ended in")
	}
	p.call.reset()
}

// parseHarmonyHeader reads "role [to=R] <|channel|>channel [to=R]
// [<|constrain|>type]": the recipient may be in either section.
func parseHarmonyHeader(h string) harmonyMsg {
	var channel, recipient, section string
	for {
		i := strings.Index(h, "<|")
		sec := h
		if i >= 0 {
			sec = h[:i]
		}
		for _, f := range strings.Fields(sec) {
			if r, ok := strings.CutPrefix(f, "to="); ok {
				recipient = r
			} else if section == harmonyChannel && channel == "" {
				channel = f
			}
		}
		if i < 0 {
			break
		}
		h = h[i:]
		if k, _ := markerAt(h, harmonyTokens); k >= 0 {
			section = harmonyTokens[k]
			h = h[len(section):]
		} else {
			section = ""
			h = h[2:]
		}
	}
	if name, ok := strings.CutPrefix(recipient, "functions."); ok && name != "" {
		return harmonyMsg{kind: SegmentToolCall, name: name}
	}
	// Messages to built-in tools (browser, python) and analysis are the
	// model's own work; final and commentary preambles are for the user.
	if recipient != "" || channel == "analysis" {
		return harmonyMsg{kind: SegmentReasoning}
	}
	return harmonyMsg{kind: SegmentText}
}

// harmonyContent streams the content of a text or reasoning message.
func (p *ContentParser) harmonyContent(dst []Segment, s string) ([]Segment, string) {
	at, k := scanMarkers(s, 0, harmonyTokens)
	dst = appendSegment(dst, p.harmony.kind, s[:at])
	if k < 0 {
		p.hold = s[at:]
		return dst, ""
	}
	tok := harmonyTokens[k]
	switch tok {
	case harmonyMessage, harmonyConstrain:
		p.warnf("content: dropped a stray %s", tok)
		return dst, s[at+len(tok):]
	case harmonyStart:
		p.beginHarmonyHeader("")
	case harmonyChannel:
		p.beginHarmonyHeader(harmonyChannel)
	default:
		p.state = stHarmonyOutside
	}
	return dst, s[at+len(tok):]
}

// harmonyCallStep buffers a function call's arguments up to the token that
// ends the message.
func (p *ContentParser) harmonyCallStep(dst []Segment, s string) ([]Segment, string) {
	c := &p.call
	c.add(s)
	at, k := scanMarkersBytes(c.buf, c.scan, harmonyTokens)
	// As for text calls, the limit is checked at the deciding byte (the
	// end of the closing token), which does not depend on the split.
	if (k >= 0 && at+len(harmonyTokens[k]) > p.maxCall) || (k < 0 && len(c.buf) > p.maxCall) {
		p.warnf("content: a tool call longer than %d bytes was released as text", p.maxCall)
		n := runeCut(c.buf, p.maxCall)
		dst = appendSegment(dst, SegmentText, string(c.buf[:n]))
		rest := c.from(n)
		c.reset()
		p.state = stHarmonyContent
		p.harmony = harmonyMsg{kind: SegmentText}
		return dst, rest
	}
	if k < 0 {
		c.scan = at
		return dst, ""
	}
	args := string(c.buf[:at])
	rest := c.from(at)
	c.reset()
	// The token is left for stHarmonyOutside, which knows them all.
	p.state = stHarmonyOutside
	return p.appendHarmonyCall(dst, args, false), rest
}

func (p *ContentParser) closeHarmonyCall(dst []Segment) []Segment {
	args := string(p.call.buf)
	p.call.reset()
	if strings.TrimSpace(args) == "" {
		p.warnf("content: dropped a harmony call to %s the content ended before its arguments", p.harmony.name)
		return dst
	}
	return p.appendHarmonyCall(dst, args, true)
}

// appendHarmonyCall emits a call whose arguments are a JSON object (or
// nothing), and releases any other as text.
func (p *ContentParser) appendHarmonyCall(dst []Segment, args string, unfinished bool) []Segment {
	t := strings.TrimSpace(args)
	switch {
	case t == "":
		t = "{}"
	case t[0] == '{' && json.Valid([]byte(t)):
		t = compactJSON(t)
	default:
		p.warnf("content: harmony call to %s with arguments that are not a JSON object kept as text", p.harmony.name)
		return appendSegment(dst, SegmentText, args)
	}
	if unfinished {
		p.warnf("content: harmony call to %s not closed when the content ended; parsed anyway", p.harmony.name)
	}
	return append(dst, Segment{Kind: SegmentToolCall, Name: p.harmony.name, Arguments: t})
}

// stripHarmonyTokens removes the tokens from s, again until none is left:
// removing one may join the halves of another.
func stripHarmonyTokens(s string) string {
	for {
		t := s
		for _, tok := range harmonyTokens {
			t = strings.ReplaceAll(t, tok, "")
		}
		if t == s {
			return s
		}
		s = t
	}
}

package dialect

import (
	"strconv"
	"strings"

	"github.com/louter/louter/translate"
)

// Config is the response side of one backend's dialect, for one
// request.
type Config struct {
	Dialect *translate.Dialect // nil: the defaults (auto)
	Request *translate.Request // the client's decoded request (tools, history); nil: none
	Warn    func(msg string)   // nil: discard
}

// dialectPlan is what a Config means for one response: how to parse
// the text and how to map the backend's names and ids back to the client's.
type dialectPlan struct {
	content ContentConfig
	names   map[string]string // backend tool name -> client tool name
	ids     map[string]string // backend tool call id -> client tool call id
	// declared holds the backend names of the request's tools, to warn
	// about parsed calls of tools the client never declared.
	declared map[string]bool
	warn     func(msg string)
}

func newDialectPlan(cfg Config) *dialectPlan {
	d := cfg.Dialect // every Dialect method used here is nil-safe
	p := &dialectPlan{warn: cfg.Warn}
	p.content = ContentConfig{
		ToolCalls: d.ToolCallFormat(),
		Reasoning: d.ReasoningFormat(),
		Warn:      cfg.Warn,
	}
	if req := cfg.Request; req != nil {
		// Names and ids were rewritten for the backend as d says
		// (translate.ToolNaming gives every backend one); with no
		// dialect at all, the backend saw the client's own.
		if d != nil {
			p.names = cloneNames(d.ClientToolNames(req))
			p.ids = cloneNames(d.ClientToolIDs(req))
		}
		// The parser matches the names the model writes, which are the
		// backend's. A request with tool_choice none is parsed all the
		// same: a model may call a tool anyway, and a call the client
		// can see beats markup in the text.
		if len(req.Tools) > 0 {
			p.content.Tools = make([]translate.Tool, len(req.Tools))
			p.declared = make(map[string]bool, len(req.Tools))
			schemas := typingSchemas(req.Tools) // shared: read only
			for i, t := range req.Tools {
				// Only what the parser reads, copied: the plan lives as
				// long as the stream, the request's strings may be views
				// of the client's body, which is let go of early.
				name := t.Name
				if d != nil {
					name = d.BackendToolName(name)
				}
				name = strings.Clone(name)
				p.content.Tools[i] = translate.Tool{Name: name, Schema: schemas[i], Custom: t.Custom}
				p.declared[name] = true
			}
		}
	}
	return p
}

// cloneNames copies a name map's strings, so that it keeps no view of
// the request.
func cloneNames(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[strings.Clone(k)] = strings.Clone(v)
	}
	return c
}

// passThrough reports whether the dialect can change nothing in this
// response: no name or id to restore, no text to parse.
func (p *dialectPlan) passThrough() bool {
	if p.names != nil || p.ids != nil || p.content.Reasoning != translate.ReasoningFormatFields {
		return false
	}
	switch p.content.ToolCalls {
	case translate.ToolCallsNative:
		return true
	case translate.ToolCallsAuto:
		return len(p.content.Tools) == 0
	}
	return false
}

// parserConfig is the parser configuration for the n-th run of text (0 for
// the first). Text after a native tool call starts a fresh parser; "think"
// assumes the opening <think> was in the prompt, which holds only at the
// start of the message, so later runs look for reasoning as auto does.
func (p *dialectPlan) parserConfig(run int) ContentConfig {
	c := p.content
	if run > 0 && c.Reasoning == translate.ReasoningFormatThink {
		c.Reasoning = translate.ReasoningFormatAuto
	}
	return c
}

func (p *dialectPlan) clientName(name string) string {
	if n, ok := p.names[name]; ok {
		return n
	}
	return name
}

func (p *dialectPlan) clientID(id string) string {
	if c, ok := p.ids[id]; ok {
		return c
	}
	return id
}

// parsedCallName is the client's name for a call parsed out of the text.
// A name the client never declared is passed on as is: the client decides
// what to do with a call of an unknown tool.
func (p *dialectPlan) parsedCallName(name string) string {
	if !p.declared[name] {
		p.warnMsg("text tool call of undeclared tool " + dialectQuote(name) + " passed on as is")
	}
	return p.clientName(name)
}

func (p *dialectPlan) warnMsg(msg string) {
	if p.warn != nil {
		p.warn(msg)
	}
}

// dialectQuote quotes a name for a warning, shortened if long.
func dialectQuote(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "…"
	}
	return strconv.Quote(s)
}

// NewDecoder wraps an OpenAI Chat stream decoder for a backend with
// a dialect: the tool calls and reasoning the server left in the content
// (Hermes and Qwen3-Coder tool calls, <think> tags, gpt-oss harmony) become
// tool call and thinking blocks, and tool names and call ids the request
// encoder rewrote for the backend are restored. When the dialect can change
// nothing in this response, dec itself is returned.
//
// Text is parsed as it streams: only a suffix that may begin a marker, or a
// call still being written, is held back. Reasoning and tool calls the
// server did parse pass through as they arrive.
func NewDecoder(dec translate.StreamDecoder, cfg Config) translate.StreamDecoder {
	plan := newDialectPlan(cfg)
	if plan.passThrough() {
		return dec
	}
	return &dialectDecoder{inner: dec, plan: plan}
}

// dialectDecoder re-emits the inner decoder's well-formed event stream
// through its own Emitter, which renumbers the blocks: one text block of
// the backend may become several text, thinking and tool call blocks.
type dialectDecoder struct {
	inner translate.StreamDecoder
	plan  *dialectPlan
	em    translate.Emitter

	parser *ContentParser // nil between runs of text
	runs   int            // parsers started so far

	// innerTool is true while the inner stream's open block is a native
	// tool call, whose argument fragments pass through.
	innerTool bool

	events []translate.Event // the inner decoder's events, reused
	segs   []Segment         // the parser's segments, reused
}

// Decode implements translate.StreamDecoder.
func (d *dialectDecoder) Decode(dst []translate.Event, name string, data []byte) []translate.Event {
	if d.em.Done() {
		return dst
	}
	d.events = d.inner.Decode(d.events[:0], name, data)
	return d.relay(dst)
}

// End implements translate.StreamDecoder.
func (d *dialectDecoder) End(dst []translate.Event) []translate.Event {
	if d.em.Done() {
		return dst
	}
	d.events = d.inner.End(d.events[:0])
	dst = d.relay(dst)
	if !d.em.Done() {
		// The inner decoder always ends its stream; this is for one that
		// does not, so the client never takes a cut stream for a whole one.
		dst = d.closeParser(dst)
		dst = d.em.End(dst)
	}
	return dst
}

func (d *dialectDecoder) relay(dst []translate.Event) []translate.Event {
	for i := range d.events {
		if d.em.Done() {
			break
		}
		dst = d.event(dst, &d.events[i])
	}
	return dst
}

func (d *dialectDecoder) event(dst []translate.Event, ev *translate.Event) []translate.Event {
	em := &d.em
	switch ev.Type {
	case translate.EventMessageStart:
		return em.Start(dst, ev.ID, ev.Model, ev.Usage)
	case translate.EventBlockStart:
		switch ev.Block {
		case translate.BlockToolCall:
			// Held text comes before the call; later text is a new run.
			dst = d.closeParser(dst)
			d.innerTool = true
			return em.ToolStart(dst, d.plan.clientID(ev.ID), d.plan.clientName(ev.Name))
		case translate.BlockThinking:
			// Reasoning from the fields is a block of its own, not merged
			// into reasoning parsed out of the text. The parser keeps its
			// state: a marker may straddle the reasoning.
			return em.CloseBlock(dst)
		case translate.BlockRedactedThinking:
			return em.Redacted(dst, ev.Signature)
		}
		return dst // text: its deltas go through the parser
	case translate.EventBlockDelta:
		switch ev.Block {
		case translate.BlockText:
			if d.parser == nil {
				d.parser = NewContentParser(d.plan.parserConfig(d.runs))
				d.runs++
			}
			if d.parser.Passes(ev.Text) {
				// Most deltas of a long answer: the parser would give
				// the text back whole.
				return em.Text(dst, ev.Text)
			}
			d.segs = d.parser.Feed(d.segs[:0], ev.Text)
			return d.emitSegments(dst)
		case translate.BlockThinking:
			if ev.Signature != "" {
				return em.Signature(dst, ev.Signature)
			}
			return em.Thinking(dst, ev.Text)
		case translate.BlockToolCall:
			if d.innerTool {
				return em.ToolArgs(dst, ev.Text)
			}
		}
		return dst
	case translate.EventBlockStop:
		switch ev.Block {
		case translate.BlockToolCall:
			if d.innerTool {
				d.innerTool = false
				return em.CloseBlock(dst)
			}
		case translate.BlockThinking:
			if t, _ := em.OpenBlock(); t == translate.BlockThinking {
				return em.CloseBlock(dst)
			}
		}
		return dst
	case translate.EventUsage:
		if ev.Usage != nil {
			return em.SetUsage(dst, *ev.Usage)
		}
		return dst
	case translate.EventMessageStop:
		dst = d.closeParser(dst)
		reason, seq := ev.Stop, ev.StopSequence
		if reason == translate.StopToolUse && em.ToolCalls() == 0 {
			// The server said tool_calls, but the only call in the text
			// could not be read and was kept as text.
			d.plan.warnMsg("finish reason tool_calls without a tool call reported as end_turn")
			reason = translate.StopEndTurn
		}
		return em.Stop(dst, reason, seq, ev.Usage)
	case translate.EventError:
		dst = d.closeParser(dst)
		return em.Fail(dst, ev.Err)
	}
	return dst
}

// closeParser flushes the text the parser holds and ends the run of text.
func (d *dialectDecoder) closeParser(dst []translate.Event) []translate.Event {
	if d.parser == nil {
		return dst
	}
	d.segs = d.parser.Close(d.segs[:0])
	d.parser = nil
	return d.emitSegments(dst)
}

func (d *dialectDecoder) emitSegments(dst []translate.Event) []translate.Event {
	em := &d.em
	for i := range d.segs {
		s := &d.segs[i]
		switch s.Kind {
		case SegmentText:
			dst = em.Text(dst, s.Text)
		case SegmentReasoning:
			dst = em.Thinking(dst, s.Text)
		case SegmentToolCall:
			dst = em.ToolStart(dst, translate.NewCallID(), d.plan.parsedCallName(s.Name))
			dst = em.ToolArgs(dst, s.Arguments)
			dst = em.CloseBlock(dst)
		}
	}
	clear(d.segs) // drop the strings until the next use
	return dst
}

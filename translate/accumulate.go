package translate

import "strings"

// Accumulator folds a stream of IR events into a Response. louter uses it when
// a client asked for a complete response but the backend streamed, and tests
// use it to compare streams with their non-streaming twins.
type Accumulator struct {
	resp  Response
	texts map[int]*strings.Builder
	parts map[int]int // block index -> position in resp.Parts
	err   *Error
	done  bool
}

// Add folds one event in.
func (a *Accumulator) Add(ev *Event) {
	if a.texts == nil {
		a.texts = map[int]*strings.Builder{}
		a.parts = map[int]int{}
	}
	switch ev.Type {
	case EventMessageStart:
		a.resp.ID, a.resp.Model = ev.ID, ev.Model
		if ev.Usage != nil {
			a.resp.Usage = *ev.Usage
		}
	case EventBlockStart:
		p := Part{}
		switch ev.Block {
		case BlockText:
			p.Type = PartText
		case BlockThinking:
			p.Type = PartThinking
		case BlockRedactedThinking:
			p.Type = PartRedactedThinking
			p.Signature = ev.Signature
		case BlockToolCall:
			p.Type = PartToolCall
			p.ToolCall = &ToolCall{ID: ev.ID, Name: ev.Name}
		case BlockServerToolCall, BlockServerToolResult:
			p.Type, p.Server = serverToolPart(ev.Block), ev.Server
		}
		a.parts[ev.Index] = len(a.resp.Parts)
		a.resp.Parts = append(a.resp.Parts, p)
		a.texts[ev.Index] = &strings.Builder{}
	case EventBlockDelta:
		i, ok := a.parts[ev.Index]
		if !ok {
			return
		}
		if ev.Signature != "" {
			a.resp.Parts[i].Signature += ev.Signature
		}
		if ev.Citation != nil {
			a.resp.Parts[i].Citations = append(a.resp.Parts[i].Citations, *ev.Citation)
		}
		if ev.Text != "" {
			a.texts[ev.Index].WriteString(ev.Text)
		}
	case EventBlockStop:
		a.finishBlock(ev.Index)
	case EventUsage:
		if ev.Usage != nil {
			a.resp.Usage = *ev.Usage
		}
	case EventMessageStop:
		a.resp.StopReason, a.resp.StopSequence = ev.Stop, ev.StopSequence
		if ev.Usage != nil {
			a.resp.Usage = *ev.Usage
		}
		a.done = true
	case EventError:
		a.err = ev.Err
		a.done = true
	}
}

func (a *Accumulator) finishBlock(index int) {
	i, ok := a.parts[index]
	if !ok {
		return
	}
	text := a.texts[index].String()
	p := &a.resp.Parts[i]
	switch p.Type {
	case PartToolCall:
		p.ToolCall.Arguments = text
	case PartText, PartThinking:
		p.Text = text
	}
	delete(a.parts, index)
}

// Result returns the response, or the error the stream ended with. A stream
// that never ended is an error.
func (a *Accumulator) Result() (*Response, *Error) {
	for idx := range a.parts {
		a.finishBlock(idx)
	}
	if a.err != nil {
		return nil, a.err
	}
	if !a.done {
		return nil, &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream ended before the response was complete"}
	}
	r := a.resp
	return &r, nil
}

// ResponseEvents appends the event stream equivalent to a complete response:
// louter uses it when a client asked for a stream and the backend answered
// with one JSON body, and the mock backend uses it to stream scripted replies.
func ResponseEvents(dst []Event, r *Response) []Event {
	var e Emitter
	u := r.Usage
	dst = e.Start(dst, r.ID, r.Model, &Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens})
	for i := range r.Parts {
		p := &r.Parts[i]
		switch p.Type {
		case PartText:
			dst = e.Text(dst, p.Text)
			for j := range p.Citations {
				dst = e.Cite(dst, &p.Citations[j])
			}
			dst = e.CloseBlock(dst)
		case PartThinking:
			dst = e.Thinking(dst, p.Text)
			dst = e.Signature(dst, p.Signature)
			dst = e.CloseBlock(dst)
		case PartRedactedThinking:
			dst = e.Redacted(dst, p.Signature)
		case PartToolCall:
			dst = e.ToolStart(dst, p.ToolCall.ID, p.ToolCall.Name)
			dst = e.ToolArgs(dst, p.ToolCall.Arguments)
			dst = e.CloseBlock(dst)
		case PartServerToolCall, PartServerToolResult:
			dst = e.ServerTool(dst, serverToolBlock(p.Type), p.Server)
		}
	}
	if r.Refusal != "" {
		dst = e.Text(dst, r.Refusal)
	}
	return e.Stop(dst, r.StopReason, r.StopSequence, &u)
}

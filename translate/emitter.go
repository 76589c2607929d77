package translate

// Emitter builds a well-formed IR event stream (see EventType) out of the
// loose facts a stream decoder learns from its wire protocol: "some text
// arrived", "a tool call started", "the model stopped". It opens and closes
// blocks, numbers them, ends a tool call without arguments as "{}", derives
// the tool-use stop reason from the presence of tool calls, and never emits
// anything after the stream has ended. Every decoder uses one, so the
// invariants live in one place.
//
// Methods append to dst and return it, so a decoder can reuse one slice per
// upstream event without allocating.
type Emitter struct {
	started   bool
	done      bool
	open      BlockType // block type of the open block, 0 when none
	openIndex int
	next      int  // index of the next block
	argsSeen  bool // the open tool call received a non-empty argument fragment
	toolCalls int  // tool call blocks started so far
	usage     Usage
	hasUsage  bool
}

// Started reports whether the message start was emitted.
func (e *Emitter) Started() bool { return e.started }

// Done reports whether the stream has ended (stop or error).
func (e *Emitter) Done() bool { return e.done }

// ToolCalls is the number of tool calls started so far.
func (e *Emitter) ToolCalls() int { return e.toolCalls }

// OpenBlock returns the type and index of the open block (type 0 if none).
func (e *Emitter) OpenBlock() (BlockType, int) { return e.open, e.openIndex }

// Usage returns the last usage seen and whether any was seen.
func (e *Emitter) Usage() (Usage, bool) { return e.usage, e.hasUsage }

// Start emits the message start once. Later calls do nothing.
func (e *Emitter) Start(dst []Event, id, model string, u *Usage) []Event {
	if e.started || e.done {
		return dst
	}
	e.started = true
	ev := Event{Type: EventMessageStart, ID: id, Model: model}
	if u != nil {
		e.usage, e.hasUsage = *u, true
		uc := *u
		ev.Usage = &uc
	}
	return append(dst, ev)
}

func (e *Emitter) ensureStarted(dst []Event) []Event {
	if !e.started {
		dst = e.Start(dst, "", "", nil)
	}
	return dst
}

// open closes any open block of another kind and opens one of type t.
func (e *Emitter) openBlock(dst []Event, t BlockType, id, name, sig string) []Event {
	dst = e.ensureStarted(dst)
	dst = e.CloseBlock(dst)
	e.open, e.openIndex = t, e.next
	e.next++
	e.argsSeen = false
	if t == BlockToolCall {
		e.toolCalls++
	}
	return append(dst, Event{Type: EventBlockStart, Index: e.openIndex, Block: t, ID: id, Name: name, Signature: sig})
}

// Text emits a text delta, opening a text block if none is open.
// Empty text emits nothing.
func (e *Emitter) Text(dst []Event, text string) []Event {
	if e.done || text == "" {
		return dst
	}
	if e.open != BlockText {
		dst = e.openBlock(dst, BlockText, "", "", "")
	}
	return e.delta(dst, BlockText, text)
}

// Thinking emits a thinking delta, opening a thinking block if none is open.
// Empty text emits nothing.
func (e *Emitter) Thinking(dst []Event, text string) []Event {
	if e.done || text == "" {
		return dst
	}
	if e.open != BlockThinking {
		dst = e.openBlock(dst, BlockThinking, "", "", "")
	}
	return e.delta(dst, BlockThinking, text)
}

// Signature attaches a signature to the open thinking block (opening an
// empty one if needed). Empty signatures emit nothing.
func (e *Emitter) Signature(dst []Event, sig string) []Event {
	if e.done || sig == "" {
		return dst
	}
	if e.open != BlockThinking {
		dst = e.openBlock(dst, BlockThinking, "", "", "")
	}
	return append(dst, Event{Type: EventBlockDelta, Index: e.openIndex, Block: BlockThinking, Signature: sig})
}

// Redacted emits a whole redacted thinking block.
func (e *Emitter) Redacted(dst []Event, data string) []Event {
	if e.done {
		return dst
	}
	dst = e.openBlock(dst, BlockRedactedThinking, "", "", data)
	return e.CloseBlock(dst)
}

// ToolStart opens a tool call block, closing whatever block was open.
func (e *Emitter) ToolStart(dst []Event, id, name string) []Event {
	if e.done {
		return dst
	}
	return e.openBlock(dst, BlockToolCall, id, name, "")
}

// ToolArgs emits an argument fragment for the open tool call. Empty
// fragments emit nothing. Without an open tool call it does nothing; callers
// check OpenBlock when the wire format allows stray fragments.
func (e *Emitter) ToolArgs(dst []Event, fragment string) []Event {
	if e.done || fragment == "" || e.open != BlockToolCall {
		return dst
	}
	e.argsSeen = true
	return e.delta(dst, BlockToolCall, fragment)
}

// delta appends a delta of text to the open block, of type t. Deltas are
// most of a stream's events, so the event is written in its slot: an
// appended literal is built on the stack and then copied whole (21 words,
// under a bulk write barrier while the collector marks), which costs more
// than the event's four fields.
func (e *Emitter) delta(dst []Event, t BlockType, text string) []Event {
	n := len(dst)
	if n < cap(dst) {
		dst = dst[:n+1]
		dst[n] = Event{} // the slot may hold an event of an earlier call
	} else {
		dst = append(dst, Event{})
	}
	ev := &dst[n]
	ev.Type, ev.Index, ev.Block, ev.Text = EventBlockDelta, e.openIndex, t, text
	return dst
}

// CloseBlock closes the open block, if any. A tool call that received no
// arguments gets "{}" first, so every client sees a valid arguments object.
func (e *Emitter) CloseBlock(dst []Event) []Event {
	if e.open == 0 {
		return dst
	}
	if e.open == BlockToolCall && !e.argsSeen {
		dst = append(dst, Event{Type: EventBlockDelta, Index: e.openIndex, Block: BlockToolCall, Text: "{}"})
	}
	dst = append(dst, Event{Type: EventBlockStop, Index: e.openIndex, Block: e.open})
	e.open = 0
	return dst
}

// SetUsage emits the cumulative usage known so far.
func (e *Emitter) SetUsage(dst []Event, u Usage) []Event {
	if e.done {
		return dst
	}
	dst = e.ensureStarted(dst)
	e.usage, e.hasUsage = u, true
	return append(dst, Event{Type: EventUsage, Usage: &u})
}

// Stop closes the open block and ends the message. A natural end with tool
// calls in the message becomes StopToolUse, whatever the wire said: several
// servers report "stop" after a tool call. u, when non-nil, is the final usage.
func (e *Emitter) Stop(dst []Event, reason StopReason, stopSequence string, u *Usage) []Event {
	if e.done {
		return dst
	}
	dst = e.ensureStarted(dst)
	dst = e.CloseBlock(dst)
	if e.toolCalls > 0 && (reason == "" || reason == StopEndTurn || reason == StopSequence) {
		reason, stopSequence = StopToolUse, ""
	}
	if reason == "" {
		reason = StopEndTurn
	}
	ev := Event{Type: EventMessageStop, Stop: reason, StopSequence: stopSequence}
	if u != nil {
		e.usage, e.hasUsage = *u, true
	}
	if e.hasUsage {
		uc := e.usage
		ev.Usage = &uc
	}
	e.done = true
	return append(dst, ev)
}

// Fail ends the stream with an error. An open block stays open, as in
// Anthropic's own streams: the error ends the stream whatever its state, and
// every encoder accepts it anywhere.
func (e *Emitter) Fail(dst []Event, err *Error) []Event {
	if e.done {
		return dst
	}
	e.open = 0
	e.done = true
	return append(dst, Event{Type: EventError, Err: err})
}

// End is called when the upstream stream ended. A stream that ended without
// a stop or an error was cut: it ends with an error, so the client never
// takes a truncated answer for a complete one.
func (e *Emitter) End(dst []Event) []Event {
	if e.done {
		return dst
	}
	return e.Fail(dst, &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream ended before the response was complete"})
}

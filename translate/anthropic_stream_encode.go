package translate

// anthropicStreamEncoder writes IR events as an Anthropic Messages stream
// (REFERENCE §1.6) for a client such as Claude Code or the Anthropic SDKs.
// Every event carries its "event:" name: the SDKs dispatch on it.
//
// Whatever the IR stream looked like, a stop always produces message_delta
// and message_stop (Claude Code retries a stream without them), and blocks
// are numbered 0, 1, 2, … in the order they start.
type anthropicStreamEncoder struct {
	model   string
	started bool
	done    bool

	open    bool // a content block is open
	openIR  int  // its IR index
	openOut int  // its wire index
	next    int  // wire index of the next block

	usage Usage  // last usage seen, for message_delta
	buf   []byte // reused for every event's data

	// deltaHead is the open block's content_block_delta up to its delta's
	// type, `{"type":"content_block_delta","index":N,"delta":{"type":`,
	// written once per block: a long block is mostly deltas, and the
	// index is the same in each. It lives in headBuf, which holds the
	// longest (75 bytes, with a 20-digit index), so it costs the stream no
	// allocation.
	deltaHead []byte
	headBuf   [80]byte

	// estimate stands in for the input tokens until the backend reports
	// them (Request.InputTokensEstimate): message_start must carry a
	// figure, and Claude Code's context meter reads it there.
	estimate int

	// edits is the client request's context management, whose applied
	// edits message_delta reports (appendAppliedEdits). Only it is kept,
	// not the request, which is let go of while the answer streams.
	edits *ContextManagement
}

// Encode implements StreamEncoder.
func (s *anthropicStreamEncoder) Encode(w FrameWriter, ev *Event) {
	if s.done {
		return
	}
	switch ev.Type {
	case EventMessageStart:
		s.start(w, ev)
	case EventBlockStart:
		s.start(w, nil)
		s.closeBlock(w)
		s.blockStart(w, ev)
	case EventBlockDelta:
		if s.open && ev.Index == s.openIR {
			s.blockDelta(w, ev)
		}
	case EventBlockStop:
		if s.open && ev.Index == s.openIR {
			s.closeBlock(w)
		}
	case EventUsage:
		// Anthropic reports usage once more in message_delta; an extra
		// message_delta mid-stream would end the SDK's accumulation early.
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
	case EventMessageStop:
		s.start(w, nil)
		s.closeBlock(w)
		s.stop(w, ev)
		s.done = true
	case EventError:
		// No message_start is needed before an error: the SDKs raise on
		// the error event whatever came before.
		err := ev.Err
		if err == nil {
			err = &Error{Status: 500, Kind: ErrAPI, Message: "stream failed"}
		}
		s.buf = appendAnthError(s.buf[:0], err)
		w.WriteFrame("error", s.buf)
		s.done = true
	}
}

// start writes message_start once. ev is nil when an event other than
// EventMessageStart arrived first.
func (s *anthropicStreamEncoder) start(w FrameWriter, ev *Event) {
	if s.started {
		return
	}
	s.started = true
	id, model := "", s.model
	if ev != nil {
		id = ev.ID
		if model == "" {
			model = ev.Model
		}
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
	}
	id = ownID(id, "msg_")
	b := append(s.buf[:0], `{"type":"message_start","message":{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	// Output is not known yet: the real API sends a placeholder too.
	u := s.usage
	u.OutputTokens = 0
	s.fillInput(&u)
	b = appendAnthUsage(b, &u)
	b = append(b, "}}"...)
	s.buf = b
	w.WriteFrame("message_start", b)
	s.compactionBlock(w)
}

// compactionBlock writes the compaction block louter made
// (ContextManagement.Compacted) as the stream's first block, as
// Anthropic's server streams it: its start with empty content, the
// summary in one compaction_delta, its stop. The model's blocks follow
// it, numbered from 1.
func (s *anthropicStreamEncoder) compactionBlock(w FrameWriter) {
	if s.edits == nil || s.edits.Compacted == nil {
		return
	}
	b := append(s.buf[:0], `{"type":"content_block_start","index":`...)
	b = appendJSONInt(b, int64(s.next))
	b = append(b, `,"content_block":{"type":"compaction","content":""}}`...)
	w.WriteFrame("content_block_start", b)
	b = append(b[:0], `{"type":"content_block_delta","index":`...)
	b = appendJSONInt(b, int64(s.next))
	b = append(b, `,"delta":{"type":"compaction_delta","content":`...)
	b = appendJSONString(b, s.edits.Compacted.Summary)
	b = append(b, "}}"...)
	w.WriteFrame("content_block_delta", b)
	b = append(b[:0], `{"type":"content_block_stop","index":`...)
	b = appendJSONInt(b, int64(s.next))
	b = append(b, '}')
	w.WriteFrame("content_block_stop", b)
	s.buf = b
	s.next++
}

func (s *anthropicStreamEncoder) blockStart(w FrameWriter, ev *Event) {
	b := append(s.buf[:0], `{"type":"content_block_start","index":`...)
	b = appendJSONInt(b, int64(s.next))
	b = append(b, `,"content_block":`...)
	switch ev.Block {
	case BlockText:
		b = append(b, `{"type":"text","text":""}`...)
	case BlockThinking:
		b = append(b, `{"type":"thinking","thinking":"","signature":""}`...)
	case BlockRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendJSONString(b, ev.Signature)
		b = append(b, '}')
	case BlockServerToolCall, BlockServerToolResult:
		s.serverToolBlockStart(w, ev)
		return
	case BlockToolCall:
		id := ev.ID
		if id == "" {
			id = newID("toolu_")
		}
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, ev.Name)
		b = append(b, `,"input":{}}`...)
	default:
		return
	}
	b = append(b, '}')
	s.buf = b
	s.openBlock(ev.Index)
	w.WriteFrame("content_block_start", b)
}

// openBlock records that the block of IR index ir is open, as the next
// wire block.
func (s *anthropicStreamEncoder) openBlock(ir int) {
	s.open, s.openIR, s.openOut = true, ir, s.next
	s.next++
	h := append(s.headBuf[:0], `{"type":"content_block_delta","index":`...)
	h = appendJSONInt(h, int64(s.openOut))
	s.deltaHead = append(h, `,"delta":{"type":`...)
}

func (s *anthropicStreamEncoder) blockDelta(w FrameWriter, ev *Event) {
	b := append(s.buf[:0], s.deltaHead...)
	switch {
	case ev.Block == BlockText && ev.Text != "":
		b = append(b, `"text_delta","text":`...)
		b = appendJSONString(b, ev.Text)
	case ev.Block == BlockText && ev.Citation != nil:
		// The cited text is the backend's, when it said it: the
		// encoder keeps no text to cut it from.
		b = append(b, `"citations_delta","citation":`...)
		b = appendAnthCitation(b, ev.Citation, "")
	case ev.Block == BlockThinking && ev.Signature != "":
		b = append(b, `"signature_delta","signature":`...)
		b = appendJSONString(b, ev.Signature)
	case ev.Block == BlockThinking && ev.Text != "":
		b = append(b, `"thinking_delta","thinking":`...)
		b = appendJSONString(b, ev.Text)
	case ev.Block == BlockToolCall && ev.Text != "":
		b = append(b, `"input_json_delta","partial_json":`...)
		b = appendJSONString(b, ev.Text)
	default:
		return
	}
	b = append(b, "}}"...)
	s.buf = b
	w.WriteFrame("content_block_delta", b)
}

func (s *anthropicStreamEncoder) closeBlock(w FrameWriter) {
	if !s.open {
		return
	}
	s.open = false
	b := append(s.buf[:0], `{"type":"content_block_stop","index":`...)
	b = appendJSONInt(b, int64(s.openOut))
	b = append(b, '}')
	s.buf = b
	w.WriteFrame("content_block_stop", b)
}

func (s *anthropicStreamEncoder) stop(w FrameWriter, ev *Event) {
	if ev.Usage != nil {
		s.usage = *ev.Usage
	}
	b := append(s.buf[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	b = appendJSONString(b, anthStopReason(ev.Stop))
	b = append(b, `,"stop_sequence":`...)
	b = appendJSONStringOrNull(b, ev.StopSequence)
	b = append(b, `},"usage":`...)
	// The backend's final counts, cumulative: they replace what
	// message_start announced.
	u := s.usage
	s.fillInput(&u)
	b = appendAnthUsage(b, &u)
	b = appendAppliedEdits(b, s.edits)
	b = append(b, '}')
	s.buf = b
	w.WriteFrame("message_delta", b)
	w.WriteFrame("message_stop", anthMessageStop)
}

// fillInput puts the estimate in place of input tokens the backend has not
// reported.
func (s *anthropicStreamEncoder) fillInput(u *Usage) {
	if u.InputTokens == 0 {
		u.InputTokens = s.estimate
	}
}

// anthMessageStop is the data of every message_stop event. Writers only
// read it.
var anthMessageStop = []byte(`{"type":"message_stop"}`)

// Interface guard.
var _ StreamEncoder = (*anthropicStreamEncoder)(nil)

package translate

// NewStreamEncoder implements Codec.
func (openAIChatCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &oaiStreamEncoder{}
	if req != nil {
		enc.model = req.Model
		enc.includeUsage = req.IncludeUsage
	}
	return enc
}

// oaiStreamEncoder writes IR events as chat.completion.chunk events for an
// OpenAI client (Cursor, the openai SDKs). Every chunk carries the same id
// and created time: openai-go's accumulator rejects a stream whose id
// changes. Tool calls are numbered 0, 1, ... in the order they start,
// whatever their IR block index.
type oaiStreamEncoder struct {
	model        string
	includeUsage bool

	started bool
	done    bool
	prefix  []byte // {"id":...,"object":...,"created":...,"model":..., shared by every chunk
	buf     []byte
	tools   int // tool calls started; the open one is tools-1
	usage   Usage

	// The text of the open thinking block, and the signed thinking and
	// redacted thinking blocks since the last tool call, which the next
	// call's id carries (oaiFoldThinking).
	thinking []byte
	signed   []Part
}

// Encode implements StreamEncoder.
func (s *oaiStreamEncoder) Encode(w FrameWriter, ev *Event) {
	if s.done {
		return
	}
	switch ev.Type {
	case EventMessageStart:
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
		s.start(w, ev.ID)
	case EventBlockStart:
		switch ev.Block {
		case BlockThinking:
			s.thinking = s.thinking[:0]
		case BlockRedactedThinking:
			if ev.Signature != "" {
				s.signed = append(s.signed, Part{Type: PartRedactedThinking, Signature: ev.Signature})
			}
		}
		if ev.Block != BlockToolCall {
			return // text and thinking open with their first delta
		}
		s.start(w, "")
		id := ev.ID
		if id == "" {
			id = oaiNewCallID()
		}
		id = oaiFoldThinking(id, s.signed)
		s.signed = s.signed[:0]
		b := s.chunk(`{"tool_calls":[`)
		b = oaiAppendToolCall(b, s.tools, id, ev.Name, "")
		s.tools++
		s.write(w, s.endDelta(append(b, "]}"...), ""))
	case EventBlockDelta:
		if ev.Block == BlockThinking {
			s.thinking = append(s.thinking, ev.Text...)
			if ev.Signature != "" {
				s.signed = append(s.signed, Part{Type: PartThinking, Text: string(s.thinking), Signature: ev.Signature})
			}
		}
		if ev.Text == "" {
			return // signature deltas: kept for the next tool call's id
		}
		s.start(w, "")
		var b []byte
		switch ev.Block {
		case BlockText:
			b = appendJSONString(s.chunk(`{"content":`), ev.Text)
			b = append(b, '}')
		case BlockThinking:
			b = appendJSONString(s.chunk(`{"reasoning_content":`), ev.Text)
			b = append(b, '}')
		case BlockToolCall:
			if s.tools == 0 {
				return // arguments without a started call: nothing to attach them to
			}
			b = s.chunk(`{"tool_calls":[{"index":`)
			b = appendJSONInt(b, int64(s.tools-1))
			b = append(b, `,"function":{"arguments":`...)
			b = appendJSONString(b, ev.Text)
			b = append(b, "}}]}"...)
		default:
			return
		}
		s.write(w, s.endDelta(b, ""))
	case EventUsage:
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
	case EventMessageStop:
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
		s.start(w, "")
		b := s.chunk(`{}`)
		s.write(w, s.endDelta(b, oaiFinishReason(ev.Stop)))
		if s.includeUsage {
			b = append(s.buf[:0], s.prefix...)
			b = append(b, `"choices":[],"usage":`...)
			b = oaiAppendUsage(b, &s.usage)
			s.write(w, append(b, '}'))
		}
		w.WriteFrame("", []byte("[DONE]"))
		s.done = true
	case EventError:
		// The error replaces whatever was in flight; a client that has not
		// seen a chunk yet gets just the error.
		err := ev.Err
		if err == nil {
			err = &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream failed"}
		}
		s.write(w, oaiAppendError(s.buf[:0], err))
		w.WriteFrame("", []byte("[DONE]"))
		s.done = true
	}
	// Block stops need nothing: a tool call ends when the next one starts
	// or the finish chunk arrives.
}

// start writes the first chunk, which announces the assistant role, once.
func (s *oaiStreamEncoder) start(w FrameWriter, id string) {
	if s.started {
		return
	}
	s.started = true
	id = ownID(id, oaiCompletionIDPrefix)
	b := append(s.prefix[:0], `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = appendJSONInt(b, oaiNow().Unix())
	b = append(b, `,"model":`...)
	b = appendJSONString(b, s.model)
	s.prefix = append(b, ',')
	s.write(w, s.endDelta(s.chunk(`{"role":"assistant","content":""}`), ""))
}

// chunk starts a chunk of the single choice and its delta, which the
// caller completes before calling endDelta.
func (s *oaiStreamEncoder) chunk(delta string) []byte {
	b := append(s.buf[:0], s.prefix...)
	b = append(b, `"choices":[{"index":0,"delta":`...)
	return append(b, delta...)
}

// endDelta closes the delta and the chunk; finish "" is null.
func (s *oaiStreamEncoder) endDelta(b []byte, finish string) []byte {
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, finish)
	}
	b = append(b, "}]"...)
	if s.includeUsage {
		// As OpenAI does: every chunk but the last says usage is to come.
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

func (s *oaiStreamEncoder) write(w FrameWriter, b []byte) {
	s.buf = b
	w.WriteFrame("", b)
}

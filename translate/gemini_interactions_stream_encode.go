package translate

// NewStreamEncoder implements Codec.
func (interactionsCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &interactionsStreamEncoder{}
	if req != nil {
		enc.model = req.Model
	}
	return enc
}

// interactionsStreamEncoder writes IR events as an Interactions API stream
// (create with "stream": true): server-sent events with event lines, each
// data a JSON object whose event_type repeats the event's name.
//
//	interaction.created    {"interaction":{"id","object","status":"in_progress","model"}}
//	( step.start {"index","step"}  step.delta {"index","delta"}*  step.stop {"index"} )*
//	interaction.completed  {"interaction":{"id","object","status","model","usage"}}  | error {"error":{"code","message"}}
//	done                   [DONE]
//
// One IR block is one step, with the IR's block index as the step's: text
// is a model_output step of text deltas; thinking is a thought step of
// thought_summary deltas and thought_signature deltas; a tool call is a
// function_call step (id and name at its start, "arguments":{} there) of
// arguments_delta fragments. The deltas go out as they come: nothing is
// buffered. Every stream ends with a data line "[DONE]" (event "done"),
// the sentinel the genai SDK's Interactions client reads to the end; it
// reports a stream without one as cut short.
type interactionsStreamEncoder struct {
	model string
	id    string

	started, done bool
	sawTool       bool
	usage         Usage

	buf []byte
}

// Encode implements StreamEncoder.
func (s *interactionsStreamEncoder) Encode(w FrameWriter, ev *Event) {
	if s.done {
		return
	}
	switch ev.Type {
	case EventMessageStart:
		s.start(w)
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
	case EventBlockStart:
		s.start(w)
		if t := serverToolPart(ev.Block); t != "" {
			u := ev.Server
			if u == nil {
				u = &ServerToolUse{ID: ev.ID, Kind: ServerToolKind(ev.Name)}
			}
			b := s.event("step.start", ev.Index)
			b = append(b, `,"step":`...)
			b = interactionsAppendServerToolStep(b, &Part{Type: t, Server: u})
			s.write(w, "step.start", append(b, '}'))
			return
		}
		b := s.event("step.start", ev.Index)
		b = append(b, `,"step":`...)
		switch ev.Block {
		case BlockToolCall:
			s.sawTool = true
			b = append(b, `{"type":"function_call","id":`...)
			b = appendJSONString(b, ev.ID)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, ev.Name)
			b = append(b, `,"arguments":{}}`...)
		case BlockThinking, BlockRedactedThinking:
			b = append(b, `{"type":"thought"}`...)
		default:
			b = append(b, `{"type":"model_output"}`...)
		}
		s.write(w, "step.start", append(b, '}'))
		if ev.Block == BlockRedactedThinking {
			s.signature(w, ev.Index, interactionsRedactedPrefix+ev.Signature)
		}
	case EventBlockDelta:
		switch ev.Block {
		case BlockText:
			if ev.Text == "" {
				return
			}
			b := s.event("step.delta", ev.Index)
			b = append(b, `,"delta":{"type":"text","text":`...)
			b = appendJSONString(b, ev.Text)
			s.write(w, "step.delta", append(b, "}}"...))
		case BlockThinking:
			if ev.Text != "" {
				b := s.event("step.delta", ev.Index)
				b = append(b, `,"delta":{"type":"thought_summary","content":{"type":"text","text":`...)
				b = appendJSONString(b, ev.Text)
				s.write(w, "step.delta", append(b, "}}}"...))
			}
			if ev.Signature != "" {
				s.signature(w, ev.Index, ev.Signature)
			}
		case BlockToolCall:
			if ev.Text == "" {
				return
			}
			b := s.event("step.delta", ev.Index)
			b = append(b, `,"delta":{"type":"arguments_delta","arguments":`...)
			b = appendJSONString(b, ev.Text)
			s.write(w, "step.delta", append(b, "}}"...))
		}
	case EventBlockStop:
		s.write(w, "step.stop", append(s.event("step.stop", ev.Index), '}'))
	case EventUsage:
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
	case EventMessageStop:
		s.start(w)
		if ev.Usage != nil {
			s.usage = *ev.Usage
		}
		stop := ev.Stop
		if stop == StopEndTurn && s.sawTool {
			stop = StopToolUse
		}
		b := append(s.buf[:0], `{"event_type":"interaction.completed","interaction":`...)
		b = s.appendInteraction(b, interactionsStatus(stop))
		b = b[:len(b)-1]
		b = append(b, `,"usage":`...)
		b = interactionsAppendUsage(b, &s.usage)
		s.write(w, "interaction.completed", append(b, "}}"...))
		s.end(w)
	case EventError:
		err := ev.Err
		if err == nil {
			err = &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream failed"}
		}
		b := append(s.buf[:0], `{"event_type":"error","error":`...)
		b = interactionsAppendErrorObject(b, err.forClient(ProtocolGeminiInteractions))
		s.write(w, "error", append(b, '}'))
		s.end(w)
	}
}

// start writes interaction.created, once, before anything else.
func (s *interactionsStreamEncoder) start(w FrameWriter) {
	if s.started {
		return
	}
	s.started = true
	s.id = interactionsNewID()
	b := append(s.buf[:0], `{"event_type":"interaction.created","interaction":`...)
	b = s.appendInteraction(b, "in_progress")
	s.write(w, "interaction.created", append(b, '}'))
}

// appendInteraction appends the interaction object the lifecycle events
// carry: no steps (the deltas carried them).
func (s *interactionsStreamEncoder) appendInteraction(b []byte, status string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, s.id)
	b = append(b, `,"object":"interaction","status":`...)
	b = appendJSONString(b, status)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, s.model)
	return append(b, '}')
}

// event begins a step event's data, up to its index.
func (s *interactionsStreamEncoder) event(name string, index int) []byte {
	b := append(s.buf[:0], `{"event_type":"`...)
	b = append(b, name...)
	b = append(b, `","index":`...)
	return appendJSONInt(b, int64(index))
}

// signature writes a thought_signature delta.
func (s *interactionsStreamEncoder) signature(w FrameWriter, index int, sig string) {
	b := s.event("step.delta", index)
	b = append(b, `,"delta":{"type":"thought_signature","signature":`...)
	b = appendJSONString(b, sig)
	s.write(w, "step.delta", append(b, "}}"...))
}

// end writes the [DONE] sentinel and ends the stream.
func (s *interactionsStreamEncoder) end(w FrameWriter) {
	w.WriteFrame("done", []byte("[DONE]"))
	s.done = true
}

func (s *interactionsStreamEncoder) write(w FrameWriter, name string, b []byte) {
	s.buf = b
	w.WriteFrame(name, b)
}

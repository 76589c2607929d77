package translate

// geminiStreamEncoder writes IR events as streamGenerateContent chunks for a
// Gemini client (Gemini CLI, the genai SDKs). Every chunk is one compact
// GenerateContentResponse, written with no event name: the genai SDKs read
// nothing but data lines. Text and thoughts go out delta by delta. A tool
// call goes out as one functionCall part when its block stops, because
// Gemini clients take function calls only whole: the encoder buffers the
// argument fragments of the open call, and one thought delta (held). Every
// chunk carries the usage known so far, as Gemini does, and the stream
// always ends with a chunk carrying a finishReason (Gemini CLI retries a
// stream without one), or with an error.
//
// No chunk has an empty parts list: the genai SDKs' chats count a content
// with no parts invalid and leave the whole turn, and the user message
// before it, out of the history they send next. A chunk with nothing to say
// carries one empty text part, as Gemini's own last chunk does.
type geminiStreamEncoder struct {
	model string
	id    string

	done     bool
	usage    Usage
	hasUsage bool
	// estimate stands in for the prompt tokens until the backend reports
	// them (Request.InputTokensEstimate).
	estimate int

	// grounding is what the next chunk reports of the server tool calls
	// and results (gemini_grounding.go).
	grounding geminiGroundingOut
	// textAt is how much text the answer has had, blockAt where the open
	// text block's starts: the offsets of its citations.
	textAt, blockAt int

	inTool   bool
	toolID   string
	toolName string
	args     []byte

	// held is the last thought delta's text, JSON-escaped, not yet
	// written: an Anthropic block's signature comes alone after its text,
	// and the genai SDKs' chats keep no part without data (an empty text
	// is none), so the signature goes out on the held delta's part. One
	// delta at most.
	held    []byte
	hasHeld bool

	buf []byte
}

// Encode implements StreamEncoder.
func (s *geminiStreamEncoder) Encode(w FrameWriter, ev *Event) {
	if s.done {
		return
	}
	if s.hasHeld && (ev.Type != EventBlockDelta || ev.Block != BlockThinking) {
		s.thought(w, "")
	}
	switch ev.Type {
	case EventMessageStart:
		s.id = ev.ID
		if ev.Usage != nil {
			s.usage, s.hasUsage = *ev.Usage, true
		}
	case EventBlockStart:
		if t := serverToolPart(ev.Block); t != "" {
			s.grounding.add(t, ev.Server)
			if t == PartServerToolResult {
				s.write(w, s.end(append(s.start(), geminiEmptyPart...), ""))
			}
			return
		}
		if ev.Block == BlockToolCall {
			s.inTool, s.toolID, s.toolName, s.args = true, ev.ID, ev.Name, s.args[:0]
		}
		s.blockAt = s.textAt
	case EventBlockDelta:
		switch ev.Block {
		case BlockText:
			if ev.Citation != nil {
				s.grounding.cite(ev.Citation, "", s.blockAt)
			}
			if ev.Text != "" {
				s.textAt += len(ev.Text)
				b := append(s.start(), `{"text":`...)
				b = appendJSONString(b, ev.Text)
				s.write(w, s.end(append(b, '}'), ""))
			}
		case BlockThinking:
			s.thinking(w, ev.Text, geminiSignatureOrEmpty(ev.Signature))
		case BlockToolCall:
			if s.inTool {
				s.args = append(s.args, ev.Text...)
			}
		}
	case EventBlockStop:
		if ev.Block == BlockToolCall && s.inTool {
			s.inTool = false
			b := geminiAppendFunctionCallPart(s.start(), s.toolID, s.toolName, string(s.args))
			s.write(w, s.end(b, ""))
		}
	case EventUsage:
		if ev.Usage != nil {
			s.usage, s.hasUsage = *ev.Usage, true
		}
	case EventMessageStop:
		if ev.Usage != nil {
			s.usage, s.hasUsage = *ev.Usage, true
		}
		s.write(w, s.end(append(s.start(), geminiEmptyPart...), geminiFinishReason(ev.Stop)))
		s.done = true
	case EventError:
		err := ev.Err
		if err == nil {
			err = &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream failed"}
		}
		s.write(w, geminiAppendError(s.buf[:0], err))
		s.done = true
	}
}

// geminiEmptyPart is the part of a chunk with no text or call to carry.
const geminiEmptyPart = `{"text":""}`

// thinking writes the delta held before, if any, and holds a thought
// delta's text, or writes the held text with the signature that ends it.
// A signature with no text held before it (a block that was only a
// signature) goes out on an empty thought part, the only place left.
func (s *geminiStreamEncoder) thinking(w FrameWriter, text, sig string) {
	if text == "" && sig == "" {
		return
	}
	if text != "" || !s.hasHeld {
		if s.hasHeld {
			s.thought(w, "")
		}
		s.held, s.hasHeld = appendJSONString(s.held[:0], text), true
	}
	if sig != "" {
		s.thought(w, sig)
	}
}

// thought writes the held text as one thought part, signed if sig is not
// empty, and lets it go.
func (s *geminiStreamEncoder) thought(w FrameWriter, sig string) {
	s.hasHeld = false
	b := append(s.start(), `{"text":`...)
	b = append(b, s.held...)
	b = append(b, `,"thought":true`...)
	if sig != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = appendJSONString(b, sig)
	}
	s.write(w, s.end(append(b, '}'), ""))
}

// start begins a chunk up to its first part.
func (s *geminiStreamEncoder) start() []byte {
	return append(s.buf[:0], `{"candidates":[{"content":{"role":"model","parts":[`...)
}

// end closes the parts and the chunk; finish "" leaves finishReason out.
func (s *geminiStreamEncoder) end(b []byte, finish string) []byte {
	b = append(b, "]}"...)
	if finish != "" {
		b = append(b, `,"finishReason":`...)
		b = appendJSONString(b, finish)
	}
	b = append(b, `,"index":0`...)
	if !s.grounding.empty() {
		b = s.grounding.append(b)
	}
	b = append(b, "}]"...)
	switch {
	case s.hasUsage && (s.usage.InputTokens > 0 || s.estimate == 0):
		b = append(b, `,"usageMetadata":`...)
		b = geminiAppendUsage(b, &s.usage)
	case s.estimate > 0:
		u := s.usage
		u.InputTokens = s.estimate
		b = append(b, `,"usageMetadata":`...)
		b = geminiAppendUsage(b, &u)
	}
	b = append(b, `,"modelVersion":`...)
	b = appendJSONString(b, s.model)
	if s.id != "" {
		// Optional in Gemini's schema; left out rather than invented.
		b = append(b, `,"responseId":`...)
		b = appendJSONString(b, s.id)
	}
	return append(b, '}')
}

func (s *geminiStreamEncoder) write(w FrameWriter, b []byte) {
	s.buf = b
	w.WriteFrame("", b)
}

// geminiAppendFunctionCallPart appends a functionCall part. The thought
// signature folded into the id, if any, goes back on the part, and the id
// is sent without it.
func geminiAppendFunctionCallPart(b []byte, callID, name, args string) []byte {
	id, sig := geminiSplitCallID(callID)
	b = append(b, `{"functionCall":{`...)
	if id != "" {
		b = append(b, `"id":`...)
		b = appendJSONString(b, id)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"args":`...)
	b = geminiAppendArgs(b, args)
	b = append(b, '}')
	if sig != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = appendJSONString(b, sig)
	}
	return append(b, '}')
}

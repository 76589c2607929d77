package translate

import "strings"

// NewStreamEncoder implements Codec.
func (openAIResponsesCodec) NewStreamEncoder(req *Request) StreamEncoder {
	enc := &respStreamEncoder{req: req}
	if req != nil {
		enc.model = req.Model
	}
	return enc
}

// respStreamEncoder writes IR events as a Responses event stream for a
// Responses client such as Codex (REFERENCE §3.3): response.created and
// response.in_progress, then for each IR block one output item —
// output_item.added, its content or summary part and deltas, their .done
// events and output_item.done — and the terminal response.completed,
// response.incomplete or response.failed. Every event carries its event:
// name and a sequence_number counting from 0; item ids are made once per
// item and used by all its events.
//
// Codex reads items only from output_item.done, and every client reads the
// final response object, so the encoder keeps each finished item for the
// terminal event. Deltas are written as they arrive; only a custom tool's
// input is written when its call is complete, because the backend streams
// it as JSON ({"input":"…"}) and the client wants the raw string.
type respStreamEncoder struct {
	req   *Request
	model string

	started bool
	done    bool
	seq     int64
	id      string
	created int64
	buf     []byte
	output  []byte // the finished items, comma-separated
	items   int    // output index of the next item
	usage   Usage
	hasUse  bool

	// The item of the open block.
	kind      BlockType
	custom    bool
	itemID    string
	callID    string
	name      string
	text      strings.Builder // the item's whole text or arguments, for the .done events
	enc       string          // a reasoning item's encrypted content
	summaryOn bool            // the reasoning summary part was announced

	// The open web_search_call item's call, and its result once it came.
	srvCall, srvResult *ServerToolUse
	// cites are the citations of the open text item, written at its end
	// (openai_responses_citations.go).
	cites []Citation
}

// Encode implements StreamEncoder.
func (s *respStreamEncoder) Encode(w FrameWriter, ev *Event) {
	if s.done {
		return
	}
	switch ev.Type {
	case EventMessageStart:
		if ev.Usage != nil {
			s.usage, s.hasUse = *ev.Usage, true
		}
		s.start(w, ev.ID)
	case EventBlockStart:
		s.start(w, "")
		if !s.serverToolStart(w, ev) { // openai_responses_server_tool_items.go
			s.openItem(w, ev)
		}
	case EventBlockDelta:
		s.start(w, "")
		s.delta(w, ev)
	case EventBlockStop:
		if s.kind != BlockServerToolCall { // open until its result comes
			s.closeItem(w)
		}
	case EventUsage:
		if ev.Usage != nil {
			s.usage, s.hasUse = *ev.Usage, true
		}
	case EventMessageStop:
		if ev.Usage != nil {
			s.usage, s.hasUse = *ev.Usage, true
		}
		s.start(w, "")
		s.closeItem(w)
		status, reason := respStatus(ev.Stop)
		s.terminal(w, "response."+status, status, reason, nil)
		s.done = true
	case EventError:
		err := ev.Err
		if err == nil {
			err = &Error{Status: 502, Kind: ErrAPI, Message: "upstream stream failed"}
		}
		s.start(w, "")
		s.writeError(w, err)
		s.terminal(w, "response.failed", "failed", "", err)
		s.done = true
	}
}

// start writes response.created and response.in_progress once. The
// response keeps an upstream id that is a Responses id (resp_…); any other
// protocol's id is replaced.
func (s *respStreamEncoder) start(w FrameWriter, id string) {
	if s.started {
		return
	}
	s.started = true
	s.id = id
	if !strings.HasPrefix(id, "resp_") {
		s.id = respNewResponseID()
	}
	s.created = oaiNow().Unix()
	for _, name := range [...]string{"response.created", "response.in_progress"} {
		b := s.event(name)
		b = append(b, `,"response":`...)
		o := s.object("in_progress", "", nil)
		b = o.append(b)
		s.write(w, name, append(b, '}'))
	}
}

func (s *respStreamEncoder) object(status, reason string, err *Error) respObject {
	o := respObject{id: s.id, model: s.model, createdAt: s.created, status: status, incompleteReason: reason, err: err, req: s.req}
	if status != "in_progress" {
		o.output = s.output
		if s.hasUse {
			o.usage = &s.usage
		}
	}
	return o
}

// event starts an event's JSON: {"type":name,"sequence_number":n
func (s *respStreamEncoder) event(name string) []byte {
	b := append(s.buf[:0], `{"type":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"sequence_number":`...)
	b = appendJSONInt(b, s.seq)
	s.seq++
	return b
}

// itemEvent starts an event about the open item: its id and output index.
func (s *respStreamEncoder) itemEvent(name string) []byte {
	b := s.event(name)
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, s.itemID)
	b = append(b, `,"output_index":`...)
	return appendJSONInt(b, int64(s.items))
}

func (s *respStreamEncoder) write(w FrameWriter, name string, b []byte) {
	s.buf = b
	w.WriteFrame(name, b)
}

// openItem announces the item of a new block.
func (s *respStreamEncoder) openItem(w FrameWriter, ev *Event) {
	s.closeItem(w)
	s.kind, s.custom, s.enc, s.summaryOn = ev.Block, false, "", false
	s.text.Reset()
	var item []byte
	switch ev.Block {
	case BlockText:
		s.itemID = respNewMessageID()
		item = respAppendMessageItem(nil, s.itemID, "in_progress", nil, "")
	case BlockThinking:
		s.itemID = respNewReasoningID()
		item = respAppendReasoningItem(nil, s.itemID, "", "")
	case BlockRedactedThinking:
		s.itemID = respNewRedactedID()
		s.enc = ev.Signature
		item = respAppendReasoningItem(nil, s.itemID, "", "")
	case BlockToolCall:
		s.callID, s.name = ev.ID, ev.Name
		if s.callID == "" {
			s.callID = oaiNewCallID()
		}
		if s.custom = respIsCustom(s.req, ev.Name); s.custom {
			s.itemID = respNewCustomItemID()
			item = respAppendCustomCallItem(nil, s.itemID, "in_progress", s.callID, s.name, "")
		} else {
			s.itemID = respNewCallItemID()
			item = respAppendFunctionCallItem(nil, s.itemID, "in_progress", s.callID, s.name, "")
		}
	default:
		s.kind = 0
		return
	}
	b := s.event("response.output_item.added")
	b = append(b, `,"output_index":`...)
	b = appendJSONInt(b, int64(s.items))
	b = append(b, `,"item":`...)
	b = append(b, item...)
	s.write(w, "response.output_item.added", append(b, '}'))

	if ev.Block == BlockText {
		b = s.itemEvent("response.content_part.added")
		b = append(b, `,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`...)
		s.write(w, "response.content_part.added", b)
	}
}

func (s *respStreamEncoder) delta(w FrameWriter, ev *Event) {
	if s.kind == 0 || ev.Block != s.kind {
		return
	}
	if ev.Signature != "" {
		s.enc += ev.Signature
	}
	if ev.Citation != nil && s.kind == BlockText {
		s.cites = append(s.cites, *ev.Citation)
	}
	if ev.Text == "" {
		return
	}
	s.text.WriteString(ev.Text)
	var b []byte
	var name string
	switch s.kind {
	case BlockText:
		name = "response.output_text.delta"
		b = s.itemEvent(name)
		b = append(b, `,"content_index":0,"delta":`...)
		b = appendJSONString(b, ev.Text)
		b = append(b, `,"logprobs":[]}`...)
	case BlockThinking:
		if !s.summaryOn {
			s.summaryOn = true
			b = s.itemEvent("response.reasoning_summary_part.added")
			b = append(b, `,"summary_index":0,"part":{"type":"summary_text","text":""}}`...)
			s.write(w, "response.reasoning_summary_part.added", b)
		}
		name = "response.reasoning_summary_text.delta"
		b = s.itemEvent(name)
		b = append(b, `,"summary_index":0,"delta":`...)
		b = appendJSONString(b, ev.Text)
		b = append(b, '}')
	case BlockToolCall:
		if s.custom {
			return // written whole at the end, see respStreamEncoder
		}
		name = "response.function_call_arguments.delta"
		b = s.itemEvent(name)
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, ev.Text)
		b = append(b, '}')
	default:
		return
	}
	s.write(w, name, b)
}

// closeItem finishes the open item: its .done events, then
// output_item.done with the complete item, which is kept for the final
// response object.
func (s *respStreamEncoder) closeItem(w FrameWriter) {
	if s.kind == 0 {
		return
	}
	text := s.text.String()
	var item []byte
	switch s.kind {
	case BlockServerToolCall:
		item = s.serverToolItem(w)
	case BlockText:
		cites := s.citationEvents(w, text)
		b := s.itemEvent("response.output_text.done")
		b = append(b, `,"content_index":0,"text":`...)
		b = appendJSONString(b, text)
		s.write(w, "response.output_text.done", append(b, `,"logprobs":[]}`...))
		b = s.itemEvent("response.content_part.done")
		b = append(b, `,"content_index":0,"part":`...)
		b = respAppendOutputText(b, []Part{{Type: PartText, Text: text, Citations: cites}})
		s.write(w, "response.content_part.done", append(b, '}'))
		item = respAppendMessageItem(nil, s.itemID, "completed", []Part{{Type: PartText, Text: text, Citations: cites}}, "")
	case BlockThinking, BlockRedactedThinking:
		if s.summaryOn {
			b := s.itemEvent("response.reasoning_summary_text.done")
			b = append(b, `,"summary_index":0,"text":`...)
			b = appendJSONString(b, text)
			s.write(w, "response.reasoning_summary_text.done", append(b, '}'))
			b = s.itemEvent("response.reasoning_summary_part.done")
			b = append(b, `,"summary_index":0,"part":{"type":"summary_text","text":`...)
			b = appendJSONString(b, text)
			s.write(w, "response.reasoning_summary_part.done", append(b, "}}"...))
		}
		// The item keeps the id it was announced with: the backend's own
		// id (in a packed signature) arrives only now, with the encrypted
		// content, after the summary was streamed under this one.
		enc := s.enc
		if _, penc, ok := respUnpackSignature(enc); ok {
			enc = penc
		}
		item = respAppendReasoningItem(nil, s.itemID, text, enc)
	case BlockToolCall:
		if s.custom {
			input := respCustomInput(text)
			b := s.itemEvent("response.custom_tool_call_input.delta")
			b = append(b, `,"delta":`...)
			b = appendJSONString(b, input)
			s.write(w, "response.custom_tool_call_input.delta", append(b, '}'))
			b = s.itemEvent("response.custom_tool_call_input.done")
			b = append(b, `,"input":`...)
			b = appendJSONString(b, input)
			s.write(w, "response.custom_tool_call_input.done", append(b, '}'))
			item = respAppendCustomCallItem(nil, s.itemID, "completed", s.callID, s.name, input)
		} else {
			if strings.TrimSpace(text) == "" {
				text = "{}"
			}
			b := s.itemEvent("response.function_call_arguments.done")
			b = append(b, `,"name":`...)
			b = appendJSONString(b, s.name)
			b = append(b, `,"arguments":`...)
			b = appendJSONString(b, text)
			s.write(w, "response.function_call_arguments.done", append(b, '}'))
			item = respAppendFunctionCallItem(nil, s.itemID, "completed", s.callID, s.name, text)
		}
	}
	b := s.event("response.output_item.done")
	b = append(b, `,"output_index":`...)
	b = appendJSONInt(b, int64(s.items))
	b = append(b, `,"item":`...)
	b = append(b, item...)
	s.write(w, "response.output_item.done", append(b, '}'))

	s.output = appendJSONComma(s.output)
	s.output = append(s.output, item...)
	s.items++
	s.kind = 0
	s.text.Reset()
}

// writeError writes the error event. Its members are the spec's flat
// shape; the nested copy under "error" is what OpenAI really sends, and
// what the openai SDKs look for to raise.
func (s *respStreamEncoder) writeError(w FrameWriter, e *Error) {
	e = e.forClient(ProtocolOpenAIResponses)
	typ, code := oaiErrorTypeCode(e.Kind)
	if e.Code != "" {
		code = e.Code
	}
	b := s.event("error")
	b = append(b, `,"code":`...)
	b = appendJSONStringOrNull(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"param":`...)
	b = appendJSONStringOrNull(b, e.Param)
	b = append(b, `,"error":{"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"code":`...)
	b = appendJSONStringOrNull(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"param":`...)
	b = appendJSONStringOrNull(b, e.Param)
	s.write(w, "error", append(b, "}}"...))
}

// terminal writes the event that ends the stream, with the whole response.
func (s *respStreamEncoder) terminal(w FrameWriter, name, status, reason string, err *Error) {
	b := s.event(name)
	b = append(b, `,"response":`...)
	o := s.object(status, reason, err)
	b = o.append(b)
	s.write(w, name, append(b, '}'))
}

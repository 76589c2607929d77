package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Reasons recorded with Request.Drop by EncodeRequest.
const (
	geminiDropCacheControl = "Gemini caches prompts implicitly"
	geminiDropThinking     = "reasoning without a Gemini thought signature is not sent back"
	geminiDropRedacted     = "encrypted reasoning of another provider cannot be sent to Gemini"
)

// geminiMaxThinkingBudget is the largest thinkingBudget every Gemini 2.5
// model accepts (Flash's limit; Pro allows 32768).
const geminiMaxThinkingBudget = 24576

// EncodeRequest implements Codec. It writes a generateContent body for a
// Gemini backend. The model and the stream mode go into the URL, not the
// body (the caller builds it).
func (geminiCodec) EncodeRequest(req *Request) ([]byte, error) {
	e := geminiRequestEncoder{req: req}
	e.names = map[string]string{}
	for i := range req.Messages {
		for _, p := range req.Messages[i].Parts {
			if p.Type == PartToolCall && p.ToolCall != nil {
				e.names[p.ToolCall.ID] = p.ToolCall.Name
			}
		}
	}
	b := make([]byte, 0, geminiRequestSizeHint(req))
	b = append(b, `{"contents":[`...)
	b = e.appendContents(b)
	b = append(b, ']')
	b = e.appendSystem(b)
	b = e.appendTools(b)
	b = e.appendGenerationConfig(b)
	if req.User != "" {
		req.Drop("user", "Gemini has no end-user field")
	}
	return append(b, '}'), nil
}

// geminiRequestEncoder holds the state of one EncodeRequest call.
type geminiRequestEncoder struct {
	req   *Request
	names map[string]string // tool call id → function name

	// The conversation is written straight into the body: a content's
	// opening is written with its first part, so that a content without
	// parts is not written at all.
	out   []byte // the body, while the conversation is written
	role  Role   // role of the content being written
	open  bool   // its opening is written
	calls int    // functionCall parts in it
}

// geminiRequestSizeHint estimates the body size so that it is built
// without regrowth. Texts count as the escaped form that will be copied,
// when there is one.
func geminiRequestSizeHint(req *Request) int {
	n := 512
	var parts func(ps []Part)
	parts = func(ps []Part) {
		for i := range ps {
			p := &ps[i]
			n += 48 + jsonTextSize(p.Text, p.textForm) + len(p.Signature)
			if p.Media != nil {
				n += len(p.Media.Data) + len(p.Media.URL) + len(p.Media.MediaType) + 48
			}
			if p.ToolCall != nil {
				n += 96 + len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				n += 96 + len(p.ToolResult.CallID) + len(p.ToolResult.Name)
				parts(p.ToolResult.Content)
			}
		}
	}
	parts(req.System)
	for i := range req.Messages {
		n += 32
		parts(req.Messages[i].Parts)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += 96 + len(t.Name) + jsonTextSize(t.Description, t.descForm) + len(t.Schema)
	}
	return n
}

// appendContents writes the conversation. Consecutive messages of one role
// are merged into one content, as Gemini wants turns to alternate; system
// messages before the first turn join the system instruction, those after
// it are user text at their position (system_messages.go).
func (e *geminiRequestEncoder) appendContents(b []byte) []byte {
	e.out = b
	for i := leadingSystem(e.req.Messages); i < len(e.req.Messages); i++ {
		m := &e.req.Messages[i]
		role := m.Role
		if role == RoleSystem {
			role = RoleUser
		}
		if role != e.role {
			e.flush()
			e.role = role
		}
		switch m.Role {
		case RoleAssistant:
			e.appendModelParts(m.Parts)
		case RoleSystem:
			e.appendSystemTurn(m.Parts)
		default:
			e.appendUserParts(m.Parts)
		}
	}
	e.flush()
	b, e.out = e.out, nil
	return b
}

// flush closes the content being written, if it has parts.
func (e *geminiRequestEncoder) flush() {
	if e.open {
		e.out = append(e.out, "]}"...)
	}
	e.open, e.calls = false, 0
}

// partStart starts a part: after a comma, or after the opening of the
// content when it is the first.
func (e *geminiRequestEncoder) partStart() {
	if e.open {
		e.out = append(e.out, ',')
		return
	}
	e.out = appendJSONComma(e.out)
	if e.role == RoleAssistant {
		e.out = append(e.out, `{"role":"model","parts":[`...)
	} else {
		e.out = append(e.out, `{"role":"user","parts":[`...)
	}
	e.open = true
}

func (e *geminiRequestEncoder) noteCacheControl(p *Part) {
	if len(p.CacheControl) > 0 {
		e.req.Drop("cache_control", geminiDropCacheControl)
	}
}

// appendUserParts writes a user message: the function responses first (one
// per call, each with its function's name), then the images and documents
// those results held, then the rest of the message.
func (e *geminiRequestEncoder) appendUserParts(parts []Part) {
	for i := range parts {
		if p := &parts[i]; p.Type == PartToolResult && p.ToolResult != nil {
			e.noteCacheControl(p)
			e.appendFunctionResponse(p.ToolResult)
		}
	}
	for i := range parts {
		if p := &parts[i]; p.Type == PartToolResult && p.ToolResult != nil {
			for j := range p.ToolResult.Content {
				if c := &p.ToolResult.Content[j]; c.Media != nil {
					e.appendMedia(c)
				}
			}
		}
	}
	for i := range parts {
		p := &parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
			e.appendText(p)
		case PartImage, PartDocument:
			e.appendMedia(p)
		case PartToolResult:
		default:
			e.req.Drop("messages.content."+string(p.Type), "not allowed in user turns")
		}
	}
}

// appendSystemTurn writes a mid-conversation system message's text parts
// as user text marked as the system's.
func (e *geminiRequestEncoder) appendSystemTurn(parts []Part) {
	for i := range parts {
		p := &parts[i]
		e.noteCacheControl(p)
		if p.Type == PartText && p.Text != "" {
			e.appendText(&Part{Type: PartText, Text: systemTurnText(p.Text)})
		}
	}
}

func (e *geminiRequestEncoder) appendText(p *Part) {
	if p.Text == "" {
		return
	}
	e.partStart()
	e.out = append(e.out, `{"text":`...)
	e.out = appendJSONText(e.out, p.Text, p.textForm)
	e.out = append(e.out, '}')
}

// appendMedia writes an image or document as inlineData (base64, also from
// a data: URL) or fileData (a URL or a Gemini file).
func (e *geminiRequestEncoder) appendMedia(p *Part) {
	m := p.Media
	if m == nil {
		return
	}
	mime, data := m.MediaType, m.Data
	if data == "" && strings.HasPrefix(m.URL, "data:") {
		if t, d, ok := oaiParseDataURL(m.URL); ok {
			mime, data = t, d
		}
	}
	if mime == "" && p.Type == PartImage && data != "" {
		mime = anthSniffImageType(data)
	}
	uri := m.URL
	if uri == "" {
		uri = m.FileID
	}
	switch {
	case data != "":
		if mime == "" {
			mime = "application/octet-stream"
		}
		e.partStart()
		e.out = append(e.out, `{"inlineData":{"mimeType":`...)
		e.out = appendJSONString(e.out, mime)
		e.out = append(e.out, `,"data":`...)
		e.out = appendJSONString(e.out, data)
		e.out = append(e.out, "}}"...)
	case uri != "" && !strings.HasPrefix(uri, "data:"):
		e.partStart()
		e.out = append(e.out, `{"fileData":{`...)
		if mime != "" {
			e.out = append(e.out, `"mimeType":`...)
			e.out = appendJSONString(e.out, mime)
			e.out = append(e.out, ',')
		}
		e.out = append(e.out, `"fileUri":`...)
		e.out = appendJSONString(e.out, uri)
		e.out = append(e.out, "}}"...)
	default:
		e.req.Drop("messages.content."+string(p.Type), "media without data or a URL")
	}
}

// appendFunctionResponse writes one tool result. Gemini needs the
// function's name, which OpenAI and Anthropic results lack: it comes from
// the call the result answers. The output goes under "output", or under
// "error" for a failed call (the convention of go-genai's FunctionResponse).
func (e *geminiRequestEncoder) appendFunctionResponse(tr *ToolResult) {
	name := tr.Name
	if name == "" {
		name = e.names[tr.CallID]
	}
	id, _ := geminiSplitCallID(tr.CallID)
	e.partStart()
	e.out = append(e.out, `{"functionResponse":{`...)
	if id != "" {
		e.out = append(e.out, `"id":`...)
		e.out = appendJSONString(e.out, id)
		e.out = append(e.out, ',')
	}
	e.out = append(e.out, `"name":`...)
	e.out = appendJSONString(e.out, name)
	if tr.IsError {
		e.out = append(e.out, `,"response":{"error":`...)
	} else {
		e.out = append(e.out, `,"response":{"output":`...)
	}
	// The texts joined by newlines, written piece by piece: each text's
	// escaped form is copied when it has one.
	e.out = append(e.out, '"')
	n := 0
	for i := range tr.Content {
		if c := &tr.Content[i]; c.Type == PartText {
			if n > 0 {
				e.out = append(e.out, `\n`...)
			}
			n++
			e.out = appendJSONTextContents(e.out, c.Text, c.textForm)
		}
	}
	e.out = append(e.out, `"}}}`...)
}

// appendModelParts writes an assistant message. A functionCall part gets
// back its thought signature, the one a Gemini client sent beside the call
// or the one its id carries; the first call of a turn that
// has none gets Gemini's documented placeholder, which Gemini 3 requires
// when the history's calls were not made by Gemini.
func (e *geminiRequestEncoder) appendModelParts(parts []Part) {
	for i := range parts {
		p := &parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
			e.appendText(p)
		case PartThinking:
			if p.Signature == "" {
				if p.Text != "" {
					e.req.Drop("thinking", geminiDropThinking)
				}
				continue
			}
			e.partStart()
			e.out = append(e.out, `{"text":`...)
			e.out = appendJSONText(e.out, p.Text, p.textForm)
			if p.Text != "" {
				e.out = append(e.out, `,"thought":true`...)
			}
			e.out = append(e.out, `,"thoughtSignature":`...)
			e.out = appendJSONString(e.out, p.Signature)
			e.out = append(e.out, '}')
		case PartRedactedThinking:
			e.req.Drop("redacted_thinking", geminiDropRedacted)
		case PartToolCall:
			if p.ToolCall != nil {
				e.appendFunctionCall(p.ToolCall)
			}
		default:
			e.req.Drop("messages.content."+string(p.Type), "not allowed in model turns")
		}
	}
}

func (e *geminiRequestEncoder) appendFunctionCall(tc *ToolCall) {
	id, sig := geminiSplitCallID(tc.ID)
	if tc.Signature != "" {
		sig = tc.Signature
	}
	if sig == "" && e.calls == 0 {
		sig = geminiSkipSignature
	}
	e.calls++
	e.partStart()
	e.out = append(e.out, `{"functionCall":{`...)
	if id != "" {
		e.out = append(e.out, `"id":`...)
		e.out = appendJSONString(e.out, id)
		e.out = append(e.out, ',')
	}
	e.out = append(e.out, `"name":`...)
	e.out = appendJSONString(e.out, tc.Name)
	e.out = append(e.out, `,"args":`...)
	e.out = geminiAppendArgs(e.out, tc.Arguments)
	e.out = append(e.out, '}')
	if sig != "" {
		e.out = append(e.out, `,"thoughtSignature":`...)
		e.out = appendJSONString(e.out, sig)
	}
	e.out = append(e.out, '}')
}

// geminiAppendArgs appends tool-call arguments as the JSON object Gemini
// wants. Arguments that are not an object (a model's invalid JSON) are
// kept as text under "_raw" rather than lost.
func geminiAppendArgs(b []byte, args string) []byte {
	args = strings.TrimSpace(args)
	if args == "" {
		return append(b, "{}"...)
	}
	if gjson.Valid(args) && gjson.Parse(args).IsObject() {
		return append(b, args...)
	}
	b = append(b, `{"_raw":`...)
	b = appendJSONString(b, args)
	return append(b, '}')
}

// appendSystem writes the system instruction: the leading system prompt,
// then the system messages that open the conversation.
func (e *geminiRequestEncoder) appendSystem(b []byte) []byte {
	start := len(b)
	b = append(b, `,"systemInstruction":{"parts":[`...)
	n := 0
	add := func(p *Part) {
		e.noteCacheControl(p)
		if p.Type != PartText || p.Text == "" {
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"text":`...)
		b = appendJSONText(b, p.Text, p.textForm)
		b = append(b, '}')
	}
	for i := range e.req.System {
		add(&e.req.System[i])
	}
	for i := range leadingSystem(e.req.Messages) {
		m := &e.req.Messages[i]
		for j := range m.Parts {
			add(&m.Parts[j])
		}
	}
	if n == 0 {
		return b[:start]
	}
	return append(b, "]}"...)
}

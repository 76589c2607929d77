package translate

import (
	"encoding/base64"
	"strings"
)

// The user side of an OpenAI Chat request: user messages with their text,
// images and documents as content parts, and tool results as tool messages.

// appendUser appends a user turn. Tool results become tool messages, one per
// result in order, which must directly follow the assistant message that
// made the calls. Then come a user message with the images and documents the
// tools returned (tool messages carry text only, so they travel in the next
// user message: nothing is lost), then the rest of the turn.
func (e *oaiRequestEncoder) appendUser(b []byte, m *Message) []byte {
	if e.promptFormat != "" && oaiHasToolResult(m.Parts) {
		return e.appendPromptUser(b, m)
	}
	e.media = e.media[:0]
	e.scratch = e.scratch[:0]
	results := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartToolResult:
			results++
			b = e.appendToolMessage(b, p.ToolResult)
		case PartText, PartImage, PartDocument:
			e.scratch = append(e.scratch, p)
		case PartThinking, PartRedactedThinking, PartToolCall:
			e.req.Drop("messages.user."+string(p.Type), "not valid in a user message")
		}
	}
	if len(e.media) > 0 {
		b = e.appendUserMessage(b, e.media)
	}
	if len(e.scratch) > 0 || results == 0 {
		b = e.appendUserMessage(b, e.scratch)
	}
	return b
}

func (e *oaiRequestEncoder) appendToolMessage(b []byte, tr *ToolResult) []byte {
	b = oaiAppendMessageStart(b, "tool")
	b = append(b, `,"tool_call_id":`...)
	b = appendJSONString(b, e.toolID(tr.CallID))
	prefix := ""
	if tr.IsError {
		// OpenAI has no error flag on tool results.
		prefix = "Error: "
	}
	for i := range tr.Content {
		p := &tr.Content[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
		case PartImage, PartDocument:
			e.media = append(e.media, p)
		default:
			e.req.Drop("tool_result."+string(p.Type), "tool results carry text, images and documents only")
		}
	}
	b = append(b, `,"content":`...)
	b = oaiAppendTextJoin(b, prefix, tr.Content, PartText, "\n")
	return append(b, '}')
}

// appendUserMessage appends a user message: a single text as a string
// content (what every OpenAI-compatible server accepts), anything else as an
// array of content parts.
func (e *oaiRequestEncoder) appendUserMessage(b []byte, parts []*Part) []byte {
	b = oaiAppendMessageStart(b, "user")
	b = append(b, `,"content":`...)
	if len(parts) == 0 {
		b = append(b, `""`...)
		return append(b, '}')
	}
	if len(parts) == 1 && parts[0].Type == PartText {
		b = appendJSONText(b, parts[0].Text, parts[0].textForm)
		return append(b, '}')
	}
	b = append(b, '[')
	start := len(b)
	for _, p := range parts {
		mark := len(b)
		if len(b) > start {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = e.appendContentPart(b, p); !ok {
			b = b[:mark]
		}
	}
	if len(b) == start {
		// Nothing could be sent; keep the turn so roles still alternate.
		b = b[:start-1]
		b = append(b, `""`...)
		return append(b, '}')
	}
	return append(b, "]}"...)
}

// appendContentPart appends one user content part; ok is false when the
// part cannot be expressed (the reason is recorded).
func (e *oaiRequestEncoder) appendContentPart(b []byte, p *Part) ([]byte, bool) {
	switch p.Type {
	case PartText:
		b = append(b, `{"type":"text","text":`...)
		b = appendJSONText(b, p.Text, p.textForm)
		return append(b, '}'), true
	case PartImage:
		m := p.Media
		switch {
		case m == nil:
			return b, false
		case m.Data != "":
			b = append(b, `{"type":"image_url","image_url":{"url":`...)
			b = oaiAppendDataURL(b, m.MediaType, m.Data)
		case m.URL != "":
			b = append(b, `{"type":"image_url","image_url":{"url":`...)
			b = appendJSONString(b, m.URL)
		default:
			e.req.Drop("image.file_id", "openai_chat image parts take a URL or inline data only")
			return b, false
		}
		if m.Detail != "" {
			b = append(b, `,"detail":`...)
			b = appendJSONString(b, m.Detail)
		}
		return append(b, "}}"...), true
	case PartDocument:
		return e.appendDocument(b, p.Media)
	}
	return b, false
}

func (e *oaiRequestEncoder) appendDocument(b []byte, m *Media) ([]byte, bool) {
	if m == nil {
		return b, false
	}
	if strings.HasPrefix(m.MediaType, "text/") && m.Data != "" {
		// Chat Completions files are PDFs; a plain-text document is sent
		// as its text.
		text := m.Data
		if raw, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
			text = string(raw)
		}
		if m.Title != "" {
			e.req.Drop("document.title", "plain-text documents are sent as text without their title")
		}
		b = append(b, `{"type":"text","text":`...)
		b = appendJSONString(b, text)
		return append(b, '}'), true
	}
	switch {
	case m.Data != "":
		name := m.Filename
		if name == "" {
			// OpenAI requires a filename with file_data.
			name = m.Title
			if name == "" {
				name = "document"
			}
			if m.MediaType == "application/pdf" && !strings.HasSuffix(strings.ToLower(name), ".pdf") {
				name += ".pdf"
			}
		}
		b = append(b, `{"type":"file","file":{"filename":`...)
		b = appendJSONString(b, name)
		b = append(b, `,"file_data":`...)
		b = oaiAppendDataURL(b, m.MediaType, m.Data)
	case m.FileID != "":
		b = append(b, `{"type":"file","file":{"file_id":`...)
		b = appendJSONString(b, m.FileID)
	default:
		e.req.Drop("document.url", "openai_chat files take inline data or a file id, not a URL")
		return b, false
	}
	return append(b, "}}"...), true
}

// oaiAppendDataURL appends "data:<mediaType>;base64,<data>" as a JSON string
// without building the (possibly megabytes long) URL as a Go string first.
func oaiAppendDataURL(b []byte, mediaType, data string) []byte {
	b = appendJSONString(b, "data:"+mediaType+";base64,")
	return oaiExtendJSONString(b, data)
}

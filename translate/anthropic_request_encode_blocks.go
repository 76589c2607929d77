package translate

import (
	"encoding/base64"
	"strings"

	"github.com/tidwall/gjson"
)

// This file writes the content blocks of the Anthropic request encoder:
// texts, tool calls and results, thinking, images and documents. Texts go
// out through appendJSONText, which copies the escaped form a decoder kept
// rather than escaping the text again.
// appendText appends a text block.
func (e *anthRequestEncoder) appendText(b []byte, p *Part) []byte {
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONText(b, p.Text, p.textForm)
	return anthAppendCacheControl(b, p.CacheControl)
}

// anthAppendCacheControl appends ,"cache_control":… and the closing brace
// of a block.
func anthAppendCacheControl(b []byte, cc []byte) []byte {
	if len(cc) > 0 {
		b = append(b, `,"cache_control":`...)
		b = append(b, cc...)
	}
	return append(b, '}')
}

func (e *anthRequestEncoder) appendTurn(b []byte, t *anthTurn) []byte {
	if t.role == RoleAssistant {
		b = append(b, `{"role":"assistant","content":[`...)
	} else {
		b = append(b, `{"role":"user","content":[`...)
	}
	start := len(b)
	if t.role == RoleUser {
		// Anthropic wants the tool results first in their user turn, and
		// any other content after them.
		for _, p := range t.parts {
			if p.Type == PartToolResult {
				if len(b) > start {
					b = append(b, ',')
				}
				b = e.appendToolResult(b, p)
			}
		}
	}
	for _, p := range t.parts {
		if t.role == RoleUser && p.Type == PartToolResult {
			continue
		}
		if len(b) > start {
			b = append(b, ',')
		}
		b = e.appendPart(b, p)
	}
	return append(b, "]}"...)
}

// appendPart appends one content block; keep has accepted p.
func (e *anthRequestEncoder) appendPart(b []byte, p *Part) []byte {
	switch p.Type {
	case PartText:
		return e.appendText(b, p)
	case PartImage, PartDocument:
		return e.appendMedia(b, p)
	case PartToolCall:
		tc := p.ToolCall
		id := tc.ID
		if id == "" {
			id = newID("toolu_")
		}
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, tc.Name)
		b = append(b, `,"input":`...)
		b = anthAppendToolInput(b, tc.Arguments, e.req)
		return anthAppendCacheControl(b, p.CacheControl)
	case PartToolResult:
		return e.appendToolResult(b, p)
	case PartThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendJSONText(b, p.Text, p.textForm)
		b = append(b, `,"signature":`...)
		b = appendJSONString(b, p.Signature)
		return append(b, '}')
	case PartRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendJSONString(b, p.Signature)
		return append(b, '}')
	case PartServerToolCall, PartServerToolResult:
		return appendAnthServerToolBlock(b, p)
	}
	return b
}

// anthAppendToolInput appends a tool call's arguments as the JSON object
// Anthropic's input must be. Arguments that are not an object (a model
// produced broken JSON, or a bare value) are wrapped as {"_raw":"…"} rather
// than lost; req, when not nil, records it.
func anthAppendToolInput(b []byte, args string, req *Request) []byte {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return append(b, "{}"...)
	}
	if trimmed[0] == '{' && gjson.Valid(trimmed) {
		return append(b, trimmed...)
	}
	if req != nil {
		req.Drop("tool_use.input", `arguments were not a JSON object; sent as {"_raw": "<text>"}`)
	}
	b = append(b, `{"_raw":`...)
	b = appendJSONString(b, args)
	return append(b, '}')
}

func (e *anthRequestEncoder) appendToolResult(b []byte, p *Part) []byte {
	tr := p.ToolResult
	b = append(b, `{"type":"tool_result","tool_use_id":`...)
	b = appendJSONString(b, tr.CallID)
	n := 0
	for i := range tr.Content {
		c := &tr.Content[i]
		switch c.Type {
		case PartText:
			if c.Text == "" {
				continue
			}
		case PartImage, PartDocument:
			if !e.mediaOK(c) {
				continue
			}
		default:
			e.req.Drop("tool_result.content", string(c.Type)+" content in a tool result is not supported by Anthropic")
			continue
		}
		if n == 0 {
			b = append(b, `,"content":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = e.appendPart(b, c)
	}
	if n > 0 {
		b = append(b, ']')
	}
	if tr.IsError {
		b = append(b, `,"is_error":true`...)
	}
	return anthAppendCacheControl(b, p.CacheControl)
}

// appendMedia appends an image or document block; mediaOK has accepted p.
func (e *anthRequestEncoder) appendMedia(b []byte, p *Part) []byte {
	m := p.Media
	if p.Type == PartImage {
		b = append(b, `{"type":"image","source":`...)
	} else {
		b = append(b, `{"type":"document","source":`...)
	}
	data, mediaType := m.Data, m.MediaType
	if data == "" && strings.HasPrefix(m.URL, "data:") {
		mediaType, data, _ = anthSplitDataURL(m.URL)
	}
	switch {
	case data != "" && p.Type == PartImage:
		if mediaType == "" {
			mediaType = anthSniffImageType(data)
		}
		b = append(b, `{"type":"base64","media_type":`...)
		b = appendJSONString(b, mediaType)
		b = append(b, `,"data":`...)
		b = appendJSONString(b, data)
		b = append(b, '}')
	case data != "" && strings.HasPrefix(mediaType, "text/"):
		text, _ := base64.StdEncoding.DecodeString(data)
		b = append(b, `{"type":"text","media_type":"text/plain","data":`...)
		b = appendJSONString(b, string(text))
		b = append(b, '}')
	case data != "":
		b = append(b, `{"type":"base64","media_type":"application/pdf","data":`...)
		b = appendJSONString(b, data)
		b = append(b, '}')
	default:
		b = append(b, `{"type":"url","url":`...)
		b = appendJSONString(b, m.URL)
		b = append(b, '}')
	}
	if p.Type == PartDocument {
		title := m.Title
		if title == "" {
			title = m.Filename
		}
		if title != "" {
			b = append(b, `,"title":`...)
			b = appendJSONString(b, title)
		}
	}
	return anthAppendCacheControl(b, p.CacheControl)
}

package translate

import (
	"encoding/base64"
	"fmt"
)

// The messages and content blocks of an Anthropic request. An object's
// members are collected first (the last of a repeated member wins, and a
// block's meaning depends on its type, which may come last), then the
// object is decoded. Block arrays, where nearly all of a request lies, are
// decoded as they are read rather than collected and walked again: a
// message's content, and a tool_result's content once its type is known.
// When the member turns out not to be used (repeated, or the block's type
// changes), what was decoded is forgotten and the member that is used is
// decoded again; only hand-made requests get there.

// anthBlockContext says where a content block array sits: blocks allowed in
// a message differ from those allowed inside a tool_result.
type anthBlockContext uint8

const (
	anthInMessage anthBlockContext = iota
	anthInToolResult
)

// anthContent is a content member as it was read: its value and, for an
// array decoded as it was read, what it decoded to.
type anthContent struct {
	span  jsonSpan
	text  string   // a string's text
	form  jsonForm // and its form
	eager bool     // parts and err hold the decoded array
	parts []Part   // with eager
	err   *Error   // with eager: the array's error, reported when it is used
	drops int      // with eager: len(req.Dropped) before the array was decoded
}

// readContent reads the content member whose value starts at m.i into c,
// decoding it at once (as blocks in where) when it is an array and decode
// is set. It returns only syntax errors: an error in the array is kept in
// c until the content is used.
func (d *anthRequestDecoder) readContent(m *jsonMembers, c *anthContent, path anthPath, where anthBlockContext, decode bool) *Error {
	d.forget(c) // a repeated member replaces the one before
	if m.peek() == jsonString {
		var ok bool
		if c.span, c.text, c.form, ok = d.textAt(m); !ok {
			return errAnthSyntax
		}
		return nil
	}
	if !decode || m.peek() != jsonArray {
		sp, ok := m.value()
		if !ok {
			return errAnthSyntax
		}
		c.span = sp
		return nil
	}
	start := m.i
	c.drops = len(d.req.Dropped)
	parts, end, err := d.blocks(path, start, where)
	if err == errAnthSyntax {
		return err
	}
	if err != nil {
		// Decoding stopped at the error; the array still has to be read
		// through to go on.
		var ok bool
		if end, ok = jsonSkipContainer(d.body, start); !ok {
			return errAnthSyntax
		}
	}
	c.span = jsonSpan{start: start, end: end, kind: jsonArray}
	c.eager, c.parts, c.err = true, parts, err
	m.i = end
	return nil
}

// forget discards what c decoded, with the Drop notes it recorded: the
// member was replaced or is not used.
func (d *anthRequestDecoder) forget(c *anthContent) {
	if c.eager {
		d.req.Dropped = d.req.Dropped[:c.drops]
		if c.drops == 0 {
			d.req.Dropped = nil
		}
		*c = anthContent{}
	}
}

// contentBlocks returns the blocks of the array content c, decoding them
// now unless they were decoded as they were read.
func (d *anthRequestDecoder) contentBlocks(c *anthContent, path anthPath, where anthBlockContext) ([]Part, *Error) {
	if c.eager {
		return c.parts, c.err
	}
	parts, _, err := d.blocks(path, c.span.start, where)
	return parts, err
}

// messages decodes the messages array; a is at its first element. It
// returns the index after the array.
func (d *anthRequestDecoder) messages(a *jsonElements) (int, *Error) {
	for i := 0; ; i++ {
		end, err := d.message(i, a.i)
		if err != nil {
			return 0, err
		}
		a.i = end
		if !a.next() {
			break
		}
	}
	if a.bad {
		return 0, errAnthSyntax
	}
	return a.i, nil
}

// message decodes the message at d.body[at] and returns the index after it.
func (d *anthRequestDecoder) message(i, at int) (int, *Error) {
	path := anthPath{}.key("messages").index(i)
	if d.body[at] != '{' {
		return 0, path.bad("must be an object")
	}
	var role jsonSpan
	var content anthContent
	d.toolRef = false
	m := jsonOpenObject(d.body, at)
	for {
		name, esc, ok := m.next()
		if !ok {
			break
		}
		switch d.key(name, esc) {
		case "role":
			if role, ok = m.value(); !ok {
				return 0, errAnthSyntax
			}
		case "content":
			if err := d.readContent(&m, &content, path.key("content"), anthInMessage, true); err != nil {
				return 0, err
			}
		default:
			if _, ok := m.value(); !ok {
				return 0, errAnthSyntax
			}
		}
	}
	if m.bad {
		return 0, errAnthSyntax
	}
	msg := Message{}
	switch r := d.str(role); r {
	case "user":
		msg.Role = RoleUser
	case "assistant":
		msg.Role = RoleAssistant
	case "system":
		// A beta mid-conversation system message (Claude Code sends it,
		// sometimes last).
		msg.Role = RoleSystem
	default:
		at := path.key("role")
		if r == "" {
			return 0, at.bad("a role is required: user or assistant")
		}
		return 0, at.bad(fmt.Sprintf("unknown role %q: user or assistant", r))
	}
	switch content.span.kind {
	case jsonString:
		msg.Parts = d.text1(content.text, content.form)
	case jsonArray:
		parts, err := d.contentBlocks(&content, path.key("content"), anthInMessage)
		if err != nil {
			return 0, err
		}
		msg.Parts = parts
	default:
		cpath := path.key("content")
		return 0, cpath.bad("must be a string or an array of content blocks")
	}
	if msg.Role == RoleSystem {
		msg.Parts = d.textOnly(msg.Parts, "messages.content")
	}
	if content.span.kind == jsonArray && (msg.Role == RoleSystem || msg.Role == RoleUser && d.toolRef) {
		// Blocks that may change the tools (tool_changes.go).
		tc := d.toolChanges()
		tc.messages = append(tc.messages, toolChangeMessage{index: i, role: msg.Role, start: content.span.start, end: content.span.end})
	}
	d.req.Messages = append(d.req.Messages, msg)
	return m.i, nil
}

// textOnly keeps the text parts of a system prompt.
func (d *anthRequestDecoder) textOnly(parts []Part, field string) []Part {
	out := parts[:0]
	for _, p := range parts {
		if p.Type == PartText {
			out = append(out, p)
		} else {
			d.req.Drop(field, string(p.Type)+" content in a system prompt is not translated")
		}
	}
	return out
}

// blocks decodes the array of content blocks at d.body[at] and returns the
// index after it (when there is no error).
func (d *anthRequestDecoder) blocks(path anthPath, at int, where anthBlockContext) ([]Part, int, *Error) {
	// Tool results and content documents nest block arrays; a hostile
	// body nesting them a million deep must not exhaust the stack.
	if d.depth >= anthMaxBlockDepth {
		return nil, 0, path.bad("content blocks nested too deeply")
	}
	scratch := &d.partScratch[d.depth]
	d.depth++
	defer func() { d.depth-- }()
	parts := (*scratch)[:0]
	a := jsonOpenArray(d.body, at)
	for i := 0; a.next(); i++ {
		bpath := path.index(i)
		if a.peek() != jsonObject {
			return parts, 0, bpath.bad("content block must be an object")
		}
		var err *Error
		if parts, a.i, err = d.blockAt(parts, &bpath, a.i, where); err != nil {
			return parts, 0, err
		}
	}
	if a.bad {
		return nil, 0, errAnthSyntax
	}
	*scratch = parts[:0]
	return d.carve(parts), a.i, nil
}

// blocksOf decodes the blocks of a content document's content, which
// gjson's ForEach walked whatever it was: an array's elements, an object's
// member values, a scalar as a single block.
func (d *anthRequestDecoder) blocksOf(path anthPath, sp jsonSpan, where anthBlockContext) ([]Part, *Error) {
	if sp.kind == jsonArray {
		parts, _, err := d.blocks(path, sp.start, where)
		return parts, err
	}
	if d.depth >= anthMaxBlockDepth {
		return nil, path.bad("content blocks nested too deeply")
	}
	switch sp.kind {
	case jsonAbsent:
		return nil, nil
	case jsonObject:
		d.depth++
		defer func() { d.depth-- }()
		var parts []Part
		o := jsonOpenObject(d.body, sp.start)
		for i := 0; ; i++ {
			if _, _, ok := o.next(); !ok {
				break
			}
			bpath := path.index(i)
			if o.peek() != jsonObject {
				return parts, bpath.bad("content block must be an object")
			}
			var err *Error
			if parts, o.i, err = d.blockAt(parts, &bpath, o.i, where); err != nil {
				return parts, err
			}
		}
		return parts, nil
	}
	p := path.index(0)
	return nil, p.bad("content block must be an object")
}

// anthBlock holds the members of one content block object.
type anthBlock struct {
	typ, text, source, cacheControl, citations jsonSpan
	id, name, input, toolUseID, isError        jsonSpan
	thinking, signature, data, title, context  jsonSpan
	src                                        anthSource // source's members when it is an object
	content                                    anthContent
	textStr                                    string   // with a string text: its text
	textForm                                   jsonForm // and its form
}

// anthSource holds the members of an image or document source. The
// decoder read them with gjson's Get (the first of a repeated member) in
// one place and ForEach (the last) in another; both are kept.
type anthSource struct {
	firstType, typ, mediaType, data, url, fileID, firstContent jsonSpan
}

// blockAt reads the block object at d.body[at], appends what it decodes
// to, and returns the index after it.
func (d *anthRequestDecoder) blockAt(parts []Part, path *anthPath, at int, where anthBlockContext) ([]Part, int, *Error) {
	var f anthBlock
	m := jsonOpenObject(d.body, at)
	for {
		name, esc, ok := m.next()
		if !ok {
			break
		}
		var dst *jsonSpan
		switch d.key(name, esc) {
		case "type":
			dst = &f.typ
		case "text":
			if m.peek() == jsonString {
				var ok bool
				if f.text, f.textStr, f.textForm, ok = d.textAt(&m); !ok {
					return parts, 0, errAnthSyntax
				}
				continue
			}
			dst = &f.text
		case "source":
			if m.peek() == jsonObject {
				start := m.i
				if !d.readSource(&m, &f.src) {
					return parts, 0, errAnthSyntax
				}
				f.source = jsonSpan{start: start, end: m.i, kind: jsonObject}
				continue
			}
			f.src = anthSource{}
			dst = &f.source
		case "cache_control":
			dst = &f.cacheControl
		case "citations":
			dst = &f.citations
		case "id":
			dst = &f.id
		case "name":
			dst = &f.name
		case "input":
			dst = &f.input
		case "tool_use_id":
			dst = &f.toolUseID
		case "content":
			decode := where == anthInMessage && d.isToolResult(f.typ)
			if err := d.readContent(&m, &f.content, path.key("content"), anthInToolResult, decode); err != nil {
				return parts, 0, err
			}
			continue
		case "is_error":
			dst = &f.isError
		case "thinking":
			dst = &f.thinking
		case "signature":
			dst = &f.signature
		case "data":
			dst = &f.data
		case "title":
			dst = &f.title
		case "context":
			dst = &f.context
		}
		sp, ok := m.value()
		if !ok {
			return parts, 0, errAnthSyntax
		}
		if dst != nil {
			*dst = sp
		}
	}
	if m.bad {
		return parts, 0, errAnthSyntax
	}
	if where == anthInMessage && f.typ.kind == jsonString && anthIsServerToolBlock(d.str(f.typ)) {
		return d.serverToolBlock(parts, at, m.i), m.i, nil // anthropic_server_tool_blocks.go
	}
	parts, err := d.block(parts, path, &f, where)
	return parts, m.i, err
}

// readSource reads the source object at m.i into s and moves m past it.
// It is false on a syntax error.
func (d *anthRequestDecoder) readSource(m *jsonMembers, s *anthSource) bool {
	*s = anthSource{}
	o := jsonOpenObject(d.body, m.i)
	for {
		name, esc, ok := o.next()
		if !ok {
			break
		}
		sp, ok := o.value()
		if !ok {
			return false
		}
		switch d.key(name, esc) {
		case "type":
			if s.firstType.kind == jsonAbsent {
				s.firstType = sp
			}
			s.typ = sp
		case "media_type":
			s.mediaType = sp
		case "data":
			s.data = sp
		case "url":
			s.url = sp
		case "file_id":
			s.fileID = sp
		case "content":
			if s.firstContent.kind == jsonAbsent {
				s.firstContent = sp
			}
		}
	}
	if o.bad {
		return false
	}
	m.i = o.i
	return true
}

// block appends the parts one content block decodes to.
func (d *anthRequestDecoder) block(parts []Part, path *anthPath, f *anthBlock, where anthBlockContext) ([]Part, *Error) {
	req := d.req
	typ := d.gstr(f.typ)
	if typ != "tool_result" {
		d.forget(&f.content)
	}
	switch typ {
	case "tool_addition", "tool_removal", "tool_reference":
		// Changes of the tools in force (tool_changes.go).
		d.toolChanges().changes = true
		d.toolRef = d.toolRef || typ == "tool_reference" && where == anthInToolResult
	}
	if where == anthInToolResult {
		switch typ {
		case "text", "image", "document":
		default:
			req.Drop("messages.content.tool_result.content", "block type "+typ+" is not translated")
			return parts, nil
		}
	}
	switch typ {
	case "text":
		if f.citations.kind == jsonArray && !d.emptyArray(f.citations) {
			req.Drop("messages.content.citations", "citations are not translated")
		}
		s, form := f.textStr, f.textForm
		if f.text.kind != jsonString {
			s, form = d.gstr(f.text), jsonForm{}
		}
		return append(parts, Part{Type: PartText, Text: s, textForm: form, CacheControl: d.raw(f.cacheControl)}), nil

	case "image":
		m := d.media("image", &f.src)
		if m == nil {
			return parts, nil
		}
		return append(parts, Part{Type: PartImage, Media: m, CacheControl: d.raw(f.cacheControl)}), nil

	case "document":
		return d.document(parts, path, f)

	case "tool_use":
		if f.id.kind != jsonString || f.id.start == f.id.end {
			p := path.key("id")
			return parts, p.bad("tool_use requires an id")
		}
		if f.name.kind != jsonString || f.name.start == f.name.end {
			p := path.key("name")
			return parts, p.bad("tool_use requires a name")
		}
		args := "{}"
		if f.input.kind != jsonAbsent && f.input.kind != jsonNull {
			// The raw text, untouched: Arguments is JSON text.
			args = d.rawString(f.input)
		}
		call := d.newToolCall()
		call.ID, call.Name, call.Arguments = d.str(f.id), d.str(f.name), args
		return append(parts, Part{Type: PartToolCall, ToolCall: call, CacheControl: d.raw(f.cacheControl)}), nil

	case "tool_result":
		if f.toolUseID.kind != jsonString || f.toolUseID.start == f.toolUseID.end {
			p := path.key("tool_use_id")
			return parts, p.bad("tool_result requires a tool_use_id")
		}
		tr := d.newToolResult()
		tr.CallID, tr.IsError = d.str(f.toolUseID), f.isError.kind == jsonBool && d.body[f.isError.start] == 't'
		switch f.content.span.kind {
		case jsonString:
			if c := &f.content; c.text != "" {
				tr.Content = d.text1(c.text, c.form)
			}
		case jsonArray:
			content, err := d.contentBlocks(&f.content, path.key("content"), anthInToolResult)
			if err != nil {
				return parts, err
			}
			tr.Content = content
		}
		return append(parts, Part{Type: PartToolResult, ToolResult: tr, CacheControl: d.raw(f.cacheControl)}), nil

	case "thinking":
		return append(parts, Part{Type: PartThinking, Text: d.gstr(f.thinking), Signature: d.gstr(f.signature)}), nil

	case "redacted_thinking":
		return append(parts, Part{Type: PartRedactedThinking, Signature: d.gstr(f.data)}), nil

	case "compaction":
		// The summary of what precedes it (context_edits.go): the last
		// one with a summary counts; one whose content is null (a
		// compaction that failed) changes nothing, as on Anthropic's
		// side.
		if where == anthInMessage && f.content.span.kind == jsonString {
			d.contextManagement().Compaction = &CompactionPoint{Message: len(req.Messages), Summary: f.content.text}
		}
		return parts, nil
	}
	// server_tool_use, web_search_tool_result, container_upload, ... and
	// block types newer than this codec.
	if typ == "" {
		typ = "(none)"
	}
	req.Drop("messages.content", "block type "+typ+" is not translated")
	return parts, nil
}

// document decodes a document block: a PDF (base64 or URL), a plain text
// document, or a "content" document whose blocks are flattened into text
// and image parts.
func (d *anthRequestDecoder) document(parts []Part, path *anthPath, f *anthBlock) ([]Part, *Error) {
	req := d.req
	if f.context.kind != jsonAbsent && f.context.kind != jsonNull {
		req.Drop("messages.content.document.context", "not translated")
	}
	if f.citations.kind == jsonObject && d.result(f.citations).Get("enabled").Bool() {
		req.Drop("messages.content.document.citations", "citations are not translated")
	}
	if d.str(f.src.firstType) == "content" {
		content := f.src.firstContent
		req.Drop("messages.content.document.source", "a content document is flattened into its text and image blocks")
		if content.kind == jsonString {
			s, form := d.text(content)
			return append(parts, Part{Type: PartText, Text: s, textForm: form}), nil
		}
		inner, err := d.blocksOf(path.key("source").key("content"), content, anthInToolResult)
		if err != nil {
			return parts, err
		}
		return append(parts, inner...), nil
	}
	m := d.media("document", &f.src)
	if m == nil {
		return parts, nil
	}
	m.Title = d.gstr(f.title)
	return append(parts, Part{Type: PartDocument, Media: m, CacheControl: d.raw(f.cacheControl)}), nil
}

// media decodes an image or document source. It returns nil, with a Drop
// note, for sources the IR cannot carry.
func (d *anthRequestDecoder) media(kind string, s *anthSource) *Media {
	switch d.str(s.typ) {
	case "base64":
		return &Media{MediaType: d.gstr(s.mediaType), Data: d.gstr(s.data)}
	case "url":
		m := &Media{URL: d.gstr(s.url)}
		if kind == "document" {
			m.MediaType = "application/pdf" // URL documents are PDFs
		}
		return m
	case "file":
		return &Media{FileID: d.gstr(s.fileID)}
	case "text":
		if kind == "document" {
			// Media.Data is base64 in the IR whatever the media type, so
			// every codec handles documents alike.
			mt := d.gstr(s.mediaType)
			if mt == "" {
				mt = "text/plain"
			}
			return &Media{MediaType: mt, Data: base64.StdEncoding.EncodeToString([]byte(d.gstr(s.data)))}
		}
	}
	d.req.Drop("messages.content."+kind+".source", "source type "+d.gstr(s.typ)+" is not translated")
	return nil
}

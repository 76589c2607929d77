package translate

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// The input items half of the gjson reference decoder
// (openai_responses_request_decode_ref_test.go).

// items decodes the input items in order.
func (d *respRefDecoder) items(arr gjson.Result) *Error {
	d.leading, d.open = true, -1
	var err *Error
	i := -1
	arr.ForEach(func(_, it gjson.Result) bool {
		i++
		if !it.IsObject() {
			err = respBadRequest(fmt.Sprintf("input[%d]", i), "input[%d]: must be an object", i)
			return false
		}
		err = d.item(it, i)
		return err == nil
	})
	return err
}

func (d *respRefDecoder) item(it gjson.Result, i int) *Error {
	typ := it.Get("type").Str
	if typ == "" && it.Get("role").Exists() {
		typ = "message" // the easy form: {"role":…,"content":…}
	}
	switch typ {
	case "message":
		return d.message(it, i)
	case "function_call":
		name := it.Get("name").Str
		if name == "" {
			return respBadRequest(fmt.Sprintf("input[%d].name", i), "input[%d].name: a function name is required", i)
		}
		d.assistantPart(oaiToolCallPart(d.callID(it), name, it.Get("arguments")))
	case "custom_tool_call":
		name := it.Get("name").Str
		if name == "" {
			return respBadRequest(fmt.Sprintf("input[%d].name", i), "input[%d].name: a tool name is required", i)
		}
		d.assistantPart(Part{Type: PartToolCall, ToolCall: &ToolCall{ID: d.callID(it), Name: name, Arguments: respCustomArguments(it.Get("input").Str)}})
	case "function_call_output", "custom_tool_call_output":
		id := it.Get("call_id").Str
		if id == "" {
			return respBadRequest(fmt.Sprintf("input[%d].call_id", i), "input[%d].call_id: required in %s items", i, typ)
		}
		content, err := d.toolOutput(it.Get("output"), i)
		if err != nil {
			return err
		}
		d.toolResult(Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, Content: content}})
	case "reasoning":
		d.reasoningItem(it)
	case "web_search_call":
		call, result := respServerToolParts(it)
		d.assistantPart(call)
		if result != nil {
			d.assistantPart(*result)
		}
	case "item_reference":
		return respBadRequest(fmt.Sprintf("input[%d]", i), "input[%d]: item_reference needs stored items; louter is stateless, send the items themselves", i)
	case "compaction_trigger":
		return respBadRequest(fmt.Sprintf("input[%d]", i), respCompactionTriggerMessage, i)
	default:
		// file_search_call, local_shell_call, mcp_call,
		// compaction, ...: the record of hosted tools and OpenAI-side
		// features no other backend could read.
		d.req.Drop("input."+typ, "items of hosted tools and OpenAI-side features are not translated")
	}
	return nil
}

// callID is a call item's call_id (what outputs refer to), or a new one
// for a client that sent none.
func (d *respRefDecoder) callID(it gjson.Result) string {
	if id := it.Get("call_id").Str; id != "" {
		return id
	}
	return oaiNewCallID()
}

// assistantPart adds a part the model produced to the assistant message of
// the turn being read, starting one if needed.
func (d *respRefDecoder) assistantPart(p Part) {
	d.leading = false
	if d.open < 0 || d.openRole != RoleAssistant {
		d.req.Messages = append(d.req.Messages, Message{Role: RoleAssistant})
		d.open, d.openRole, d.toolRun = len(d.req.Messages)-1, RoleAssistant, false
	}
	m := &d.req.Messages[d.open]
	m.Parts = append(m.Parts, p)
}

// toolResult adds a tool output to the user message that answers the
// model's calls, starting one if needed.
func (d *respRefDecoder) toolResult(p Part) {
	d.leading = false
	if d.open < 0 || d.openRole != RoleUser || !d.toolRun {
		d.req.Messages = append(d.req.Messages, Message{Role: RoleUser})
		d.open, d.openRole, d.toolRun = len(d.req.Messages)-1, RoleUser, true
	}
	m := &d.req.Messages[d.open]
	m.Parts = append(m.Parts, p)
}

// reasoningItem turns a reasoning item into a thinking part: its summary
// (or raw reasoning) is the text, its encrypted content the signature. An
// item louter made for an Anthropic redacted_thinking block (its id says
// so) becomes that block again.
func (d *respRefDecoder) reasoningItem(it gjson.Result) {
	enc := it.Get("encrypted_content").Str
	if strings.HasPrefix(it.Get("id").Str, respRedactedPrefix) {
		if enc != "" {
			d.assistantPart(Part{Type: PartRedactedThinking, Signature: enc})
		}
		return
	}
	var text strings.Builder
	for _, key := range [...]string{"summary", "content"} {
		it.Get(key).ForEach(func(_, s gjson.Result) bool {
			if t := s.Get("text").Str; t != "" {
				if text.Len() > 0 {
					text.WriteString("\n\n")
				}
				text.WriteString(t)
			}
			return true
		})
		if text.Len() > 0 {
			break // the summary, else the raw reasoning
		}
	}
	if text.Len() == 0 && enc == "" {
		return
	}
	d.assistantPart(Part{Type: PartThinking, Text: text.String(), Signature: enc})
}

// message decodes a message item.
func (d *respRefDecoder) message(it gjson.Result, i int) *Error {
	role := it.Get("role").Str
	path := fmt.Sprintf("input[%d].content", i)
	switch role {
	case "system", "developer":
		parts, err := d.content(it.Get("content"), path, "system")
		if err != nil {
			return err
		}
		if d.leading {
			d.req.System = append(d.req.System, parts...)
		} else if len(parts) > 0 {
			d.req.Messages = append(d.req.Messages, Message{Role: RoleSystem, Parts: parts})
			d.open = -1
		}
	case "user":
		parts, err := d.content(it.Get("content"), path, "user")
		if err != nil {
			return err
		}
		d.leading = false
		if d.open >= 0 && d.openRole == RoleUser {
			// Text sent along with tool outputs, or a second user item of
			// the same turn: one user message, results first.
			m := &d.req.Messages[d.open]
			m.Parts = append(m.Parts, parts...)
			d.toolRun = false
			return nil
		}
		d.req.Messages = append(d.req.Messages, Message{Role: RoleUser, Parts: parts})
		d.open, d.openRole, d.toolRun = len(d.req.Messages)-1, RoleUser, false
	case "assistant":
		parts, err := d.content(it.Get("content"), path, "assistant")
		if err != nil {
			return err
		}
		d.leading = false
		for _, p := range parts {
			d.assistantPart(p)
		}
	case "":
		return respBadRequest(fmt.Sprintf("input[%d].role", i), "input[%d].role: a role is required", i)
	default:
		return respBadRequest(fmt.Sprintf("input[%d].role", i), "input[%d].role: unknown role %q", i, role)
	}
	return nil
}

// content decodes a message's content: a string or an array of parts.
func (d *respRefDecoder) content(c gjson.Result, path, role string) ([]Part, *Error) {
	switch {
	case !c.Exists() || c.Type == gjson.Null:
		return nil, nil
	case c.Type == gjson.String:
		if c.Str == "" {
			return nil, nil
		}
		return []Part{respRefTextPart(c)}, nil
	case !c.IsArray():
		return nil, respBadRequest(path, "%s: must be a string or an array of content parts", path)
	}
	var parts []Part
	var err *Error
	j := -1
	c.ForEach(func(_, p gjson.Result) bool {
		j++
		var part Part
		var ok bool
		part, ok, err = d.contentPart(p, fmt.Sprintf("%s[%d]", path, j), role)
		if ok {
			parts = append(parts, part)
		}
		return err == nil
	})
	return parts, err
}

// contentPart decodes one content part; ok is false for a part that is
// left out (its reason recorded) or empty.
func (d *respRefDecoder) contentPart(p gjson.Result, path, role string) (Part, bool, *Error) {
	switch typ := p.Get("type").Str; typ {
	case "input_text", "output_text", "text", "summary_text", "reasoning_text":
		t := respRefTextPart(p.Get("text"))
		return t, t.Text != "", nil
	case "refusal":
		t := respRefTextPart(p.Get("refusal"))
		return t, t.Text != "", nil
	case "input_image":
		if role == "system" || role == "assistant" {
			break
		}
		return d.image(p, path)
	case "input_file":
		if role == "system" || role == "assistant" {
			break
		}
		return d.file(p)
	case "":
		return Part{}, false, respBadRequest(path+".type", "%s.type: a part type is required", path)
	default:
		d.req.Drop("content."+typ, fmt.Sprintf("%s parts are not supported", typ))
		return Part{}, false, nil
	}
	d.req.Drop("content."+p.Get("type").Str, "only text is carried in "+role+" messages")
	return Part{}, false, nil
}

func (d *respRefDecoder) image(p gjson.Result, path string) (Part, bool, *Error) {
	m := &Media{Detail: p.Get("detail").Str}
	if m.Detail == "auto" {
		m.Detail = "" // the default everywhere
	}
	url := p.Get("image_url").Str
	switch {
	case strings.HasPrefix(url, "data:"):
		mt, data, ok := oaiParseDataURL(url)
		if !ok {
			d.req.Drop("input_image.image_url", "data URLs must be base64-encoded")
			return Part{}, false, nil
		}
		m.MediaType, m.Data = mt, data
	case url != "":
		m.URL = url
	case p.Get("file_id").Str != "":
		m.FileID = p.Get("file_id").Str
	default:
		return Part{}, false, respBadRequest(path+".image_url", "%s: input_image needs image_url or file_id", path)
	}
	return Part{Type: PartImage, Media: m}, true, nil
}

func (d *respRefDecoder) file(p gjson.Result) (Part, bool, *Error) {
	m := &Media{Filename: p.Get("filename").Str}
	switch data, id, url := p.Get("file_data").Str, p.Get("file_id").Str, p.Get("file_url").Str; {
	case data != "":
		if mt, payload, ok := oaiParseDataURL(data); ok {
			m.MediaType, m.Data = mt, payload
		} else {
			m.MediaType, m.Data = "application/pdf", data // bare base64: a PDF, as OpenAI assumes
		}
	case id != "":
		m.FileID = id
	case url != "":
		m.URL = url
	default:
		d.req.Drop("input_file", "an input_file part needs file_data, file_id or file_url")
		return Part{}, false, nil
	}
	return Part{Type: PartDocument, Media: m}, true, nil
}

// toolOutput decodes a tool output: a string, or (Codex's custom tools,
// images from view_image) an array of input_text / input_image parts.
func (d *respRefDecoder) toolOutput(o gjson.Result, i int) ([]Part, *Error) {
	switch {
	case o.Type == gjson.String:
		if o.Str == "" {
			return nil, nil
		}
		return []Part{respRefTextPart(o)}, nil
	case o.IsArray():
		return d.content(o, fmt.Sprintf("input[%d].output", i), "tool")
	case !o.Exists() || o.Type == gjson.Null:
		return nil, nil
	}
	// An object: pass its JSON on as text rather than lose it.
	return []Part{{Type: PartText, Text: o.Raw}}, nil
}

// respText reads a string's text and the escaped form it was read from
// (see jsonForm): r.Raw is a view of the body, as the body is parsed in
// place. Other kinds read "" and no form, as Result.Str.
func respRefText(r gjson.Result) (string, jsonForm) {
	if r.Type != gjson.String || len(r.Raw) < 2 {
		return r.Str, jsonForm{}
	}
	esc := r.Raw[1 : len(r.Raw)-1]
	return r.Str, newJSONForm(r.Str, unsafe.Slice(unsafe.StringData(esc), len(esc)))
}

// respTextPart makes a text part of a string value, with its form.
func respRefTextPart(r gjson.Result) Part {
	p := Part{Type: PartText}
	p.Text, p.textForm = respRefText(r)
	return p
}

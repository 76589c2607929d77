package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// This file keeps the gjson decoder of Responses requests that the
// single-pass decoder replaced, as the reference the fuzz test holds the
// new one to.

// respRefDecodeRequest is the gjson decoder's DecodeRequest.
func respRefDecodeRequest(body []byte) (*Request, error) {
	if _, end, ok := jsonScanValue(body, jsonSkipSpace(body, 0)); !ok || !jsonScanTail(body, end) {
		return nil, BadRequest("request body is not valid JSON")
	}
	root := gjson.Parse(oaiView(body, 0, len(body)))
	if !root.IsObject() {
		return nil, BadRequest("request body must be a JSON object")
	}
	d := respRefDecoder{req: &Request{}}
	if err := d.decode(root); err != nil {
		return nil, err
	}
	return d.req, nil
}

// respRefDecoder holds the state of one DecodeRequest call.
type respRefDecoder struct {
	req *Request

	leading bool // still in the run of system messages that opens the input
	// open is where the items of the turn being read go: the assistant
	// message the model's items join, or the user message tool outputs and
	// user text join; -1 when the next item starts a new message.
	open     int
	openRole Role
	// toolRun is whether the open user message holds tool outputs, which
	// later outputs and user text join.
	toolRun bool
}

func (d *respRefDecoder) decode(root gjson.Result) *Error {
	model := root.Get("model")
	if model.Type != gjson.String || model.Str == "" {
		return respBadRequest("model", "model: a model name is required")
	}
	d.req.Model = model.Str

	for _, key := range [...]string{"previous_response_id", "conversation"} {
		if v := root.Get(key); v.Exists() && v.Type != gjson.Null && v.Str != "" {
			return respBadRequest(key, "%s: louter is stateless and stores no responses; send the whole conversation in input (as Codex does with store:false)", key)
		}
	}
	if v := root.Get("background"); v.Type == gjson.True {
		return respBadRequest("background", "background: louter answers requests while they are open; background responses are not supported")
	}

	if in := root.Get("instructions"); in.Type == gjson.String && in.Str != "" {
		d.req.System = append(d.req.System, respRefTextPart(in))
	} else if in.Exists() && in.Type != gjson.Null && in.Type != gjson.String {
		return oaiInvalidType("instructions", wantString, in)
	}

	input := root.Get("input")
	switch {
	case input.Type == gjson.String:
		d.req.Messages = append(d.req.Messages, Message{Role: RoleUser, Parts: []Part{respRefTextPart(input)}})
	case input.IsArray():
		if err := d.items(input); err != nil {
			return err
		}
	case !input.Exists() || input.Type == gjson.Null:
		return respBadRequest("input", "input: field is required")
	default:
		return oaiInvalidType("input", wantStringOrArray, input)
	}

	var err *Error
	root.ForEach(func(k, v gjson.Result) bool {
		err = d.field(k.Str, v)
		return err == nil
	})
	return err
}

// field decodes one top-level member other than those decode reads first.
func (d *respRefDecoder) field(key string, v gjson.Result) *Error {
	req := d.req
	var err *Error
	switch key {
	case "model", "input", "instructions", "previous_response_id", "conversation", "background":
		// Decoded first, in decode.
	case "tools":
		err = d.tools(v)
	case "tool_choice":
		err = d.toolChoice(v)
	case "parallel_tool_calls":
		req.ParallelToolCalls, err = oaiBool(v, key)
	case "max_output_tokens":
		req.MaxTokens, err = oaiMaxTokens(v, key)
	case "temperature":
		req.Temperature, err = oaiFloat(v, key, ruleTemp2)
	case "top_p":
		req.TopP, err = oaiFloat(v, key, ruleUnit)
	case "reasoning":
		err = d.reasoning(v)
	case "text":
		err = d.text(v)
	case "stream":
		var b *bool
		if b, err = oaiBool(v, key); b != nil {
			req.Stream = *b
		}
	case "stream_options":
		// include_obfuscation needs no translation: louter never pads events.
	case "user":
		req.User, err = oaiString(v, key)
	case "store":
		if v.Type == gjson.True {
			req.Drop("store", "louter is stateless and stores no responses")
		}
	case "include":
		v.ForEach(func(_, inc gjson.Result) bool {
			// Encrypted reasoning is always returned when there is any:
			// a stateless client needs it to continue.
			if inc.Str != "reasoning.encrypted_content" {
				req.Drop("include."+inc.Str, "not available from other protocols")
			}
			return true
		})
	case "safety_identifier":
		if req.User == "" && v.Type == gjson.String {
			req.User = v.Str
		}
	default:
		if v.Type == gjson.Null || v.Type == gjson.False {
			break // an explicit default asks for nothing
		}
		reason, known := respDroppedFields[key]
		if !known {
			reason = DropUnknown
		}
		req.Drop(key, reason)
	}
	return err
}

func (d *respRefDecoder) reasoning(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return respBadRequest("reasoning", "reasoning: must be an object")
	}
	effort := v.Get("effort").Str
	summary := v.Get("summary").Str
	if summary == "" {
		summary = v.Get("generate_summary").Str // deprecated name
	}
	if effort == "" && summary == "" {
		return nil
	}
	r := &Reasoning{Mode: ReasoningEnabled, Effort: effort, Display: summary}
	if effort == "none" {
		r.Mode = ReasoningDisabled
	}
	d.req.Reasoning = r
	return nil
}

func (d *respRefDecoder) text(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return respBadRequest("text", "text: must be an object")
	}
	if verb := v.Get("verbosity"); verb.Type == gjson.String && verb.Str != "" {
		d.req.Drop("text.verbosity", "verbosity has no equivalent in other protocols")
	}
	f := v.Get("format")
	if !f.IsObject() {
		return nil
	}
	switch typ := f.Get("type").Str; typ {
	case "text":
	case "json_object":
		d.req.ResponseFormat = &ResponseFormat{Type: typ}
	case "json_schema":
		rf := &ResponseFormat{Type: typ, Name: f.Get("name").Str, Description: f.Get("description").Str}
		if s := f.Get("schema"); s.Exists() && s.Type != gjson.Null {
			rf.Schema = json.RawMessage(s.Raw)
		}
		if s := f.Get("strict"); s.IsBool() {
			b := s.Bool()
			rf.Strict = &b
		}
		d.req.ResponseFormat = rf
	default:
		d.req.Drop("text.format", fmt.Sprintf("type %q is not supported", typ))
	}
	return nil
}

// tools decodes the tool list: function tools as they are, custom tools as
// functions with one string argument, the function and custom tools of a
// namespace flattened into the list; hosted tools are left out.
func (d *respRefDecoder) tools(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return oaiInvalidType("tools", wantArray, v)
	}
	var err *Error
	i := 0
	v.ForEach(func(_, t gjson.Result) bool {
		err = d.tool(t, fmt.Sprintf("tools[%d]", i), true)
		i++
		return err == nil
	})
	return err
}

func (d *respRefDecoder) tool(t gjson.Result, path string, top bool) *Error {
	switch typ := t.Get("type").Str; typ {
	case "function":
		name := t.Get("name")
		if name.Type != gjson.String || name.Str == "" {
			return respBadRequest(path+".name", "%s.name: a function name is required", path)
		}
		tool := Tool{Name: name.Str}
		tool.Description, tool.descForm = respRefText(t.Get("description"))
		if p := t.Get("parameters"); p.Exists() && p.Type != gjson.Null {
			tool.Schema = json.RawMessage(p.Raw)
		}
		if s := t.Get("strict"); s.IsBool() {
			b := s.Bool()
			tool.Strict = &b
		}
		d.req.Tools = append(d.req.Tools, tool)
	case "custom":
		name := t.Get("name")
		if name.Type != gjson.String || name.Str == "" {
			return respBadRequest(path+".name", "%s.name: a tool name is required", path)
		}
		tool := Tool{Name: name.Str, Schema: respCustomSchema(t.Get("format")), Custom: true}
		tool.Description, tool.descForm = respRefText(t.Get("description"))
		d.req.Tools = append(d.req.Tools, tool)
	case "namespace":
		if !top {
			return respBadRequest(path+".type", "%s: namespaces cannot be nested", path)
		}
		var err *Error
		j := 0
		t.Get("tools").ForEach(func(_, inner gjson.Result) bool {
			err = d.tool(inner, fmt.Sprintf("%s.tools[%d]", path, j), false)
			j++
			return err == nil
		})
		if err != nil {
			return err
		}
		d.req.Drop("tools.namespace", "namespaces are flattened: their tools are offered by their own names")
	case "":
		return respBadRequest(path+".type", "%s.type: a tool type is required", path)
	case "web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11":
		if !top {
			d.req.Drop("tools."+typ, "hosted tools run only at OpenAI")
			break
		}
		d.req.ServerTools = append(d.req.ServerTools, respServerTool(typ, path, t.Get("filters"), t.Get("user_location"), t.Get("search_context_size")))
	default:
		// web_search, file_search, code_interpreter, tool_search, mcp,
		// image_generation, computer_use, local_shell, ...: tools OpenAI
		// runs (or that only its models know) which no other backend has.
		d.req.Drop("tools."+typ, "hosted tools run only at OpenAI")
	}
	return nil
}

func (d *respRefDecoder) toolChoice(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
		return nil
	case v.Type == gjson.String:
		switch v.Str {
		case "none":
			d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceNone}
		case "auto":
			d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceAuto}
		case "required":
			d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceRequired}
		default:
			return respBadRequest("tool_choice", "tool_choice: unknown value %q", v.Str)
		}
		return nil
	case !v.IsObject():
		return respBadRequest("tool_choice", "tool_choice: must be a string or an object")
	}
	switch typ := v.Get("type").Str; typ {
	case "web_search", "web_search_preview", "web_search_preview_2025_03_11":
		d.req.ToolChoice = respServerToolChoice()
	case "function", "custom":
		name := v.Get("name").Str
		if name == "" {
			return respBadRequest("tool_choice.name", "tool_choice.name: a tool name is required")
		}
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: name}
	case "allowed_tools":
		tc := &ToolChoice{Mode: ToolChoiceAuto}
		switch mode := v.Get("mode").Str; mode {
		case "", "auto":
		case "required":
			tc.Mode = ToolChoiceRequired
		default:
			return respBadRequest("tool_choice.mode", "tool_choice.mode: unknown value %q", mode)
		}
		v.Get("tools").ForEach(func(_, t gjson.Result) bool {
			if name := t.Get("name").Str; name != "" && (t.Get("type").Str == "function" || t.Get("type").Str == "custom") {
				tc.Allowed = append(tc.Allowed, name)
			} else {
				d.req.Drop("tool_choice.allowed_tools."+t.Get("type").Str, "hosted tools run only at OpenAI")
			}
			return true
		})
		d.req.ToolChoice = tc
	default:
		d.req.Drop("tool_choice."+typ, "hosted tools run only at OpenAI")
	}
	return nil
}

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

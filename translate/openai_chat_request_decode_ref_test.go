package translate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// This file keeps the gjson decoder of OpenAI Chat requests that the
// single-pass decoder replaced, as the reference the fuzz test holds the
// new one to. One change: tool_calls null is no calls (the old decoder
// took it for one call without a name), as in the new decoder.

// oaiRefDecodeRequest is the gjson decoder's DecodeRequest.
//
// OpenAI puts the system prompt in messages; the IR keeps the leading run of
// system and developer messages in Request.System and later ones as
// RoleSystem messages. OpenAI sends one tool message per tool result; the IR
// (like Anthropic) keeps the results of one turn together in a single user
// message, followed by any user text of that turn.
func oaiRefDecodeRequest(body []byte) (*Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, BadRequest("request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, BadRequest("request body must be a JSON object")
	}
	d := oaiRefDecoder{req: &Request{}}
	if err := d.decode(root); err != nil {
		return nil, err
	}
	return d.req, nil
}

// oaiRefDecoder holds the state of one DecodeRequest call.
type oaiRefDecoder struct {
	req *Request

	maxCompletionTokens int
	maxTokens           int
	safetyIdentifier    string

	// pendingFunctions maps a deprecated function_call's name to the id
	// generated for it, so the role "function" message answering it can
	// refer to it.
	pendingFunctions map[string]string
}

func (d *oaiRefDecoder) decode(root gjson.Result) *Error {
	model := root.Get("model")
	if model.Type != gjson.String || model.Str == "" {
		return oaiBadRequest("model", "model: a model name is required")
	}
	d.req.Model = model.Str

	messages := root.Get("messages")
	switch {
	case !messages.Exists() || messages.Type == gjson.Null:
		return oaiBadRequest("messages", "messages: field is required")
	case !messages.IsArray():
		return oaiInvalidType("messages", wantArray, messages)
	}
	if err := d.messages(messages); err != nil {
		return err
	}

	var err *Error
	root.ForEach(func(k, v gjson.Result) bool {
		err = d.field(k.Str, v)
		return err == nil
	})
	if err != nil {
		return err
	}

	if d.maxCompletionTokens > 0 {
		d.req.MaxTokens = d.maxCompletionTokens
	} else if d.maxTokens > 0 {
		d.req.MaxTokens = d.maxTokens
	}
	if d.req.User == "" {
		d.req.User = d.safetyIdentifier
	}
	return nil
}

// field decodes one top-level member other than model and messages.
func (d *oaiRefDecoder) field(key string, v gjson.Result) *Error {
	req := d.req
	var err *Error
	switch key {
	case "model", "messages":
		// Decoded first, in decode.
	case "tools":
		err = d.tools(v)
	case "functions":
		err = d.functions(v)
	case "tool_choice":
		err = d.toolChoice(v)
	case "function_call":
		err = d.functionCallChoice(v)
	case "parallel_tool_calls":
		req.ParallelToolCalls, err = oaiBool(v, key)
	case "max_completion_tokens":
		d.maxCompletionTokens, err = oaiMaxTokens(v, key)
	case "max_tokens":
		d.maxTokens, err = oaiMaxTokens(v, key)
	case "temperature":
		req.Temperature, err = oaiFloat(v, key, ruleTemp2)
	case "top_p":
		req.TopP, err = oaiFloat(v, key, ruleUnit)
	case "presence_penalty":
		req.PresencePenalty, err = oaiFloat(v, key, rulePenalty)
	case "frequency_penalty":
		req.FrequencyPenalty, err = oaiFloat(v, key, rulePenalty)
	case "seed":
		if v.Type == gjson.Null {
			break
		}
		if _, err = oaiNum(key, ruleSeed, v); err != nil {
			return err
		}
		n := v.Int()
		req.Seed = &n
	case "top_k":
		// Not in OpenAI's spec, but vLLM and llama-server accept it and
		// clients of those servers send it (-1: no limit, in vLLM).
		if v.Type == gjson.Null {
			break
		}
		f, err := oaiNum(key, numRule{integer: true, min: -1, max: ruleCount.max}, v)
		if err != nil {
			return err
		}
		if f >= 0 {
			n := int(f)
			req.TopK = &n
		}
	case "n":
		if v.Type == gjson.Null {
			break
		}
		f, err := oaiNum(key, numRule{integer: true, min: 1, max: ruleCount.max}, v)
		if err != nil {
			return err
		}
		if f > 1 {
			return oaiBadRequest(key, "n > 1 is not supported")
		}
	case "stop":
		err = d.stop(v)
	case "response_format":
		err = d.responseFormat(v)
	case "reasoning_effort":
		switch v.Type {
		case gjson.Null:
		case gjson.String:
			r := &Reasoning{Effort: v.Str, Mode: ReasoningEnabled}
			if v.Str == "none" {
				r.Mode = ReasoningDisabled
			}
			req.Reasoning = r
		default:
			return oaiBadRequest(key, "reasoning_effort: must be a string")
		}
	case "stream":
		var b *bool
		if b, err = oaiBool(v, key); b != nil {
			req.Stream = *b
		}
	case "stream_options":
		if v.Type == gjson.Null {
			break
		}
		if !v.IsObject() {
			return oaiBadRequest(key, "stream_options: must be an object")
		}
		req.IncludeUsage = v.Get("include_usage").Type == gjson.True
		// include_obfuscation needs no translation: louter never pads chunks.
	case "user":
		req.User, err = oaiString(v, key)
	case "safety_identifier":
		d.safetyIdentifier, err = oaiString(v, key)
	default:
		if v.Type == gjson.Null || v.Type == gjson.False {
			break // an explicit default asks for nothing
		}
		reason, known := oaiDroppedFields[key]
		if !known {
			reason = DropUnknown
		}
		if key == "modalities" && oaiRefOnlyText(v) {
			break
		}
		req.Drop(key, reason)
	}
	return err
}

// oaiRefOnlyText reports whether a modalities array asks for text only.
func oaiRefOnlyText(v gjson.Result) bool {
	only := true
	v.ForEach(func(_, m gjson.Result) bool {
		only = m.Str == "text"
		return only
	})
	return only
}

func (d *oaiRefDecoder) stop(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
	case v.Type == gjson.String:
		if v.Str != "" {
			d.req.StopSequences = []string{v.Str}
		}
	case v.IsArray():
		var err *Error
		v.ForEach(func(_, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = oaiBadRequest("stop", "stop: must be a string or an array of strings")
				return false
			}
			if s.Str != "" {
				d.req.StopSequences = append(d.req.StopSequences, s.Str)
			}
			return true
		})
		return err
	default:
		return oaiBadRequest("stop", "stop: must be a string or an array of strings")
	}
	return nil
}

func (d *oaiRefDecoder) responseFormat(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return oaiBadRequest("response_format", "response_format: must be an object")
	}
	switch typ := v.Get("type").Str; typ {
	case "text", "json_object":
		d.req.ResponseFormat = &ResponseFormat{Type: typ}
	case "json_schema":
		js := v.Get("json_schema")
		if !js.IsObject() {
			return oaiBadRequest("response_format.json_schema", "response_format.json_schema: must be an object")
		}
		rf := &ResponseFormat{
			Type:        typ,
			Name:        js.Get("name").Str,
			Description: js.Get("description").Str,
		}
		if s := js.Get("schema"); s.Exists() && s.Type != gjson.Null {
			rf.Schema = json.RawMessage(s.Raw)
		}
		if s := js.Get("strict"); s.IsBool() {
			b := s.Bool()
			rf.Strict = &b
		}
		d.req.ResponseFormat = rf
	default:
		d.req.Drop("response_format", fmt.Sprintf("type %q is not supported", typ))
	}
	return nil
}

func (d *oaiRefDecoder) tools(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return oaiInvalidType("tools", wantArray, v)
	}
	var err *Error
	i := 0
	v.ForEach(func(_, t gjson.Result) bool {
		switch typ := t.Get("type").Str; typ {
		case "function":
			err = d.functionTool(t.Get("function"), fmt.Sprintf("tools[%d].function", i))
		case "custom":
			d.req.Drop("tools.custom", "custom (free-form grammar) tools have no equivalent in other protocols")
		default:
			d.req.Drop("tools."+typ, "only function tools are supported")
		}
		i++
		return err == nil
	})
	return err
}

// functions decodes the deprecated top-level functions list.
func (d *oaiRefDecoder) functions(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return oaiInvalidType("functions", wantArray, v)
	}
	var err *Error
	i := 0
	v.ForEach(func(_, f gjson.Result) bool {
		err = d.functionTool(f, fmt.Sprintf("functions[%d]", i))
		i++
		return err == nil
	})
	return err
}

func (d *oaiRefDecoder) functionTool(fn gjson.Result, path string) *Error {
	name := fn.Get("name")
	if name.Type != gjson.String || name.Str == "" {
		return oaiBadRequest(path+".name", "%s.name: a function name is required", path)
	}
	tool := Tool{Name: name.Str, Description: fn.Get("description").Str}
	if p := fn.Get("parameters"); p.Exists() && p.Type != gjson.Null {
		tool.Schema = json.RawMessage(p.Raw)
	}
	if s := fn.Get("strict"); s.IsBool() {
		b := s.Bool()
		tool.Strict = &b
	}
	d.req.Tools = append(d.req.Tools, tool)
	return nil
}

func (d *oaiRefDecoder) toolChoice(v gjson.Result) *Error {
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
			return oaiBadRequest("tool_choice", "tool_choice: unknown value %q", v.Str)
		}
		return nil
	case !v.IsObject():
		return oaiBadRequest("tool_choice", "tool_choice: must be a string or an object")
	}
	switch typ := v.Get("type").Str; typ {
	case "function":
		name := v.Get("function.name").Str
		if name == "" {
			return oaiBadRequest("tool_choice.function.name", "tool_choice.function.name: a function name is required")
		}
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: name}
	case "allowed_tools":
		at := v.Get("allowed_tools")
		tc := &ToolChoice{Mode: ToolChoiceAuto}
		switch mode := at.Get("mode").Str; mode {
		case "", "auto":
		case "required":
			tc.Mode = ToolChoiceRequired
		default:
			return oaiBadRequest("tool_choice.allowed_tools.mode", "tool_choice.allowed_tools.mode: unknown value %q", mode)
		}
		at.Get("tools").ForEach(func(_, t gjson.Result) bool {
			if name := t.Get("function.name").Str; name != "" {
				tc.Allowed = append(tc.Allowed, name)
			} else if t.Get("type").Str == "custom" {
				d.req.Drop("tool_choice.allowed_tools.custom", "custom tools are not supported")
			}
			return true
		})
		d.req.ToolChoice = tc
	case "custom":
		d.req.Drop("tool_choice.custom", "custom tools are not supported")
	default:
		return oaiBadRequest("tool_choice.type", "tool_choice.type: unknown value %q", typ)
	}
	return nil
}

// functionCallChoice decodes the deprecated top-level function_call.
func (d *oaiRefDecoder) functionCallChoice(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
	case v.Type == gjson.String && (v.Str == "none" || v.Str == "auto"):
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceMode(v.Str)}
	case v.IsObject() && v.Get("name").Str != "":
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: v.Get("name").Str}
	default:
		return oaiBadRequest("function_call", "function_call: must be \"none\", \"auto\" or {\"name\": ...}")
	}
	return nil
}

// messages decodes the conversation.
func (d *oaiRefDecoder) messages(arr gjson.Result) *Error {
	req := d.req
	leading := true  // still in the run of system messages that opens the conversation
	toolRun := false // the last IR message holds tool results that later results and user text join
	i := -1
	var err *Error
	arr.ForEach(func(_, m gjson.Result) bool {
		i++
		if !m.IsObject() {
			err = oaiBadRequest(fmt.Sprintf("messages[%d]", i), "messages[%d]: must be an object", i)
			return false
		}
		if name := m.Get("name"); name.Type == gjson.String && name.Str != "" {
			req.Drop("messages.name", "participant names are not translated")
		}
		role := m.Get("role")
		if role.Type != gjson.String || role.Str == "" {
			err = oaiBadRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role: a role is required", i)
			return false
		}
		switch role.Str {
		case "system", "developer":
			var parts []Part
			if parts, err = d.content(m.Get("content"), i, "system"); err != nil {
				return false
			}
			if leading {
				req.System = append(req.System, parts...)
			} else if len(parts) > 0 {
				req.Messages = append(req.Messages, Message{Role: RoleSystem, Parts: parts})
				toolRun = false
			}
		case "user":
			leading = false
			var parts []Part
			if parts, err = d.content(m.Get("content"), i, "user"); err != nil {
				return false
			}
			if toolRun {
				// Text the user sent along with the tool results belongs to
				// the same turn, after the results (Anthropic requires the
				// results first).
				last := &req.Messages[len(req.Messages)-1]
				last.Parts = append(last.Parts, parts...)
				toolRun = false
			} else {
				req.Messages = append(req.Messages, Message{Role: RoleUser, Parts: parts})
			}
		case "assistant":
			leading = false
			var msg Message
			if msg, err = d.assistant(m, i); err != nil {
				return false
			}
			req.Messages = append(req.Messages, msg)
			toolRun = false
		case "tool", "function":
			leading = false
			var part Part
			if part, err = d.toolResult(m, i, role.Str); err != nil {
				return false
			}
			if toolRun {
				last := &req.Messages[len(req.Messages)-1]
				last.Parts = append(last.Parts, part)
			} else {
				req.Messages = append(req.Messages, Message{Role: RoleUser, Parts: []Part{part}})
				toolRun = true
			}
		default:
			err = oaiBadRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role: unknown role %q", i, role.Str)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if i < 0 {
		return oaiBadRequest("messages", "messages: at least one message is required")
	}
	return nil
}

func (d *oaiRefDecoder) assistant(m gjson.Result, i int) (Message, *Error) {
	msg := Message{Role: RoleAssistant}
	if r := oaiReasoningText(m); r != "" {
		// Reasoning comes first, as it did when the model produced it. It
		// has no signature: OpenAI-compatible servers have none.
		msg.Parts = append(msg.Parts, Part{Type: PartThinking, Text: r})
	}
	parts, err := d.content(m.Get("content"), i, "assistant")
	if err != nil {
		return msg, err
	}
	msg.Parts = append(msg.Parts, parts...)
	if r := m.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		msg.Parts = append(msg.Parts, Part{Type: PartText, Text: r.Str})
	}
	calls := m.Get("tool_calls")
	if calls.Type == gjson.Null {
		calls = gjson.Result{}
	}
	if calls.Exists() && calls.Type != gjson.Null && !calls.IsArray() {
		return msg, oaiBadRequest(fmt.Sprintf("messages[%d].tool_calls", i), "messages[%d].tool_calls: must be an array", i)
	}
	j := -1
	var folded []Part // signed thinking carried in the call ids
	calls.ForEach(func(_, tc gjson.Result) bool {
		j++
		if typ := tc.Get("type").Str; typ != "" && typ != "function" {
			d.req.Drop("messages.tool_calls."+typ, "only function tool calls are supported")
			return true
		}
		name := tc.Get("function.name")
		if name.Type != gjson.String || name.Str == "" {
			err = oaiBadRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", i, j),
				"messages[%d].tool_calls[%d].function.name: a function name is required", i, j)
			return false
		}
		id, blocks := oaiUnfoldThinking(tc.Get("id").Str)
		folded = append(folded, blocks...)
		if id == "" {
			id = oaiNewCallID()
		}
		msg.Parts = append(msg.Parts, oaiToolCallPart(id, name.Str, tc.Get("function.arguments")))
		return true
	})
	if err != nil {
		return msg, err
	}
	oaiRestoreThinking(&msg, folded)
	if fc := m.Get("function_call"); fc.IsObject() {
		name := fc.Get("name").Str
		if name == "" {
			return msg, oaiBadRequest(fmt.Sprintf("messages[%d].function_call.name", i),
				"messages[%d].function_call.name: a function name is required", i)
		}
		id := oaiNewCallID()
		if d.pendingFunctions == nil {
			d.pendingFunctions = map[string]string{}
		}
		d.pendingFunctions[name] = id
		msg.Parts = append(msg.Parts, oaiToolCallPart(id, name, fc.Get("arguments")))
	}
	if a := m.Get("audio"); a.Exists() && a.Type != gjson.Null {
		d.req.Drop("messages.audio", "audio replies are not supported")
	}
	return msg, nil
}

// toolResult decodes a tool message, or a message of the deprecated role
// "function", into a tool result part.
func (d *oaiRefDecoder) toolResult(m gjson.Result, i int, role string) (Part, *Error) {
	tr := &ToolResult{}
	if role == "tool" {
		id := m.Get("tool_call_id")
		if id.Type != gjson.String || id.Str == "" {
			return Part{}, oaiBadRequest(fmt.Sprintf("messages[%d].tool_call_id", i),
				"messages[%d].tool_call_id: required in tool messages", i)
		}
		tr.CallID, _ = oaiUnfoldThinking(id.Str)
	} else {
		tr.Name = m.Get("name").Str
		if id, ok := d.pendingFunctions[tr.Name]; ok {
			tr.CallID = id
			delete(d.pendingFunctions, tr.Name)
		} else {
			tr.CallID = oaiNewCallID()
		}
	}
	parts, err := d.content(m.Get("content"), i, "tool")
	if err != nil {
		return Part{}, err
	}
	tr.Content = parts
	return Part{Type: PartToolResult, ToolResult: tr}, nil
}

// content decodes a message's content: a string, an array of parts, or
// null. role says which part types are meaningful: text everywhere, refusal
// for the assistant, images and files for the user (images also for tools,
// which some clients send although OpenAI documents text only).
func (d *oaiRefDecoder) content(c gjson.Result, i int, role string) ([]Part, *Error) {
	switch {
	case !c.Exists() || c.Type == gjson.Null:
		return nil, nil
	case c.Type == gjson.String:
		if c.Str == "" {
			return nil, nil
		}
		return []Part{{Type: PartText, Text: c.Str}}, nil
	case !c.IsArray():
		return nil, oaiBadRequest(fmt.Sprintf("messages[%d].content", i), "messages[%d].content: must be a string or an array of content parts", i)
	}
	var parts []Part
	var err *Error
	j := -1
	c.ForEach(func(_, p gjson.Result) bool {
		j++
		typ := p.Get("type").Str
		switch {
		case typ == "text":
			if t := p.Get("text").Str; t != "" {
				part := Part{Type: PartText, Text: t}
				if cc := p.Get("cache_control"); cc.IsObject() {
					// OpenRouter-style clients mark cache breakpoints on
					// OpenAI parts; keep them for backends that use them.
					part.CacheControl = json.RawMessage(cc.Raw)
				}
				parts = append(parts, part)
			}
		case typ == "refusal" && role == "assistant":
			if t := p.Get("refusal").Str; t != "" {
				parts = append(parts, Part{Type: PartText, Text: t})
			}
		case typ == "image_url" && (role == "user" || role == "tool"):
			var part Part
			var ok bool
			if part, ok, err = d.image(p, i, j); ok {
				parts = append(parts, part)
			}
		case typ == "file" && role == "user":
			if part, ok := d.file(p.Get("file")); ok {
				parts = append(parts, part)
			}
		case typ == "input_audio":
			d.req.Drop("messages.content.input_audio", "audio input is not supported")
		default:
			if typ == "" {
				err = oaiBadRequest(fmt.Sprintf("messages[%d].content[%d].type", i, j), "messages[%d].content[%d].type: a part type is required", i, j)
				return false
			}
			d.req.Drop("messages.content."+typ, fmt.Sprintf("%s parts are not supported in %s messages", typ, role))
		}
		return err == nil
	})
	return parts, err
}

func (d *oaiRefDecoder) image(p gjson.Result, i, j int) (Part, bool, *Error) {
	iu := p.Get("image_url")
	url, detail := iu.Str, ""
	if iu.IsObject() {
		url, detail = iu.Get("url").Str, iu.Get("detail").Str
	}
	if url == "" {
		return Part{}, false, oaiBadRequest(fmt.Sprintf("messages[%d].content[%d].image_url.url", i, j),
			"messages[%d].content[%d].image_url.url: an image URL is required", i, j)
	}
	m := &Media{Detail: detail}
	if strings.HasPrefix(url, "data:") {
		mt, data, ok := oaiParseDataURL(url)
		if !ok {
			d.req.Drop("messages.content.image_url", "data URLs must be base64-encoded")
			return Part{}, false, nil
		}
		m.MediaType, m.Data = mt, data
	} else {
		m.URL = url
	}
	return Part{Type: PartImage, Media: m}, true, nil
}

func (d *oaiRefDecoder) file(f gjson.Result) (Part, bool) {
	m := &Media{Filename: f.Get("filename").Str}
	switch data, id := f.Get("file_data").Str, f.Get("file_id").Str; {
	case data != "":
		if mt, payload, ok := oaiParseDataURL(data); ok {
			m.MediaType, m.Data = mt, payload
		} else {
			// Bare base64. Chat Completions accepts only PDFs as files.
			m.MediaType, m.Data = "application/pdf", data
		}
	case id != "":
		m.FileID = id
	default:
		d.req.Drop("messages.content.file", "a file part needs file_data or file_id")
		return Part{}, false
	}
	return Part{Type: PartDocument, Media: m}, true
}

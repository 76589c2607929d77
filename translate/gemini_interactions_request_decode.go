package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// DecodeRequest implements Codec. It parses a create-interaction request
// (POST /v1beta/interactions) into the IR: model, system_instruction,
// input (a string, one content block, a list of content blocks, or a list
// of steps), function tools, generation_config and response_format.
//
// A request for an agent (agent, agent_config) is refused: agents run at
// Google only, and louter routes models. So is every request that needs
// stored state that was not resolved before (see interactionsNeedsStore). Built-in tools (google_search,
// code_execution, ...) run only at Google and are left out, recorded with
// Request.Drop; so are the members that have no equivalent elsewhere.
func (interactionsCodec) DecodeRequest(body []byte) (*Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, interactionsBadRequest("", "request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, interactionsBadRequest("", "request body must be a JSON object")
	}
	d := interactionsRequestDecoder{req: &Request{}}
	if err := d.decode(root); err != nil {
		return nil, err
	}
	return d.req, nil
}

// interactionsRequestDecoder holds the state of one DecodeRequest call.
type interactionsRequestDecoder struct {
	req *Request
	// open is the index in req.Messages of the message the next step
	// joins when it has the same role; -1 when the next step starts one.
	open int
}

// interactionsDroppedFields are request members with no equivalent
// elsewhere, with the reason recorded when a request uses them.
var interactionsDroppedFields = map[string]string{
	"safety_settings": "safety settings are specific to Gemini",
	"labels":          "billing labels are specific to Gemini",
	"service_tier":    "service tiers are provider-specific",
	"cached_content":  "Gemini cached contents have no equivalent",
	"webhook_config":  "louter answers while the request is open and calls no webhook",
	"environment":     "agent environments exist only at Google",
}

// interactionsNeedsStore is the refusal of a request that needs a stored
// interaction: key is the member that asks for one. The codec keeps no
// state: a server that stores interactions (louter's caddy module, with
// stored_responses on) resolves previous_interaction_id before decoding
// (the stored steps are put in front of input) and keeps the answer of a
// store:true request, taking both members out of the body. A request that
// still has them here was sent where nothing is stored.
func interactionsNeedsStore(key string) *Error {
	return interactionsBadRequest(key, "%s: interactions are not stored here (louter's stored_responses are disabled); send store:false and the whole conversation in input (user_input, model_output, thought, function_call and function_result steps)", key)
}

func (d *interactionsRequestDecoder) decode(root gjson.Result) *Error {
	req := d.req
	d.open = -1
	var model, agent, input gjson.Result
	var err *Error
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			model = v
		case "agent", "agent_config":
			if v.Type != gjson.Null {
				agent = k
			}
		case "input":
			input = v
		case "system_instruction":
			err = d.system(v)
		case "tools":
			err = d.tools(v)
		case "generation_config":
			err = d.generationConfig(v)
		case "response_format":
			err = d.responseFormat("response_format", v)
		case "response_mime_type":
			err = d.responseMimeType(v)
		case "response_modalities":
			err = d.responseModalities(v)
		case "stream":
			switch v.Type {
			case gjson.True:
				req.Stream = true
			case gjson.False, gjson.Null:
			default:
				err = interactionsInvalidType("stream", "a boolean", v)
			}
		case "store":
			switch v.Type {
			case gjson.True:
				err = interactionsNeedsStore("store")
			case gjson.False, gjson.Null:
			default:
				err = interactionsInvalidType("store", "a boolean", v)
			}
		case "previous_interaction_id", "continuation_token":
			switch {
			case v.Type == gjson.String && v.Str != "":
				err = interactionsNeedsStore(k.Str)
			case v.Type != gjson.Null && v.Type != gjson.String:
				err = interactionsInvalidType(k.Str, "a string", v)
			}
		case "background":
			if v.Type == gjson.True {
				err = interactionsBadRequest("background", "background: louter answers requests while they are open; background interactions are not supported")
			}
		default:
			if reason, ok := interactionsDroppedFields[k.Str]; ok {
				if v.Type != gjson.Null {
					req.Drop(k.Str, reason)
				}
			} else {
				req.Drop(k.Str, DropUnknown)
			}
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	switch {
	case agent.Exists():
		return interactionsBadRequest(agent.Str, "%s: agents run only at Google; louter routes models, so name one in model", agent.Str)
	case model.Type != gjson.String || model.Str == "":
		if model.Exists() && model.Type != gjson.Null && model.Type != gjson.String {
			return interactionsInvalidType("model", "a string", model)
		}
		return interactionsBadRequest("model", "model: a model name is required")
	}
	req.Model = geminiModelName(model.Str)
	if err := d.input(input); err != nil {
		return err
	}
	if len(req.Messages) == 0 {
		return interactionsBadRequest("input", "input: the request has no input")
	}
	return nil
}

// system reads system_instruction: a string (the API's form), or, as
// generateContent takes it, content blocks whose text forms the prompt.
func (d *interactionsRequestDecoder) system(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
	case v.Type == gjson.String:
		if v.Str != "" {
			d.req.System = append(d.req.System, Part{Type: PartText, Text: v.Str})
		}
	default:
		parts, err := d.contents("system_instruction", v)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if p.Type != PartText {
				return interactionsBadRequest("system_instruction", "system_instruction: only text is allowed")
			}
		}
		d.req.System = append(d.req.System, parts...)
	}
	return nil
}

// interactionsContentTypes are the content block types; anything else in
// input is a step.
var interactionsContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "document": true, "video": true}

// input reads input: a string, a content block, a list of content blocks
// (one user turn), or a list of steps (a conversation).
func (d *interactionsRequestDecoder) input(v gjson.Result) *Error {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return interactionsBadRequest("input", "input: field is required")
	case v.Type == gjson.String:
		d.add(RoleUser, Part{Type: PartText, Text: v.Str})
		return nil
	case v.IsObject():
		parts, err := d.contents("input", v)
		if err != nil {
			return err
		}
		d.add(RoleUser, parts...)
		return nil
	case !v.IsArray():
		return interactionsInvalidType("input", "a string, an object or an array", v)
	}
	items := v.Array()
	steps := false
	for _, it := range items {
		if t := it.Get("type"); t.Type == gjson.String && !interactionsContentTypes[t.Str] {
			steps = true
			break
		}
	}
	if !steps {
		parts, err := d.contents("input", v)
		if err != nil {
			return err
		}
		d.add(RoleUser, parts...)
		return nil
	}
	for i, it := range items {
		if err := d.step("input["+strconv.Itoa(i)+"]", it); err != nil {
			return err
		}
	}
	return nil
}

// add appends parts to the conversation as role's: to the open message
// when it is role's, else as a new message.
func (d *interactionsRequestDecoder) add(role Role, parts ...Part) {
	if len(parts) == 0 {
		return
	}
	msgs := d.req.Messages
	if d.open >= 0 && msgs[d.open].Role == role {
		msgs[d.open].Parts = append(msgs[d.open].Parts, parts...)
		return
	}
	d.req.Messages = append(msgs, Message{Role: role, Parts: parts})
	d.open = len(d.req.Messages) - 1
}

// step reads one step of a conversation.
func (d *interactionsRequestDecoder) step(path string, s gjson.Result) *Error {
	if !s.IsObject() {
		return interactionsInvalidType(path, "a step object", s)
	}
	typ := s.Get("type")
	switch typ.Str {
	case "user_input":
		parts, err := d.stepContent(path, s.Get("content"))
		if err != nil {
			return err
		}
		d.add(RoleUser, parts...)
	case "model_output":
		parts, err := d.stepContent(path, s.Get("content"))
		if err != nil {
			return err
		}
		d.add(RoleAssistant, parts...)
	case "thought":
		sig := s.Get("signature")
		if sig.Exists() && sig.Type != gjson.String && sig.Type != gjson.Null {
			return interactionsInvalidType(path+".signature", "a string", sig)
		}
		var text strings.Builder
		var err *Error
		s.Get("summary").ForEach(func(i, c gjson.Result) bool {
			switch c.Get("type").Str {
			case "text":
				text.WriteString(c.Get("text").Str)
			default:
				err = interactionsBadRequest(path+".summary", "%s.summary[%d]: only text thought summaries are supported", path, i.Int())
			}
			return err == nil
		})
		if err != nil {
			return err
		}
		if sig.Str == "" && text.Len() == 0 {
			return nil
		}
		d.add(RoleAssistant, interactionsThoughtPart(sig.Str, text.String()))
	case "function_call":
		id, name := s.Get("id"), s.Get("name")
		if id.Type != gjson.String || id.Str == "" {
			return interactionsBadRequest(path+".id", "%s.id: a function_call step needs the call's id", path)
		}
		if name.Type != gjson.String || name.Str == "" {
			return interactionsBadRequest(path+".name", "%s.name: a function_call step needs the function's name", path)
		}
		args := "{}"
		switch a := s.Get("arguments"); {
		case a.IsObject():
			args = a.Raw
		case a.Type == gjson.String && gjson.Valid(a.Str):
			args = a.Str // some clients send the arguments as JSON text
		case a.Exists() && a.Type != gjson.Null:
			return interactionsInvalidType(path+".arguments", "an object", a)
		}
		tc := &ToolCall{ID: id.Str, Name: name.Str, Arguments: args, Signature: s.Get("signature").Str}
		d.add(RoleAssistant, Part{Type: PartToolCall, ToolCall: tc})
	case "function_result":
		callID := s.Get("call_id")
		if callID.Type != gjson.String || callID.Str == "" {
			return interactionsBadRequest(path+".call_id", "%s.call_id: a function_result step needs the id of the call it answers", path)
		}
		tr := &ToolResult{CallID: callID.Str, Name: s.Get("name").Str, IsError: s.Get("is_error").Type == gjson.True}
		switch r := s.Get("result"); {
		case r.Type == gjson.String:
			tr.Content = []Part{{Type: PartText, Text: r.Str}}
		case r.IsArray():
			parts, err := d.contents(path+".result", r)
			if err != nil {
				return err
			}
			tr.Content = parts
		case r.IsObject():
			// A structured result, as generateContent's functionResponse
			// carries one: passed on as its JSON text.
			tr.Content = []Part{{Type: PartText, Text: r.Raw}}
		case !r.Exists() || r.Type == gjson.Null:
		default:
			tr.Content = []Part{{Type: PartText, Text: r.Raw}}
		}
		d.add(RoleUser, Part{Type: PartToolResult, ToolResult: tr})
	case "":
		return interactionsBadRequest(path+".type", "%s.type: every step needs a type", path)
	case "text", "image", "document", "audio", "video":
		// A content block among steps: user input, as the API reads it.
		p, err := d.content(path, s)
		if err != nil {
			return err
		}
		d.add(RoleUser, p)
	default:
		if strings.HasSuffix(typ.Str, "_call") || strings.HasSuffix(typ.Str, "_result") {
			return interactionsBadRequest(path+".type", "%s: %s steps come from tools that run only at Google and cannot be sent to louter's backends", path, typ.Str)
		}
		return interactionsBadRequest(path+".type", "%s.type: unknown step type %q", path, typ.Str)
	}
	return nil
}

// stepContent reads the content of a user_input or model_output step: a
// list of content blocks (or a string).
func (d *interactionsRequestDecoder) stepContent(path string, v gjson.Result) ([]Part, *Error) {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return nil, nil
	case v.Type == gjson.String:
		return []Part{{Type: PartText, Text: v.Str}}, nil
	}
	return d.contents(path+".content", v)
}

// contents reads content blocks: one object or an array of them.
func (d *interactionsRequestDecoder) contents(path string, v gjson.Result) ([]Part, *Error) {
	if v.IsObject() {
		p, err := d.content(path, v)
		if err != nil {
			return nil, err
		}
		return []Part{p}, nil
	}
	if !v.IsArray() {
		return nil, interactionsInvalidType(path, "an array of content", v)
	}
	var parts []Part
	var err *Error
	v.ForEach(func(i, c gjson.Result) bool {
		var p Part
		if p, err = d.content(path+"["+strconv.Itoa(int(i.Int()))+"]", c); err != nil {
			return false
		}
		parts = append(parts, p)
		return true
	})
	if err != nil {
		return nil, err
	}
	return parts, nil
}

// content reads one content block.
func (d *interactionsRequestDecoder) content(path string, c gjson.Result) (Part, *Error) {
	if !c.IsObject() {
		return Part{}, interactionsInvalidType(path, "a content object", c)
	}
	switch t := c.Get("type").Str; t {
	case "text":
		text := c.Get("text")
		if text.Type != gjson.String {
			return Part{}, interactionsInvalidType(path+".text", "a string", text)
		}
		return Part{Type: PartText, Text: text.Str}, nil
	case "image", "document":
		m := &Media{MediaType: c.Get("mime_type").Str}
		data, uri := c.Get("data"), c.Get("uri")
		switch {
		case data.Type == gjson.String && data.Str != "":
			m.Data = data.Str
		case uri.Type == gjson.String && uri.Str != "":
			m.URL = uri.Str
		default:
			return Part{}, interactionsBadRequest(path, "%s: an %s needs data or uri", path, t)
		}
		if t == "image" {
			return Part{Type: PartImage, Media: m}, nil
		}
		return Part{Type: PartDocument, Media: m}, nil
	case "audio", "video":
		return Part{}, interactionsBadRequest(path+".type", "%s: %s content is not supported by louter (text, image and document are)", path, t)
	default:
		return Part{}, interactionsBadRequest(path+".type", "%s.type: unknown content type %q", path, t)
	}
}

package translate

import (
	"encoding/json"
	"fmt"

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

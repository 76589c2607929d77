package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The settings of an Interactions request: its tools, generation_config and
// output format (DecodeRequest reads the conversation).

// interactionsBuiltinTools are the tools that run at Google.
var interactionsBuiltinTools = map[string]bool{
	"google_search": true, "code_execution": true, "url_context": true, "computer_use": true,
	"mcp_server": true, "file_search": true, "google_maps": true, "retrieval": true,
}

// tools reads tools: function declarations ({"type":"function", name,
// description, parameters}, or generateContent's function_declarations
// list). Built-in tools are left out: they run only at Google.
func (d *interactionsRequestDecoder) tools(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return interactionsInvalidType("tools", "an array", v)
	}
	var err *Error
	v.ForEach(func(i, t gjson.Result) bool {
		path := "tools[" + strconv.Itoa(int(i.Int())) + "]"
		if !t.IsObject() {
			err = interactionsInvalidType(path, "a tool object", t)
			return false
		}
		if decls := t.Get("function_declarations"); decls.IsArray() {
			decls.ForEach(func(j, f gjson.Result) bool {
				err = d.function(path+".function_declarations["+strconv.Itoa(int(j.Int()))+"]", f)
				return err == nil
			})
			return err == nil
		}
		switch typ := t.Get("type").Str; {
		case typ == "function":
			err = d.function(path, t)
		case interactionsBuiltinTools[typ]:
			d.req.Drop("tools."+typ, "built-in tools run only at Google")
		default:
			err = interactionsBadRequest(path+".type", "%s.type: unknown tool type %q", path, typ)
		}
		return err == nil
	})
	return err
}

// function reads one function declaration.
func (d *interactionsRequestDecoder) function(path string, f gjson.Result) *Error {
	name := f.Get("name")
	if name.Type != gjson.String || name.Str == "" {
		return interactionsBadRequest(path+".name", "%s.name: a function needs a name", path)
	}
	tool := Tool{Name: name.Str, Description: f.Get("description").Str}
	switch p := f.Get("parameters"); {
	case p.IsObject():
		tool.Schema = []byte(p.Raw)
	case p.Exists() && p.Type != gjson.Null:
		return interactionsInvalidType(path+".parameters", "a JSON schema object", p)
	}
	d.req.Tools = append(d.req.Tools, tool)
	return nil
}

// generationConfig reads generation_config.
func (d *interactionsRequestDecoder) generationConfig(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return interactionsInvalidType("generation_config", "an object", v)
	}
	req := d.req
	var err *Error
	v.ForEach(func(k, x gjson.Result) bool {
		if x.Type == gjson.Null {
			return true
		}
		path := "generation_config." + k.Str
		switch k.Str {
		case "temperature":
			var f float64
			if f, err = interactionsNum(path, ruleTemp2, x); err == nil {
				req.Temperature = &f
			}
		case "top_p":
			var f float64
			if f, err = interactionsNum(path, ruleUnit, x); err == nil {
				req.TopP = &f
			}
		case "seed":
			var f float64
			if f, err = interactionsNum(path, ruleSeed, x); err == nil {
				n := int64(f)
				req.Seed = &n
			}
		case "max_output_tokens":
			var f float64
			if f, err = interactionsNum(path, ruleMaxTokens, x); err == nil {
				req.MaxTokens = int(f)
			}
		case "stop_sequences":
			if !x.IsArray() {
				err = interactionsInvalidType(path, "an array of strings", x)
				break
			}
			x.ForEach(func(_, s gjson.Result) bool {
				if s.Type != gjson.String {
					err = interactionsInvalidType(path, "an array of strings", x)
					return false
				}
				req.StopSequences = append(req.StopSequences, s.Str)
				return true
			})
		case "thinking_level":
			if x.Type != gjson.String {
				err = interactionsInvalidType(path, "a string", x)
				break
			}
			r := d.reasoning()
			r.Effort = strings.ToLower(x.Str)
			if r.Mode == ReasoningDefault {
				r.Mode = ReasoningEnabled
			}
		case "thinking_summaries":
			switch x.Str {
			case "none":
				d.reasoning().Display = "omitted"
			case "auto":
				r := d.reasoning()
				r.Display = "summarized"
				if r.Mode == ReasoningDefault {
					// As generateContent's includeThoughts: think as
					// the model does by default, and show it.
					r.Mode = ReasoningEnabled
				}
			default:
				err = interactionsBadRequest(path, "%s: expected \"auto\" or \"none\", got %s", path, jsonSnippet(x))
			}
		case "tool_choice":
			err = d.toolChoice(path, x)
		default:
			req.Drop(path, "only text generation settings are translated")
		}
		return err == nil
	})
	return err
}

// reasoning returns the request's reasoning settings, made on first use.
func (d *interactionsRequestDecoder) reasoning() *Reasoning {
	if d.req.Reasoning == nil {
		d.req.Reasoning = &Reasoning{}
	}
	return d.req.Reasoning
}

// interactionsNum checks a numeric field and returns its value.
func interactionsNum(path string, r numRule, v gjson.Result) (float64, *Error) {
	f, p := r.check(v)
	switch p {
	case numOK:
		return f, nil
	case numType, numFraction:
		want := "a number"
		if r.integer {
			want = "an integer"
		}
		return 0, interactionsInvalidType(path, want, v)
	case numBelow:
		return 0, interactionsBadRequest(path, "%s: %s is below the minimum, %s", path, jsonSnippet(v), formatBound(r.min, r.integer))
	}
	return 0, interactionsBadRequest(path, "%s: %s is above the maximum, %s", path, jsonSnippet(v), formatBound(r.max, r.integer))
}

// toolChoice reads generation_config.tool_choice: "auto", "any", "none",
// "validated" (auto, with the arguments checked against the schema: auto
// elsewhere), or {"allowed_tools":{"mode","tools"}}.
func (d *interactionsRequestDecoder) toolChoice(path string, v gjson.Result) *Error {
	tc := &ToolChoice{}
	mode := v
	if v.IsObject() {
		at := v.Get("allowed_tools")
		mode = at.Get("mode")
		at.Get("tools").ForEach(func(_, n gjson.Result) bool {
			if n.Type == gjson.String {
				tc.Allowed = append(tc.Allowed, n.Str)
			}
			return true
		})
	} else if v.Type != gjson.String {
		return interactionsInvalidType(path, "a string or an object", v)
	}
	switch mode.Str {
	case "any":
		tc.Mode = ToolChoiceRequired
		if len(tc.Allowed) == 1 {
			tc.Mode, tc.Name, tc.Allowed = ToolChoiceTool, tc.Allowed[0], nil
		}
	case "none":
		tc.Mode = ToolChoiceNone
	case "auto", "validated", "":
		tc.Mode = ToolChoiceAuto
	default:
		return interactionsBadRequest(path, "%s: unknown mode %q (auto, any, none, validated)", path, mode.Str)
	}
	d.req.ToolChoice = tc
	return nil
}

// responseFormat reads response_format: a text format with
// mime_type application/json and an optional schema asks for JSON; a list
// of formats (one per output modality) is read for its text one.
func (d *interactionsRequestDecoder) responseFormat(path string, v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
		return nil
	case v.IsArray():
		var err *Error
		v.ForEach(func(i, f gjson.Result) bool {
			err = d.responseFormat(path+"["+strconv.Itoa(int(i.Int()))+"]", f)
			return err == nil
		})
		return err
	case !v.IsObject():
		return interactionsInvalidType(path, "an object or an array", v)
	}
	typ := v.Get("type").Str
	if typ != "" && typ != "text" {
		return interactionsBadRequest(path+".type", "%s.type: louter answers text only, not %s", path, typ)
	}
	mime := v.Get("mime_type").Str
	schema := v.Get("schema")
	switch {
	case schema.IsObject():
		d.req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "response", Schema: []byte(schema.Raw)}
	case mime == "application/json":
		d.req.ResponseFormat = &ResponseFormat{Type: "json_object"}
	case mime == "" || mime == "text/plain":
	default:
		d.req.Drop(path+".mime_type", "only JSON and plain text are translated")
	}
	return nil
}

// responseMimeType reads the older response_mime_type.
func (d *interactionsRequestDecoder) responseMimeType(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
	case v.Type != gjson.String:
		return interactionsInvalidType("response_mime_type", "a string", v)
	case v.Str == "application/json":
		if d.req.ResponseFormat == nil {
			d.req.ResponseFormat = &ResponseFormat{Type: "json_object"}
		}
	case v.Str != "" && v.Str != "text/plain":
		d.req.Drop("response_mime_type", "only JSON and plain text are translated")
	}
	return nil
}

// responseModalities reads response_modalities: louter answers text only,
// so any other modality is refused rather than silently not produced.
func (d *interactionsRequestDecoder) responseModalities(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return interactionsInvalidType("response_modalities", "an array", v)
	}
	var err *Error
	v.ForEach(func(_, m gjson.Result) bool {
		if m.Str != "text" {
			err = interactionsBadRequest("response_modalities", "response_modalities: louter answers text only, not %s", jsonSnippet(m))
		}
		return err == nil
	})
	return err
}

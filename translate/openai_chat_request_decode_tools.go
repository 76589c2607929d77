package translate

import (
	"fmt"
)

// oaiFunctionScan holds a function definition's name, description,
// parameters and strict, as found.
type oaiFunctionScan [4]jsonSpan

// functionAt walks the function definition at data[i] into f and returns
// the index after it.
func (d *oaiRequestDecoder) functionAt(i int, f *oaiFunctionScan) int {
	return d.pickAt(i, f[:], "name", "description", "parameters", "strict")
}

// tools decodes the tools list, the value at data[i], and returns the
// index after it.
func (d *oaiRequestDecoder) tools(i int) int {
	a, end, ok := d.listAt(i, "tools")
	if !ok {
		return end
	}
	for j := 0; d.nextElement(&a); j++ {
		// type, and the first function member, walked in the same pass.
		var typ jsonSpan
		var fn oaiFunctionScan
		if d.kindAt(a.i) != jsonObject {
			_, a.i = d.value(a.i)
		} else {
			seen := false
			m := d.members(a.i)
			for {
				key, ok := d.nextMember(&m)
				if !ok {
					break
				}
				switch {
				case key == "type":
					m.i = d.first(&typ, m.i)
				case key == "function" && !seen:
					seen = true
					m.i = d.functionAt(m.i, &fn)
				default:
					_, m.i = d.value(m.i)
				}
			}
			a.i = m.i
		}
		if d.bad {
			break
		}
		switch t := d.str(typ); t {
		case "function":
			d.functionTool(&fn, "tools[%d].function", j)
		case "custom":
			d.drop(oaiAtFields, "tools.custom", "custom (free-form grammar) tools have no equivalent in other protocols")
		default:
			d.drop(oaiAtFields, "tools."+t, "only function tools are supported")
		}
	}
	return a.i
}

// functions decodes the deprecated top-level functions list, the value at
// data[i], and returns the index after it.
func (d *oaiRequestDecoder) functions(i int) int {
	a, end, ok := d.listAt(i, "functions")
	if !ok {
		return end
	}
	for j := 0; d.nextElement(&a); j++ {
		var fn oaiFunctionScan
		if a.i = d.functionAt(a.i, &fn); d.bad {
			break
		}
		d.functionTool(&fn, "functions[%d]", j)
	}
	return a.i
}

// functionTool adds the function definition f to the tools. pathFormat
// and j name it in an error.
func (d *oaiRequestDecoder) functionTool(f *oaiFunctionScan, pathFormat string, j int) {
	name, desc, params, strict := f[0], f[1], f[2], f[3]
	if !name.isString() {
		path := fmt.Sprintf(pathFormat, j)
		d.fail(oaiAtFields, oaiBadRequest(path+".name", "%s.name: a function name is required", path))
		return
	}
	tool := Tool{Name: d.str(name)}
	tool.Description, tool.descForm = d.text(desc)
	if params.kind != jsonAbsent && params.kind != jsonNull {
		tool.Schema = d.raw(params)
	}
	if strict.kind == jsonBool {
		b := d.isTrue(strict)
		tool.Strict = &b
	}
	d.req.Tools = append(d.req.Tools, tool)
}

// oaiToolChoiceModes are the string forms of tool_choice in Chat
// Completions and the Responses API alike.
var oaiToolChoiceModes = map[string]ToolChoiceMode{"none": ToolChoiceNone, "auto": ToolChoiceAuto, "required": ToolChoiceRequired}

func (d *oaiRequestDecoder) toolChoice(v jsonSpan) {
	req := d.req
	switch v.kind {
	case jsonNull:
		return
	case jsonString:
		s := d.str(v)
		if mode, ok := oaiToolChoiceModes[s]; ok {
			req.ToolChoice = &ToolChoice{Mode: mode}
		} else {
			d.fail(oaiAtFields, oaiBadRequest("tool_choice", "tool_choice: unknown value %q", s))
		}
		return
	case jsonObject:
	default:
		d.fail(oaiAtFields, oaiBadRequest("tool_choice", "tool_choice: must be a string or an object"))
		return
	}
	switch typ := d.str(d.get(v, "type")); typ {
	case "function":
		name := d.str(d.getPath(v, "function", "name"))
		if name == "" {
			d.fail(oaiAtFields, oaiBadRequest("tool_choice.function.name", "tool_choice.function.name: a function name is required"))
			return
		}
		req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: name}
	case "allowed_tools":
		var at [2]jsonSpan
		d.pick(d.get(v, "allowed_tools"), at[:], "mode", "tools")
		tc := &ToolChoice{Mode: ToolChoiceAuto}
		switch mode := d.str(at[0]); mode {
		case "", "auto":
		case "required":
			tc.Mode = ToolChoiceRequired
		default:
			d.fail(oaiAtFields, oaiBadRequest("tool_choice.allowed_tools.mode", "tool_choice.allowed_tools.mode: unknown value %q", mode))
			return
		}
		for t := range d.each(at[1]) {
			if name := d.str(d.getPath(t, "function", "name")); name != "" {
				tc.Allowed = append(tc.Allowed, name)
			} else if d.str(d.get(t, "type")) == "custom" {
				d.drop(oaiAtFields, "tool_choice.allowed_tools.custom", "custom tools are not supported")
			}
		}
		req.ToolChoice = tc
	case "custom":
		d.drop(oaiAtFields, "tool_choice.custom", "custom tools are not supported")
	default:
		d.fail(oaiAtFields, oaiBadRequest("tool_choice.type", "tool_choice.type: unknown value %q", typ))
	}
}

// functionCallChoice decodes the deprecated top-level function_call.
func (d *oaiRequestDecoder) functionCallChoice(v jsonSpan) {
	switch {
	case v.kind == jsonNull:
	case v.kind == jsonString && (d.str(v) == "none" || d.str(v) == "auto"):
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceMode(d.str(v))}
	case v.kind == jsonObject && d.get(v, "name").isString():
		d.req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: d.str(d.get(v, "name"))}
	default:
		d.fail(oaiAtFields, oaiBadRequest("function_call", "function_call: must be \"none\", \"auto\" or {\"name\": ...}"))
	}
}

func (d *oaiRequestDecoder) responseFormat(v jsonSpan) {
	switch v.kind {
	case jsonNull:
		return
	case jsonObject:
	default:
		d.fail(oaiAtFields, oaiBadRequest("response_format", "response_format: must be an object"))
		return
	}
	var f [2]jsonSpan
	d.pick(v, f[:], "type", "json_schema")
	switch typ := d.str(f[0]); typ {
	case "text", "json_object":
		d.req.ResponseFormat = &ResponseFormat{Type: typ}
	case "json_schema":
		if f[1].kind != jsonObject {
			d.fail(oaiAtFields, oaiBadRequest("response_format.json_schema", "response_format.json_schema: must be an object"))
			return
		}
		var js [4]jsonSpan
		d.pick(f[1], js[:], "name", "description", "schema", "strict")
		rf := &ResponseFormat{Type: typ, Name: d.str(js[0]), Description: d.str(js[1])}
		if s := js[2]; s.kind != jsonAbsent && s.kind != jsonNull {
			rf.Schema = d.raw(s)
		}
		if s := js[3]; s.kind == jsonBool {
			b := d.isTrue(s)
			rf.Strict = &b
		}
		d.req.ResponseFormat = rf
	default:
		d.drop(oaiAtFields, "response_format", fmt.Sprintf("type %q is not supported", typ))
	}
}

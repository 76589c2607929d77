package translate

import (
	"fmt"
)

// respToolNames are the members of a tool the decoder reads, in the order
// of respToolScan.
var respToolNames = []string{"type", "name", "description", "parameters", "strict", "format", "tools", "filters", "user_location", "search_context_size"}

// respToolScan holds a tool's members named by respToolNames.
type respToolScan [10]jsonSpan

// tools decodes the tool list, the value at data[i], and returns the index
// after it: function tools as they are, custom tools as functions with one
// string argument, the function and custom tools of a namespace flattened
// into the list; hosted tools are left out.
func (d *respRequestDecoder) tools(i int) int {
	a, end, ok := d.listAt(i, "tools")
	if !ok {
		return end
	}
	for j := 0; d.nextElement(&a); j++ {
		var t respToolScan
		if a.i = d.pickAt(a.i, t[:], respToolNames...); d.bad {
			break
		}
		d.tool(&t, j, -1)
	}
	return a.i
}

// tool decodes tools[j], or tools[j].tools[k] of a namespace when k >= 0.
func (d *respRequestDecoder) tool(t *respToolScan, j, k int) {
	path := func() string {
		if k < 0 {
			return fmt.Sprintf("tools[%d]", j)
		}
		return fmt.Sprintf("tools[%d].tools[%d]", j, k)
	}
	typ, name, desc, params, strict, format, inner := t[0], t[1], t[2], t[3], t[4], t[5], t[6]
	switch kind := d.str(typ); kind {
	case "function":
		if !name.isString() {
			d.fail(oaiAtFields, respBadRequest(path()+".name", "%s.name: a function name is required", path()))
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
	case "custom":
		if !name.isString() {
			d.fail(oaiAtFields, respBadRequest(path()+".name", "%s.name: a tool name is required", path()))
			return
		}
		tool := Tool{Name: d.str(name), Schema: respCustomSchema(d.result(format)), Custom: true}
		tool.Description, tool.descForm = d.text(desc)
		d.req.Tools = append(d.req.Tools, tool)
	case "namespace":
		if k >= 0 {
			d.fail(oaiAtFields, respBadRequest(path()+".type", "%s: namespaces cannot be nested", path()))
			return
		}
		n := 0
		for sp := range d.each(inner) {
			var it respToolScan
			d.pick(sp, it[:], respToolNames...)
			d.tool(&it, j, n)
			n++
		}
		d.drop(oaiAtFields, "tools.namespace", "namespaces are flattened: their tools are offered by their own names")
	case "":
		d.fail(oaiAtFields, respBadRequest(path()+".type", "%s.type: a tool type is required", path()))
	case "web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11":
		if k >= 0 {
			d.drop(oaiAtFields, "tools."+kind, "hosted tools run only at OpenAI")
			return
		}
		d.req.ServerTools = append(d.req.ServerTools, respServerTool(kind, path(), d.result(t[7]), d.result(t[8]), d.result(t[9])))
	default:
		// file_search, code_interpreter, tool_search, mcp,
		// image_generation, computer_use, local_shell, ...: tools OpenAI
		// runs (or that only its models know) which no other backend has.
		d.drop(oaiAtFields, "tools."+kind, "hosted tools run only at OpenAI")
	}
}

func (d *respRequestDecoder) toolChoice(v jsonSpan) {
	req := d.req
	switch v.kind {
	case jsonNull:
		return
	case jsonString:
		s := d.str(v)
		if mode, ok := oaiToolChoiceModes[s]; ok {
			req.ToolChoice = &ToolChoice{Mode: mode}
		} else {
			d.fail(oaiAtFields, respBadRequest("tool_choice", "tool_choice: unknown value %q", s))
		}
		return
	case jsonObject:
	default:
		d.fail(oaiAtFields, respBadRequest("tool_choice", "tool_choice: must be a string or an object"))
		return
	}
	var f [4]jsonSpan
	d.pick(v, f[:], "type", "name", "mode", "tools")
	switch typ := d.str(f[0]); typ {
	case "web_search", "web_search_preview", "web_search_preview_2025_03_11":
		req.ToolChoice = respServerToolChoice()
	case "function", "custom":
		name := d.str(f[1])
		if name == "" {
			d.fail(oaiAtFields, respBadRequest("tool_choice.name", "tool_choice.name: a tool name is required"))
			return
		}
		req.ToolChoice = &ToolChoice{Mode: ToolChoiceTool, Name: name}
	case "allowed_tools":
		tc := &ToolChoice{Mode: ToolChoiceAuto}
		switch mode := d.str(f[2]); mode {
		case "", "auto":
		case "required":
			tc.Mode = ToolChoiceRequired
		default:
			d.fail(oaiAtFields, respBadRequest("tool_choice.mode", "tool_choice.mode: unknown value %q", mode))
			return
		}
		for t := range d.each(f[3]) {
			var g [2]jsonSpan
			d.pick(t, g[:], "name", "type")
			name, kind := d.str(g[0]), d.str(g[1])
			if name != "" && (kind == "function" || kind == "custom") {
				tc.Allowed = append(tc.Allowed, name)
			} else {
				d.drop(oaiAtFields, "tool_choice.allowed_tools."+kind, "hosted tools run only at OpenAI")
			}
		}
		req.ToolChoice = tc
	default:
		d.drop(oaiAtFields, "tool_choice."+typ, "hosted tools run only at OpenAI")
	}
}

func (d *respRequestDecoder) reasoning(v jsonSpan) {
	switch v.kind {
	case jsonNull:
		return
	case jsonObject:
	default:
		d.fail(oaiAtFields, respBadRequest("reasoning", "reasoning: must be an object"))
		return
	}
	var f [3]jsonSpan
	d.pick(v, f[:], "effort", "summary", "generate_summary")
	effort, summary := d.str(f[0]), d.str(f[1])
	if summary == "" {
		summary = d.str(f[2]) // deprecated name
	}
	if effort == "" && summary == "" {
		return
	}
	r := &Reasoning{Mode: ReasoningEnabled, Effort: effort, Display: summary}
	if effort == "none" {
		r.Mode = ReasoningDisabled
	}
	d.req.Reasoning = r
}

// textSettings decodes the text member: verbosity and the output format.
func (d *respRequestDecoder) textSettings(v jsonSpan) {
	switch v.kind {
	case jsonNull:
		return
	case jsonObject:
	default:
		d.fail(oaiAtFields, respBadRequest("text", "text: must be an object"))
		return
	}
	var f [2]jsonSpan
	d.pick(v, f[:], "verbosity", "format")
	if f[0].isString() {
		d.drop(oaiAtFields, "text.verbosity", "verbosity has no equivalent in other protocols")
	}
	if f[1].kind != jsonObject {
		return
	}
	var g [5]jsonSpan
	d.pick(f[1], g[:], "type", "name", "description", "schema", "strict")
	switch typ := d.str(g[0]); typ {
	case "text":
	case "json_object":
		d.req.ResponseFormat = &ResponseFormat{Type: typ}
	case "json_schema":
		rf := &ResponseFormat{Type: typ, Name: d.str(g[1]), Description: d.str(g[2])}
		if s := g[3]; s.kind != jsonAbsent && s.kind != jsonNull {
			rf.Schema = d.raw(s)
		}
		if s := g[4]; s.kind == jsonBool {
			b := d.isTrue(s)
			rf.Strict = &b
		}
		d.req.ResponseFormat = rf
	default:
		d.drop(oaiAtFields, "text.format", fmt.Sprintf("type %q is not supported", typ))
	}
}

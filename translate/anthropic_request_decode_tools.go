package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// tools decodes the tool array at d.body[at] and returns the index after
// it. Client tools ("custom" or no type) are kept; Anthropic server tools
// (web_search_…, bash_…, text_editor_…, …) run on Anthropic's side and
// cannot be offered to another backend.
func (d *anthRequestDecoder) tools(at int) (int, *Error) {
	a := jsonOpenArray(d.body, at)
	for i := 0; a.next(); i++ {
		end, err := d.tool(i, a.i)
		if err != nil {
			return 0, err
		}
		a.i = end
	}
	if a.bad {
		return 0, errAnthSyntax
	}
	return a.i, nil
}

// tool decodes the tool at d.body[at] and returns the index after it.
func (d *anthRequestDecoder) tool(i, at int) (int, *Error) {
	req := d.req
	path := anthPath{}.key("tools").index(i)
	if d.body[at] != '{' {
		return 0, path.bad("must be an object")
	}
	var tool Tool
	var typ, name jsonSpan
	var extraBuf [4]string
	extra := extraBuf[:0]
	m := jsonOpenObject(d.body, at)
	for {
		k, esc, ok := m.next()
		if !ok {
			break
		}
		key := d.key(k, esc)
		if key == "description" && m.peek() == jsonString {
			if _, tool.Description, tool.descForm, ok = d.textAt(&m); !ok {
				return 0, errAnthSyntax
			}
			continue
		}
		v, ok := m.value()
		if !ok {
			return 0, errAnthSyntax
		}
		switch key {
		case "type":
			typ = v
		case "name":
			name = v
		case "description":
			tool.Description, tool.descForm = d.textValue(v)
		case "input_schema":
			tool.Schema = d.raw(v)
		case "strict":
			if v.kind == jsonBool {
				b := d.body[v.start] == 't'
				tool.Strict = &b
			}
		case "cache_control":
			tool.CacheControl = d.raw(v)
		default: // defer_loading, eager_input_streaming, input_examples, ...
			if v.kind != jsonNull {
				extra = append(extra, key)
			}
			if key == "defer_loading" && v.kind != jsonNull {
				d.toolChanges().changes = true
				tool.deferred = d.result(v).Bool()
			}
		}
	}
	if m.bad {
		return 0, errAnthSyntax
	}
	if t := d.str(typ); t != "" && t != "custom" {
		// A tool change may still name it.
		tc := d.toolChanges()
		tc.serverTools = append(tc.serverTools, strings.Clone(d.gstr(name)))
		raw := gjson.ParseBytes(d.body[at:m.i])
		if st, ok := anthServerTool(t, raw); ok {
			st.Param = "tools." + strconv.Itoa(i)
			req.ServerTools = append(req.ServerTools, st)
			anthDropServerToolExtras(req, raw)
			return m.i, nil
		}
		req.Drop("tools", "server tool "+t+" is not translated")
		return m.i, nil
	}
	if name.kind != jsonString || name.start == name.end {
		p := path.key("name")
		return 0, p.bad("tool requires a name")
	}
	tool.Name = d.str(name)
	for _, k := range extra {
		switch k {
		case "defer_loading":
			req.Drop("tools.defer_loading", "tool search is Anthropic-only; the tool is sent up front")
		case "eager_input_streaming":
			req.Drop("tools.eager_input_streaming", "Anthropic-only streaming option")
		case "input_examples":
			req.Drop("tools.input_examples", "not translated")
		default:
			req.Drop("tools."+k, DropUnknown)
		}
	}
	req.Tools = append(req.Tools, tool)
	return m.i, nil
}

// toolChanges returns the notes the request keeps for ApplyToolChanges,
// creating them.
func (d *anthRequestDecoder) toolChanges() *toolChangeNotes {
	if d.req.toolChanges == nil {
		d.req.toolChanges = &toolChangeNotes{}
	}
	return d.req.toolChanges
}

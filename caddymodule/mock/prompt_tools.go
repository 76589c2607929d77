package mock

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// A server without tool support leaves tools to the model: the client (or
// louter's tools_in_prompt) writes the tool definitions into the system
// prompt, in a <tools> section, and the results of earlier calls into user
// turns, in <tool_response> blocks, as the model's chat template would
// (REFERENCE §6.1, §6.2). The mock reads them back, so the scenarios that
// need tools (tool, parallel_tools, agent) work against such requests as
// they do against native ones.

const (
	toolsOpen         = "<tools>"
	toolsClose        = "</tools>"
	toolResponseOpen  = "<tool_response>"
	toolResponseClose = "</tool_response>"
)

// readPromptTools completes a request that declares no tools from its
// prompt: the tools of the system prompt's <tools> section, and the
// <tool_response> blocks of user turns as tool results.
func readPromptTools(req *translate.Request) {
	if len(req.Tools) > 0 {
		return
	}
	req.Tools = toolsFromPrompt(systemPromptText(req))
	for i := range req.Messages {
		if req.Messages[i].Role == translate.RoleUser {
			toolResponsesToResults(&req.Messages[i])
		}
	}
}

// systemPromptText joins the text of the system prompt and of any later
// system messages.
func systemPromptText(req *translate.Request) string {
	var sb strings.Builder
	add := func(parts []translate.Part) {
		for i := range parts {
			if parts[i].Type == translate.PartText {
				sb.WriteString(parts[i].Text)
				sb.WriteByte('\n')
			}
		}
	}
	add(req.System)
	for i := range req.Messages {
		if req.Messages[i].Role == translate.RoleSystem {
			add(req.Messages[i].Parts)
		}
	}
	return sb.String()
}

// toolsFromPrompt reads the tools of the first <tools> section that
// defines any. Empty sections are skipped: the Hermes template's
// instructions mention "<tools></tools> XML tags" before the real one.
func toolsFromPrompt(s string) []translate.Tool {
	for {
		i := strings.Index(s, toolsOpen)
		if i < 0 {
			return nil
		}
		s = s[i+len(toolsOpen):]
		section, rest, closed := strings.Cut(s, toolsClose)
		section = strings.TrimSpace(section)
		var tools []translate.Tool
		if strings.HasPrefix(section, "<function>") {
			tools = qwen3CoderTools(section)
		} else if strings.HasPrefix(section, "{") {
			tools = hermesTools(section)
		}
		if len(tools) > 0 || !closed {
			return tools
		}
		s = rest
	}
}

// hermesTools reads the Hermes form: one JSON object a line, either
// {"type": "function", "function": {"name": …, "description": …,
// "parameters": {…}}} or the function object itself. The schema is kept
// as the bytes the prompt holds.
func hermesTools(section string) []translate.Tool {
	var tools []translate.Tool
	dec := json.NewDecoder(strings.NewReader(section))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return tools // the end, or what parsed before text that is not JSON
		}
		fn := gjson.ParseBytes(raw)
		if f := fn.Get("function"); f.IsObject() {
			fn = f
		}
		name := fn.Get("name").String()
		if name == "" {
			continue
		}
		t := translate.Tool{Name: name, Description: fn.Get("description").String()}
		if p := fn.Get("parameters"); p.IsObject() {
			t.Schema = json.RawMessage(p.Raw)
		}
		tools = append(tools, t)
	}
}

// qwen3CoderTools reads the Qwen3-Coder form:
//
//	<function>
//	<name>NAME</name>
//	<description>DESC</description>
//	<parameters>
//	<parameter>
//	<name>PARAM</name>
//	<type>TYPE</type>
//	<description>PDESC</description>
//	<KEY>VALUE</KEY>
//	</parameter>
//	<KEY>VALUE</KEY>
//	</parameters>
//	</function>
//
// where the KEY elements are the other keys of a property's schema and of
// the parameters schema: maps and lists as JSON, scalars as text.
func qwen3CoderTools(section string) []translate.Tool {
	var tools []translate.Tool
	for rest := section; ; {
		tag, inner, r, ok := nextElement(rest)
		if !ok {
			return tools
		}
		rest = r
		if tag != "function" {
			continue
		}
		var t translate.Tool
		for fn := inner; ; {
			tag, value, r, ok := nextElement(fn)
			if !ok {
				break
			}
			fn = r
			switch tag {
			case "name":
				t.Name = strings.TrimSpace(value)
			case "description":
				t.Description = strings.TrimSpace(value)
			case "parameters":
				t.Schema = qwen3CoderSchema(value)
			}
			// Other keys of the tool (strict, ...) are not the mock's
			// business.
		}
		if t.Name != "" {
			tools = append(tools, t)
		}
	}
}

// qwen3CoderSchema rebuilds an object schema from the elements of a
// <parameters> section.
func qwen3CoderSchema(section string) json.RawMessage {
	b := []byte(`{"type":"object","properties":{`)
	var extra []byte
	props := 0
	for rest := section; ; {
		tag, value, r, ok := nextElement(rest)
		if !ok {
			break
		}
		rest = r
		if tag != "parameter" {
			extra = append(extra, ',')
			extra = appendJSONString(extra, tag)
			extra = append(extra, ':')
			extra = appendTemplateValue(extra, value)
			continue
		}
		if props > 0 {
			b = append(b, ',')
		}
		props++
		b = appendQwen3CoderProperty(b, value)
	}
	b = append(b, '}')
	b = append(b, extra...)
	b = append(b, '}')
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		// Only a value that is not JSON could cause this, and values
		// are checked; still, a bad schema is better than none.
		return json.RawMessage(b)
	}
	return json.RawMessage(out.Bytes())
}

// appendQwen3CoderProperty appends "NAME":{schema} for the elements of a
// <parameter> element.
func appendQwen3CoderProperty(dst []byte, section string) []byte {
	name := ""
	var schema []byte
	for rest := section; ; {
		tag, value, r, ok := nextElement(rest)
		if !ok {
			break
		}
		rest = r
		if tag == "name" {
			name = strings.TrimSpace(value)
			continue
		}
		if len(schema) > 0 {
			schema = append(schema, ',')
		}
		schema = appendJSONString(schema, tag)
		schema = append(schema, ':')
		value = strings.TrimSpace(value)
		switch {
		case tag == "description", tag == "type" && !strings.HasPrefix(value, "["):
			// Always text, even "null" or a description that looks
			// like a number.
			schema = appendJSONString(schema, value)
		default:
			schema = appendTemplateValue(schema, value)
		}
	}
	dst = appendJSONString(dst, name)
	dst = append(dst, ":{"...)
	dst = append(dst, schema...)
	return append(dst, '}')
}

// pythonLiterals turns a Python repr (what Jinja's |string makes of a list
// or a bool) into JSON, well enough for schema values.
var pythonLiterals = strings.NewReplacer("'", `"`, "True", "true", "False", "false", "None", "null")

// appendTemplateValue appends a value the template wrote as text: JSON
// when it is JSON (maps and lists, numbers), a Python literal when it is
// one, a string otherwise.
func appendTemplateValue(dst []byte, value string) []byte {
	value = strings.TrimSpace(value)
	switch value {
	case "True":
		return append(dst, "true"...)
	case "False":
		return append(dst, "false"...)
	case "None":
		return append(dst, "null"...)
	}
	if value != "" && gjson.Valid(value) {
		return append(dst, value...)
	}
	if strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{") {
		if v := pythonLiterals.Replace(value); gjson.Valid(v) {
			return append(dst, v...)
		}
	}
	return appendJSONString(dst, value)
}

// nextElement reads the element <TAG>inner</TAG> that s starts with, after
// white space, and returns the rest of s. The element ends at the first
// closing tag of its name, which is right for the template's elements: none
// holds another of its own name.
func nextElement(s string) (tag, inner, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(s, "<") {
		return "", "", "", false
	}
	end := strings.IndexByte(s, '>')
	if end < 2 || s[1] == '/' {
		return "", "", "", false
	}
	tag = s[1:end]
	inner, rest, ok = strings.Cut(s[end+1:], "</"+tag+">")
	return tag, inner, rest, ok
}

// toolResponsesToResults turns the <tool_response> blocks of a user turn's
// text into tool result parts; the text around them stays text. A tool
// result whose text is one such block (a client that kept the tool role)
// loses the wrapper.
func toolResponsesToResults(m *translate.Message) {
	var parts []translate.Part
	changed := false
	for i := range m.Parts {
		p := m.Parts[i]
		switch {
		case p.Type == translate.PartText && strings.Contains(p.Text, toolResponseOpen):
			parts = appendToolResponses(parts, p.Text)
			changed = true
			continue
		case p.Type == translate.PartToolResult && p.ToolResult != nil:
			for j := range p.ToolResult.Content {
				c := &p.ToolResult.Content[j]
				if c.Type != translate.PartText {
					continue
				}
				t := strings.TrimSpace(c.Text)
				if inner, ok := strings.CutPrefix(t, toolResponseOpen); ok && strings.HasSuffix(inner, toolResponseClose) {
					c.Text = strings.TrimSpace(strings.TrimSuffix(inner, toolResponseClose))
				}
			}
		}
		parts = append(parts, p)
	}
	if changed {
		m.Parts = parts
	}
}

// appendToolResponses appends the parts of a text holding <tool_response>
// blocks. A block left open runs to the end of the text.
func appendToolResponses(parts []translate.Part, text string) []translate.Part {
	addText := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, translate.Part{Type: translate.PartText, Text: s})
		}
	}
	for {
		before, after, found := strings.Cut(text, toolResponseOpen)
		addText(before)
		if !found {
			return parts
		}
		var result string
		result, text, _ = strings.Cut(after, toolResponseClose)
		parts = append(parts, translate.Part{Type: translate.PartToolResult, ToolResult: &translate.ToolResult{
			Content: []translate.Part{{Type: translate.PartText, Text: strings.TrimSpace(result)}},
		}})
	}
}

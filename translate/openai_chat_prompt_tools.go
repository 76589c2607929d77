package translate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// This file renders tools into the prompt for OpenAI-compatible servers
// without tool support (Dialect.ToolsInPrompt): the tool definitions join
// the system prompt, and the tool calls and results of the history become
// text, in the wording of the chat template the model was trained with
// (REFERENCE §6.1, §6.2). The model answers with calls in the same text
// format, which package dialect's decoder reads back.
//
// The texts are built as plain text and escaped into the body once: the
// tool block of Claude Code (twenty tools with long descriptions) is a few
// tens of kilobytes.

// oaiDropPromptTools is the reason recorded for what the prompt cannot
// enforce or carry.
const oaiDropPromptTools = "tools are rendered into the prompt (dialect tools_in_prompt)"

// The fixed wording of the Hermes block: Qwen2.5's and Qwen3's chat
// templates.
const (
	oaiHermesToolsHead = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
	oaiHermesToolsTail = "\n</tools>\n\n" +
		"For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
		"<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
)

// The fixed wording of the Qwen3-Coder block: its chat_template.jinja.
const (
	oaiQwen3CoderToolsHead = "# Tools\n\nYou have access to the following functions:\n\n<tools>"
	oaiQwen3CoderToolsTail = "\n</tools>\n\n" +
		"If you choose to call a function ONLY reply in the following format with NO suffix:\n\n" +
		"<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n" +
		"<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n" +
		"</function>\n</tool_call>\n\n" +
		"<IMPORTANT>\nReminder:\n" +
		"- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n" +
		"- Required parameters MUST be specified\n" +
		"- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n" +
		"- If there is no function call available, answer the question like you would usually do\n" +
		"</IMPORTANT>"
)

// promptToolBlock renders the request's tools for the system prompt in
// e.promptFormat, and records what the prompt cannot enforce. It returns ""
// when no tool is to be rendered.
func (e *oaiRequestEncoder) promptToolBlock() string {
	req := e.req
	if len(req.Tools) == 0 {
		return ""
	}
	tc := req.ToolChoice
	if tc != nil && tc.Mode == ToolChoiceNone {
		req.Drop("tools", "tool_choice none: the tools are not rendered into the prompt (dialect tools_in_prompt)")
		return ""
	}
	var b []byte
	if e.promptFormat == ToolCallsQwen3Coder {
		b = append(b, oaiQwen3CoderToolsHead...)
	} else {
		b = append(b, oaiHermesToolsHead...)
	}
	rendered := 0
	for i := range req.Tools {
		t := &req.Tools[i]
		if tc != nil && len(tc.Allowed) > 0 && !slices.Contains(tc.Allowed, t.Name) {
			// Only the allowed tools can be called: the others are not
			// shown to the model at all.
			continue
		}
		if len(t.CacheControl) > 0 {
			req.Drop("cache_control", oaiDropCacheControl)
		}
		if t.Strict != nil && *t.Strict {
			req.Drop("tools.strict", oaiDropPromptTools)
		}
		rendered++
		if e.promptFormat == ToolCallsQwen3Coder {
			b = oaiAppendQwen3CoderTool(b, e.toolName(t.Name), t)
		} else {
			b = oaiAppendHermesTool(b, e.toolName(t.Name), t)
		}
	}
	if rendered == 0 {
		return ""
	}
	if e.promptFormat == ToolCallsQwen3Coder {
		b = append(b, oaiQwen3CoderToolsTail...)
	} else {
		b = append(b, oaiHermesToolsTail...)
	}
	if tc != nil {
		switch tc.Mode {
		case ToolChoiceRequired:
			b = append(b, "\n\nYou must call a function."...)
			req.Drop("tool_choice", oaiDropPromptTools+": asked for in the prompt, not enforced")
		case ToolChoiceTool:
			b = append(b, "\n\nYou must call the function "...)
			b = append(b, e.toolName(tc.Name)...)
			b = append(b, '.')
			req.Drop("tool_choice", oaiDropPromptTools+": asked for in the prompt, not enforced")
		}
	}
	if p := req.ParallelToolCalls; p != nil && !*p {
		req.Drop("parallel_tool_calls", oaiDropPromptTools)
	}
	return string(b)
}

// oaiAppendHermesTool appends one line of the <tools> block, the tool as
// JSON the way the Qwen templates print it (tojson: ", " and ": ").
func oaiAppendHermesTool(b []byte, name string, t *Tool) []byte {
	b = append(b, "\n{\"type\": \"function\", \"function\": {\"name\": "...)
	b = appendJSONString(b, name)
	if t.Description != "" {
		b = append(b, ", \"description\": "...)
		b = appendJSONString(b, t.Description)
	}
	b = append(b, ", \"parameters\": "...)
	b = oaiAppendSchemaJSON(b, t.Schema)
	return append(b, "}}"...)
}

// oaiAppendSchemaJSON appends a tool's schema on one line; a tool without
// one gets the empty object schema, as in the tools field.
func oaiAppendSchemaJSON(b []byte, schema json.RawMessage) []byte {
	if len(schema) == 0 {
		return append(b, `{"type":"object","properties":{}}`...)
	}
	return oaiAppendCompactJSON(b, schema)
}

// oaiAppendCompactJSON appends raw JSON without insignificant whitespace, so
// a pretty-printed schema or argument object stays on one line. Invalid
// JSON is appended as it is.
func oaiAppendCompactJSON(b []byte, raw []byte) []byte {
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return append(b, raw...)
	}
	return buf.Bytes()
}

// oaiAppendQwen3CoderTool appends one <function> of the <tools> block as
// the Qwen3-Coder template renders it: each property of the parameters
// schema as a <parameter> with its name, type, description and every other
// key as <KEY>VALUE</KEY>, then the other keys of the parameters schema
// (required, $schema, …) the same way.
func oaiAppendQwen3CoderTool(b []byte, name string, t *Tool) []byte {
	b = append(b, "\n<function>\n<name>"...)
	b = append(b, name...)
	b = append(b, "</name>"...)
	if t.Description != "" {
		b = append(b, "\n<description>"...)
		b = append(b, strings.TrimSpace(t.Description)...)
		b = append(b, "</description>"...)
	}
	b = append(b, "\n<parameters>"...)
	schema := gjson.ParseBytes(t.Schema)
	if props := schema.Get("properties"); props.IsObject() {
		props.ForEach(func(k, v gjson.Result) bool {
			b = append(b, "\n<parameter>\n<name>"...)
			b = append(b, k.String()...)
			b = append(b, "</name>"...)
			if typ := v.Get("type"); typ.Exists() {
				b = oaiAppendXMLValue(b, "type", typ)
			}
			if desc := v.Get("description"); desc.Exists() {
				b = append(b, "\n<description>"...)
				b = append(b, strings.TrimSpace(desc.String())...)
				b = append(b, "</description>"...)
			}
			b = oaiAppendXMLExtraKeys(b, v, "name", "type", "description")
			b = append(b, "\n</parameter>"...)
			return true
		})
	}
	b = oaiAppendXMLExtraKeys(b, schema, "type", "properties")
	return append(b, "\n</parameters>\n</function>"...)
}

// oaiAppendXMLExtraKeys appends \n<KEY>VALUE</KEY> for each key of obj not
// in handled, in the order of the schema.
func oaiAppendXMLExtraKeys(b []byte, obj gjson.Result, handled ...string) []byte {
	if !obj.IsObject() {
		return b
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		if key := k.String(); !slices.Contains(handled, key) {
			b = oaiAppendXMLValue(b, key, v)
		}
		return true
	})
	return b
}

// oaiAppendXMLValue appends \n<key>value</key>: a string as its text,
// objects and arrays as compact JSON, other values as their JSON text.
func oaiAppendXMLValue(b []byte, key string, v gjson.Result) []byte {
	b = append(b, "\n<"...)
	b = append(b, key...)
	b = append(b, '>')
	b = oaiAppendPromptValue(b, v)
	b = append(b, "</"...)
	b = append(b, key...)
	return append(b, '>')
}

// oaiAppendPromptValue appends a JSON value the way the Qwen3-Coder
// template prints it: strings raw, objects and arrays as compact JSON,
// numbers, booleans and null as their JSON text.
func oaiAppendPromptValue(b []byte, v gjson.Result) []byte {
	switch {
	case v.Type == gjson.String:
		return append(b, v.Str...)
	case v.IsObject() || v.IsArray():
		return oaiAppendCompactJSON(b, []byte(v.Raw))
	}
	return append(b, v.Raw...)
}

// appendPromptCalls appends, as the JSON string content of an assistant
// message, the turn's text followed by its tool calls written as the model
// writes them. The ids are not written: results follow in call order.
func (e *oaiRequestEncoder) appendPromptCalls(b []byte, m *Message) []byte {
	start := len(b)
	b = oaiAppendTextJoin(b, "", m.Parts, PartText, "")
	hasText := len(b)-start > len(`""`)
	var call []byte
	first := true
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != PartToolCall || p.ToolCall == nil {
			continue
		}
		call = call[:0]
		switch {
		case !first:
			call = append(call, '\n')
		case hasText && e.promptFormat == ToolCallsQwen3Coder:
			// The template puts a blank line between text and calls.
			call = append(call, "\n\n"...)
		case hasText:
			call = append(call, '\n')
		}
		first = false
		if e.promptFormat == ToolCallsQwen3Coder {
			call = e.appendQwen3CoderCall(call, p.ToolCall)
		} else {
			call = e.appendHermesCall(call, p.ToolCall)
		}
		b = oaiExtendJSONString(b, string(call))
	}
	return b
}

// appendHermesCall appends
// <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>.
func (e *oaiRequestEncoder) appendHermesCall(b []byte, tc *ToolCall) []byte {
	b = append(b, "<tool_call>\n{\"name\": "...)
	b = appendJSONString(b, e.toolName(tc.Name))
	b = append(b, ", \"arguments\": "...)
	args := strings.TrimSpace(tc.Arguments)
	switch {
	case args == "":
		b = append(b, "{}"...)
	case json.Valid([]byte(args)):
		b = oaiAppendCompactJSON(b, []byte(args))
	default:
		// Invalid JSON would make the example the model learns from
		// invalid too; it travels as a string.
		e.req.Drop("tool_call.arguments", "invalid JSON arguments are written into the prompt as a string")
		b = appendJSONString(b, tc.Arguments)
	}
	return append(b, "}\n</tool_call>"...)
}

// appendQwen3CoderCall appends
// <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>.
func (e *oaiRequestEncoder) appendQwen3CoderCall(b []byte, tc *ToolCall) []byte {
	b = append(b, "<tool_call>\n<function="...)
	b = append(b, e.toolName(tc.Name)...)
	b = append(b, ">\n"...)
	args := strings.TrimSpace(tc.Arguments)
	switch obj := gjson.Parse(args); {
	case args == "":
	case obj.IsObject() && gjson.Valid(args):
		obj.ForEach(func(k, v gjson.Result) bool {
			b = append(b, "<parameter="...)
			b = append(b, k.String()...)
			b = append(b, ">\n"...)
			b = oaiAppendPromptValue(b, v)
			b = append(b, "\n</parameter>\n"...)
			return true
		})
	default:
		// The format has no place for anything but named parameters.
		e.req.Drop("tool_call.arguments", "arguments that are not a JSON object are written into the prompt as they are")
		b = append(b, tc.Arguments...)
		b = append(b, '\n')
	}
	return append(b, "</function>\n</tool_call>"...)
}

// oaiHasToolResult reports whether parts hold a tool result.
func oaiHasToolResult(parts []Part) bool {
	for i := range parts {
		if parts[i].Type == PartToolResult && parts[i].ToolResult != nil {
			return true
		}
	}
	return false
}

// appendPromptUser appends a user turn holding tool results as one user
// message: the results in order, each in <tool_response> tags, then the
// turn's text, then its images and documents. The model tells the results
// apart by their order, so what a result holds besides text is left out
// rather than sent where it could be mistaken for another result's.
func (e *oaiRequestEncoder) appendPromptUser(b []byte, m *Message) []byte {
	e.media = e.media[:0]
	var text []byte
	results := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartToolResult:
			if p.ToolResult == nil {
				continue
			}
			if results > 0 {
				text = append(text, '\n')
			}
			results++
			text = e.appendPromptResult(text, p.ToolResult)
		case PartText:
		case PartImage, PartDocument:
			e.media = append(e.media, p)
		default:
			e.req.Drop("messages.user."+string(p.Type), "not valid in a user message")
		}
	}
	for i := range m.Parts {
		if m.Parts[i].Type == PartText {
			text = append(text, '\n')
			text = append(text, m.Parts[i].Text...)
		}
	}
	combined := Part{Type: PartText, Text: string(text)}
	e.scratch = append(e.scratch[:0], &combined)
	e.scratch = append(e.scratch, e.media...)
	return e.appendUserMessage(b, e.scratch)
}

// appendPromptResult appends <tool_response>\nTEXT\n</tool_response>.
func (e *oaiRequestEncoder) appendPromptResult(b []byte, tr *ToolResult) []byte {
	b = append(b, "<tool_response>\n"...)
	if tr.IsError {
		b = append(b, "Error: "...)
	}
	first := true
	for i := range tr.Content {
		p := &tr.Content[i]
		e.noteCacheControl(p)
		switch p.Type {
		case PartText:
			if !first {
				b = append(b, '\n')
			}
			first = false
			b = append(b, p.Text...)
		case PartImage, PartDocument:
			e.req.Drop("tool_result."+string(p.Type), oaiDropPromptTools+": tool results are sent as text")
		default:
			e.req.Drop("tool_result."+string(p.Type), "tool results carry text, images and documents only")
		}
	}
	return append(b, "\n</tool_response>"...)
}

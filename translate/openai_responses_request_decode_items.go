package translate

import (
	"fmt"
	"strings"
)

// respItemScan is what the walk of one input item found. A message's
// content and a tool output, the bulk of a conversation, are decoded
// during the walk when the item's type (and a message's role) came before
// them, as Codex writes items; otherwise their spans are kept and decoded
// after the walk.
type respItemScan struct {
	typ, role, content, output, name, arguments, callID, input, id, encrypted, summary jsonSpan

	typName, roleName      string
	contentSeen, partsDone bool // partsDone: content or output is decoded into buf
}

// respContentRole is the role whose part types a message's content may
// hold; "" for a role that is not a message role.
func respContentRole(role string) string {
	switch role {
	case "system", "developer":
		return "system"
	case "user", "assistant":
		return role
	}
	return ""
}

// respIsOutput reports whether an item type is a tool output.
func respIsOutput(typ string) bool {
	return typ == "function_call_output" || typ == "custom_tool_call_output"
}

// items decodes the input items, the array at data[i], in order, and
// returns the index after it.
func (d *respRequestDecoder) items(i int) int {
	d.leading, d.open = true, -1
	a := jsonOpenArray(d.data, i)
	for n := 0; d.nextElement(&a); n++ {
		a.i = d.item(a.i, n)
	}
	return a.i
}

// item decodes input item idx, the value at data[i], and returns the index
// after it.
func (d *respRequestDecoder) item(i, idx int) int {
	if d.kindAt(i) != jsonObject {
		d.fail(respAt(idx, respStageObject), respBadRequest(fmt.Sprintf("input[%d]", idx), "input[%d]: must be an object", idx))
		_, end := d.value(i)
		return end
	}
	var it respItemScan
	m := d.members(i)
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			break
		}
		switch key {
		case "type":
			if it.typ.kind == jsonAbsent {
				m.i = d.first(&it.typ, m.i)
				it.typName = d.str(it.typ)
				break
			}
			_, m.i = d.value(m.i)
		case "role":
			if it.role.kind == jsonAbsent {
				m.i = d.first(&it.role, m.i)
				it.roleName = d.str(it.role)
				break
			}
			_, m.i = d.value(m.i)
		case "content":
			if r := respContentRole(it.roleName); !it.contentSeen && it.typName == "message" && r != "" {
				d.buf, m.i = d.content(m.i, idx, "content", r, d.buf[:0])
				it.partsDone = true
			} else {
				m.i = d.first(&it.content, m.i)
			}
			it.contentSeen = true
		case "output":
			if it.output.kind == jsonAbsent && !it.partsDone && respIsOutput(it.typName) {
				start := m.i
				d.buf, m.i = d.toolOutput(m.i, idx, d.buf[:0])
				it.output = jsonSpan{start: start, end: m.i, kind: d.kindAt(start)}
				it.partsDone = true
			} else {
				m.i = d.first(&it.output, m.i)
			}
		case "name":
			m.i = d.first(&it.name, m.i)
		case "arguments":
			m.i = d.first(&it.arguments, m.i)
		case "call_id":
			m.i = d.first(&it.callID, m.i)
		case "input":
			m.i = d.first(&it.input, m.i)
		case "id":
			m.i = d.first(&it.id, m.i)
		case "encrypted_content":
			m.i = d.first(&it.encrypted, m.i)
		case "summary":
			m.i = d.first(&it.summary, m.i)
		default:
			_, m.i = d.value(m.i)
		}
	}
	if !d.bad {
		if it.typName == "web_search_call" {
			d.webSearchItem(d.data[i:m.i]) // openai_responses_server_tool_items.go
			return m.i
		}
		d.commit(idx, &it)
	}
	return m.i
}

// commit adds input item idx to the IR, once walked.
func (d *respRequestDecoder) commit(idx int, it *respItemScan) {
	at := respAt(idx, respStageItem)
	typ := it.typName
	if typ == "" && it.role.kind != jsonAbsent {
		typ = "message" // the easy form: {"role":…,"content":…}
	}
	switch typ {
	case "message":
		d.message(idx, it)
	case "function_call":
		name := d.str(it.name)
		if name == "" {
			d.fail(at, respBadRequest(fmt.Sprintf("input[%d].name", idx), "input[%d].name: a function name is required", idx))
			return
		}
		d.assistantPart(d.toolCallPart(d.callID(it), name, it.arguments))
	case "custom_tool_call":
		name := d.str(it.name)
		if name == "" {
			d.fail(at, respBadRequest(fmt.Sprintf("input[%d].name", idx), "input[%d].name: a tool name is required", idx))
			return
		}
		d.assistantPart(Part{Type: PartToolCall, ToolCall: &ToolCall{ID: d.callID(it), Name: name, Arguments: respCustomArguments(d.str(it.input))}})
	case "function_call_output", "custom_tool_call_output":
		id := d.str(it.callID)
		if id == "" {
			d.fail(at, respBadRequest(fmt.Sprintf("input[%d].call_id", idx), "input[%d].call_id: required in %s items", idx, typ))
			return
		}
		if !it.partsDone {
			d.buf = d.buf[:0]
			if it.output.kind != jsonAbsent {
				d.buf, _ = d.toolOutput(it.output.at(), idx, d.buf)
			}
		}
		d.toolResult(Part{Type: PartToolResult, ToolResult: &ToolResult{CallID: id, Content: oaiOwnParts(d.buf)}})
	case "reasoning":
		d.reasoningItem(it)
	case "item_reference":
		d.fail(at, respBadRequest(fmt.Sprintf("input[%d]", idx), "input[%d]: item_reference needs stored items; louter is stateless, send the items themselves", idx))
	case "compaction_trigger":
		// louter answers a trigger before translation (the gateway's
		// stored responses); one that gets here was not served, and
		// dropping it would answer a compaction request with a turn.
		d.fail(at, respBadRequest(fmt.Sprintf("input[%d]", idx), respCompactionTriggerMessage, idx))
	default:
		// file_search_call, local_shell_call, mcp_call,
		// compaction, ...: the record of hosted tools and OpenAI-side
		// features no other backend could read.
		d.drop(at, "input."+typ, "items of hosted tools and OpenAI-side features are not translated")
	}
}

// callID is a call item's call_id (what outputs refer to), or a new one
// for a client that sent none.
func (d *respRequestDecoder) callID(it *respItemScan) string {
	if id := d.str(it.callID); id != "" {
		return id
	}
	return oaiNewCallID()
}

// assistantPart adds a part the model produced to the assistant message of
// the turn being read, starting one if needed.
func (d *respRequestDecoder) assistantPart(p Part) {
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
func (d *respRequestDecoder) toolResult(p Part) {
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
func (d *respRequestDecoder) reasoningItem(it *respItemScan) {
	enc := d.str(it.encrypted)
	if strings.HasPrefix(d.str(it.id), respRedactedPrefix) {
		if enc != "" {
			d.assistantPart(Part{Type: PartRedactedThinking, Signature: enc})
		}
		return
	}
	var text strings.Builder
	for _, list := range [...]jsonSpan{it.summary, it.content} {
		for s := range d.each(list) {
			if t := d.str(d.get(s, "text")); t != "" {
				if text.Len() > 0 {
					text.WriteString("\n\n")
				}
				text.WriteString(t)
			}
		}
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
func (d *respRequestDecoder) message(idx int, it *respItemScan) {
	at := respAt(idx, respStageItem)
	role := it.roleName
	var parts []Part
	if r := respContentRole(role); r != "" {
		if !it.partsDone {
			d.buf = d.buf[:0]
			if it.content.kind != jsonAbsent {
				d.buf, _ = d.content(it.content.at(), idx, "content", r, d.buf)
			}
		}
		parts = d.buf
	}
	switch role {
	case "system", "developer":
		if d.leading {
			d.req.System = append(d.req.System, parts...)
		} else if len(parts) > 0 {
			d.req.Messages = append(d.req.Messages, Message{Role: RoleSystem, Parts: oaiOwnParts(parts)})
			d.open = -1
		}
	case "user":
		d.leading = false
		if d.open >= 0 && d.openRole == RoleUser {
			// Text sent along with tool outputs, or a second user item of
			// the same turn: one user message, results first.
			m := &d.req.Messages[d.open]
			m.Parts = append(m.Parts, parts...)
			d.toolRun = false
			return
		}
		d.req.Messages = append(d.req.Messages, Message{Role: RoleUser, Parts: oaiOwnParts(parts)})
		d.open, d.openRole, d.toolRun = len(d.req.Messages)-1, RoleUser, false
	case "assistant":
		d.leading = false
		for _, p := range parts {
			d.assistantPart(p)
		}
	case "":
		d.fail(at, respBadRequest(fmt.Sprintf("input[%d].role", idx), "input[%d].role: a role is required", idx))
	default:
		d.fail(at, respBadRequest(fmt.Sprintf("input[%d].role", idx), "input[%d].role: unknown role %q", idx, role))
	}
}

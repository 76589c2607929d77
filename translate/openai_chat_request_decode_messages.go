package translate

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// oaiMessageScan is what the walk of one message found. content and
// tool_calls, the bulk of a conversation, are decoded during the walk when
// the role came before them (as every client writes it); otherwise their
// spans are kept and decoded after the walk.
type oaiMessageScan struct {
	role, name, content, toolCalls, functionCall, refusal, audio, toolCallID jsonSpan
	reasoningContent, reasoning, reasoningDetails                            jsonSpan

	roleName               string
	contentDone            bool   // content was decoded into contentBuf during the walk
	callsDone              bool   // tool_calls was decoded into callsBuf during the walk
	folded                 []Part // signed thinking carried in the call ids
	contentSeen, callsSeen bool
}

// oaiContentRole is the role whose part types a message's content may
// hold (see content); "" for an unknown role.
func oaiContentRole(role string) string {
	switch role {
	case "system", "developer":
		return "system"
	case "user", "assistant":
		return role
	case "tool", "function":
		return "tool"
	}
	return ""
}

// messages decodes the conversation, the array at data[i], and returns the
// index after it.
func (d *oaiRequestDecoder) messages(i int) int {
	a := jsonOpenArray(d.data, i)
	n := 0
	for d.nextElement(&a) {
		a.i = d.message(a.i, n)
		n++
	}
	if n == 0 && !d.bad {
		d.fail(oaiAtMessages, oaiBadRequest("messages", "messages: at least one message is required"))
	}
	return a.i
}

// message decodes message idx, the value at data[i], and returns the index
// after it.
func (d *oaiRequestDecoder) message(i, idx int) int {
	if d.kindAt(i) != jsonObject {
		d.fail(oaiAt(idx, oaiStageObject), oaiBadRequest(fmt.Sprintf("messages[%d]", idx), "messages[%d]: must be an object", idx))
		_, end := d.value(i)
		return end
	}
	var ms oaiMessageScan
	m := d.members(i)
	for {
		key, ok := d.nextMember(&m)
		if !ok {
			break
		}
		switch key {
		case "role":
			if ms.role.kind == jsonAbsent {
				m.i = d.first(&ms.role, m.i)
				ms.roleName = d.str(ms.role)
				break
			}
			_, m.i = d.value(m.i)
		case "content":
			if r := oaiContentRole(ms.roleName); !ms.contentSeen && r != "" {
				d.contentBuf, m.i = d.content(m.i, idx, r, d.contentBuf[:0])
				ms.contentDone = true
			} else {
				m.i = d.first(&ms.content, m.i)
			}
			ms.contentSeen = true
		case "tool_calls":
			if !ms.callsSeen && ms.roleName == "assistant" {
				d.callsBuf, ms.folded, m.i = d.toolCalls(m.i, idx, d.callsBuf[:0])
				ms.callsDone = true
			} else {
				m.i = d.first(&ms.toolCalls, m.i)
			}
			ms.callsSeen = true
		case "name":
			m.i = d.first(&ms.name, m.i)
		case "function_call":
			m.i = d.first(&ms.functionCall, m.i)
		case "refusal":
			m.i = d.first(&ms.refusal, m.i)
		case "audio":
			m.i = d.first(&ms.audio, m.i)
		case "tool_call_id":
			m.i = d.first(&ms.toolCallID, m.i)
		case "reasoning_content":
			m.i = d.first(&ms.reasoningContent, m.i)
		case "reasoning":
			m.i = d.first(&ms.reasoning, m.i)
		case "reasoning_details":
			m.i = d.first(&ms.reasoningDetails, m.i)
		default:
			_, m.i = d.value(m.i)
		}
	}
	if !d.bad {
		d.commit(idx, &ms)
	}
	return m.i
}

// contentOf returns the content parts of a message, decoding them now if
// the walk could not. The parts are in contentBuf, valid until the next
// message.
func (d *oaiRequestDecoder) contentOf(ms *oaiMessageScan, idx int, role string) []Part {
	if ms.contentDone {
		return d.contentBuf
	}
	if ms.content.kind == jsonAbsent {
		return nil
	}
	d.contentBuf, _ = d.content(ms.content.at(), idx, role, d.contentBuf[:0])
	return d.contentBuf
}

// oaiOwnParts copies parts into a slice of their own (nil when empty).
func oaiOwnParts(parts []Part) []Part {
	if len(parts) == 0 {
		return nil
	}
	return append(make([]Part, 0, len(parts)), parts...)
}

// commit adds message idx to the IR, once walked.
func (d *oaiRequestDecoder) commit(idx int, ms *oaiMessageScan) {
	req := d.req
	if ms.name.isString() {
		d.drop(oaiAt(idx, oaiStageName), "messages.name", "participant names are not translated")
	}
	if !ms.role.isString() {
		d.fail(oaiAt(idx, oaiStageRole), oaiBadRequest(fmt.Sprintf("messages[%d].role", idx), "messages[%d].role: a role is required", idx))
		return
	}
	switch role := ms.roleName; role {
	case "system", "developer":
		parts := d.contentOf(ms, idx, "system")
		if d.leading {
			req.System = append(req.System, parts...)
		} else if len(parts) > 0 {
			req.Messages = append(req.Messages, Message{Role: RoleSystem, Parts: oaiOwnParts(parts)})
			d.toolRun = false
		}
	case "user":
		d.leading = false
		parts := d.contentOf(ms, idx, "user")
		if d.toolRun {
			// Text the user sent along with the tool results belongs to
			// the same turn, after the results (Anthropic requires the
			// results first).
			last := &req.Messages[len(req.Messages)-1]
			last.Parts = append(last.Parts, parts...)
			d.toolRun = false
		} else {
			req.Messages = append(req.Messages, Message{Role: RoleUser, Parts: oaiOwnParts(parts)})
		}
	case "assistant":
		d.leading = false
		req.Messages = append(req.Messages, d.assistant(idx, ms))
		d.toolRun = false
	case "tool", "function":
		d.leading = false
		part := d.toolResult(idx, ms, role)
		if d.toolRun {
			last := &req.Messages[len(req.Messages)-1]
			last.Parts = append(last.Parts, part)
		} else {
			req.Messages = append(req.Messages, Message{Role: RoleUser, Parts: []Part{part}})
			d.toolRun = true
		}
	default:
		d.fail(oaiAt(idx, oaiStageRole), oaiBadRequest(fmt.Sprintf("messages[%d].role", idx), "messages[%d].role: unknown role %q", idx, role))
	}
}

// assistant builds an assistant message: its reasoning, content, refusal
// and tool calls, in that order.
func (d *oaiRequestDecoder) assistant(idx int, ms *oaiMessageScan) Message {
	msg := Message{Role: RoleAssistant}
	var thinking Part
	if thinking.Text, thinking.textForm = d.reasoningText(ms); thinking.Text != "" {
		// Reasoning comes first, as it did when the model produced it. It
		// has no signature: OpenAI-compatible servers have none.
		thinking.Type = PartThinking
	}
	content := d.contentOf(ms, idx, "assistant")
	if !ms.callsDone && ms.toolCalls.kind != jsonAbsent {
		d.callsBuf, ms.folded, _ = d.toolCalls(ms.toolCalls.at(), idx, d.callsBuf[:0])
		ms.callsDone = true
	}
	var calls []Part
	if ms.callsDone {
		calls = d.callsBuf
	}
	var fnCall Part
	if fc := ms.functionCall; fc.kind == jsonObject {
		var f [2]jsonSpan
		d.pick(fc, f[:], "name", "arguments")
		if name := d.str(f[0]); name == "" {
			d.fail(oaiAt(idx, oaiStageFunctionCall), oaiBadRequest(fmt.Sprintf("messages[%d].function_call.name", idx),
				"messages[%d].function_call.name: a function name is required", idx))
		} else {
			id := oaiNewCallID()
			if d.pendingFunctions == nil {
				d.pendingFunctions = map[string]string{}
			}
			d.pendingFunctions[name] = id
			fnCall = d.toolCallPart(id, name, f[1])
		}
	}

	n := len(content) + len(calls)
	if thinking.Type != "" {
		n++
	}
	if ms.refusal.isString() {
		n++
	}
	if fnCall.Type != "" {
		n++
	}
	if n > 0 {
		msg.Parts = make([]Part, 0, n)
	}
	if thinking.Type != "" {
		msg.Parts = append(msg.Parts, thinking)
	}
	msg.Parts = append(msg.Parts, content...)
	if ms.refusal.isString() {
		msg.Parts = append(msg.Parts, d.textPart(ms.refusal))
	}
	msg.Parts = append(msg.Parts, calls...)
	oaiRestoreThinking(&msg, ms.folded)
	if fnCall.Type != "" {
		msg.Parts = append(msg.Parts, fnCall)
	}
	if a := ms.audio; a.kind != jsonAbsent && a.kind != jsonNull {
		d.drop(oaiAt(idx, oaiStageAudio), "messages.audio", "audio replies are not supported")
	}
	return msg
}

// reasoningText reads the reasoning an OpenAI-compatible server put on a
// message (see oaiReasoningText), with its escaped form when it is one
// string: the first non-empty of reasoning_content, reasoning and the texts
// of reasoning_details.
func (d *oaiRequestDecoder) reasoningText(ms *oaiMessageScan) (string, jsonForm) {
	if ms.reasoningContent.isString() {
		return d.text(ms.reasoningContent)
	}
	if ms.reasoning.isString() {
		return d.text(ms.reasoning)
	}
	if ms.reasoningDetails.kind != jsonArray {
		return "", jsonForm{}
	}
	var text string
	for detail := range d.each(ms.reasoningDetails) {
		if t := d.get(detail, "text"); t.kind == jsonString {
			text += d.str(t)
		}
	}
	return text, jsonForm{}
}

// toolCalls decodes an assistant message's tool_calls, the value at
// data[i], appending the calls to buf. It returns buf, the signed thinking
// blocks folded into the call ids, and the index after the value.
func (d *oaiRequestDecoder) toolCalls(i, idx int, buf []Part) ([]Part, []Part, int) {
	switch d.kindAt(i) {
	case jsonArray:
	case jsonNull:
		// No calls. (The gjson decoder took null for one call without a
		// name and rejected the message.)
		_, end := d.value(i)
		return buf, nil, end
	default:
		d.fail(oaiAt(idx, oaiStageToolCalls), oaiBadRequest(fmt.Sprintf("messages[%d].tool_calls", idx), "messages[%d].tool_calls: must be an array", idx))
		_, end := d.value(i)
		return buf, nil, end
	}
	var folded []Part
	a := jsonOpenArray(d.data, i)
	for j := 0; d.nextElement(&a); j++ {
		// type, id, and function.name and function.arguments with gjson's
		// path semantics (see getPath).
		var typ, id, name, args jsonSpan
		if d.kindAt(a.i) != jsonObject {
			_, a.i = d.value(a.i)
		} else {
			m := d.members(a.i)
			for {
				key, ok := d.nextMember(&m)
				if !ok {
					break
				}
				switch key {
				case "type":
					m.i = d.first(&typ, m.i)
				case "id":
					m.i = d.first(&id, m.i)
				case "function":
					if d.kindAt(m.i) != jsonObject {
						_, m.i = d.value(m.i)
						break
					}
					var f [2]jsonSpan
					m.i = d.pickAt(m.i, f[:], "name", "arguments")
					if name.kind == jsonAbsent {
						name = f[0]
					}
					if args.kind == jsonAbsent {
						args = f[1]
					}
				default:
					_, m.i = d.value(m.i)
				}
			}
			a.i = m.i
		}
		if d.bad {
			break
		}
		if t := d.str(typ); t != "" && t != "function" {
			d.drop(oaiAt(idx, oaiStageToolCalls), "messages.tool_calls."+t, "only function tool calls are supported")
			continue
		}
		if !name.isString() {
			d.fail(oaiAt(idx, oaiStageToolCalls), oaiBadRequest(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", idx, j),
				"messages[%d].tool_calls[%d].function.name: a function name is required", idx, j))
			continue
		}
		callID, blocks := oaiUnfoldThinking(d.str(id))
		folded = append(folded, blocks...)
		if callID == "" {
			callID = oaiNewCallID()
		}
		buf = append(buf, d.toolCallPart(callID, d.str(name), args))
	}
	return buf, folded, a.i
}

// toolCallPart makes a tool call part. The spec says arguments is a
// JSON-encoded string; a few servers send the object itself, which is kept
// as its raw JSON text.
func (d *reqScanner) toolCallPart(id, name string, args jsonSpan) Part {
	var a string
	switch args.kind {
	case jsonString:
		a = d.str(args)
	case jsonObject, jsonArray:
		a = d.rawString(args)
	}
	if strings.TrimSpace(a) == "" {
		a = "{}"
	}
	return Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name, Arguments: a}}
}

// oaiToolCallPart is toolCallPart for the gjson decoders of responses and
// of the Responses API.
func oaiToolCallPart(id, name string, args gjson.Result) Part {
	a := oaiArguments(args)
	if strings.TrimSpace(a) == "" {
		a = "{}"
	}
	return Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name, Arguments: a}}
}

// toolResult decodes a tool message, or a message of the deprecated role
// "function", into a tool result part.
func (d *oaiRequestDecoder) toolResult(idx int, ms *oaiMessageScan, role string) Part {
	tr := &ToolResult{}
	if role == "tool" {
		if !ms.toolCallID.isString() {
			d.fail(oaiAt(idx, oaiStageToolCallID), oaiBadRequest(fmt.Sprintf("messages[%d].tool_call_id", idx),
				"messages[%d].tool_call_id: required in tool messages", idx))
		}
		tr.CallID, _ = oaiUnfoldThinking(d.str(ms.toolCallID))
	} else {
		tr.Name = d.str(ms.name)
		if id, ok := d.pendingFunctions[tr.Name]; ok {
			tr.CallID = id
			delete(d.pendingFunctions, tr.Name)
		} else {
			tr.CallID = oaiNewCallID()
		}
	}
	tr.Content = oaiOwnParts(d.contentOf(ms, idx, "tool"))
	return Part{Type: PartToolResult, ToolResult: tr}
}

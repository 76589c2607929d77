package translate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Anthropic's context editing (beta context-management-2025-06-27, and
// compact-2026-01-12 for compaction) lets a client keep its full history
// and have the server trim what the model sees: the request's
// context_management names edits, the server applies them to the prompt,
// and the answer says what it removed (context_management.applied_edits,
// on the message and on a stream's message_delta). Claude Code sends
// {"edits":[{"type":"clear_thinking_20251015","keep":"all"}]} on every
// request, and clear_tool_uses_20250919 edits when API context management
// is on.
//
// A backend that speaks the Messages API gets the member as the client
// sent it (ContextCodec). For every other backend EditContext applies the
// edits to the IR before it is encoded, as Anthropic applies them to the
// prompt, and records what it removed for the Anthropic client's answer.
// It differs from Anthropic's server in three ways, bridged so:
//
//   - Token counts are louter's estimate of the request as the backend
//     counts it (the count function), not Anthropic's tokenizer: a trigger
//     fires, and cleared_input_tokens is reported, by the estimate.
//   - Anthropic's placeholder for a cleared tool result is not public;
//     ClearedToolResult is louter's, the same on every request, so that a
//     backend's prefix cache stays valid from the cleared point on.
//   - compact_20260112 needs the model to write a summary: past the
//     edit's trigger, the caller's Summarizer (louter's handler asks the
//     routed backend, a second call) summarises the history before the
//     newest user turn, which the summary then replaces as a compaction
//     block's would; the answer starts with that compaction block
//     (ContextManagement.Compacted). Without a Summarizer a request past
//     the trigger is refused with a 400 naming the edit (never sent
//     uncompacted as if it had been). A compaction block the client sends
//     back is honoured on every translated request: what precedes it is
//     left out and its summary is sent in its place (CompactionPoint).
//
// Like Anthropic's, the edits are a pure function of the request: the
// client keeps the whole history and sends it every time.

// ClearedToolResult replaces the content of a tool result that
// clear_tool_uses_20250919 cleared.
const ClearedToolResult = "[tool result cleared by context management]"

// The edit types.
const (
	EditClearToolUses = "clear_tool_uses_20250919"
	EditClearThinking = "clear_thinking_20251015"
	EditCompact       = "compact_20260112"
)

// ContextManagement is what a request carries of Anthropic's context
// management: the client's context_management member and the compaction
// block of its history.
type ContextManagement struct {
	// Raw is the client's context_management object, for a backend that
	// applies the edits itself; nil once louter applied them or left
	// them out.
	Raw json.RawMessage
	// Compaction is the last compaction block of the history with a
	// summary, or nil.
	Compaction *CompactionPoint
	// Applied is what EditContext removed, edit by edit, for the
	// client's answer; Reported says louter applied the edits, so the
	// answer carries context_management.applied_edits (empty when no
	// edit removed anything), as Anthropic's does.
	Applied  []AppliedEdit
	Reported bool
	// Compacted is the compaction louter made (compact_20260112 past its
	// trigger): its Summary is the compaction block the answer starts
	// with. Paused says the edit asked for pause_after_compaction: the
	// answer is that block alone, with stop reason StopCompaction, and
	// the backend is not asked (the caller's part).
	Compacted *CompactionPoint
	Paused    bool
}

// Summarizer writes the summary of history (a request whose messages are
// the history to compact; its system prompt and tools are the client's)
// for compact_20260112, following instructions when not "" (the edit's
// instructions). An *Error it returns is passed on to the client as is.
type Summarizer func(history *Request, instructions string) (string, error)

// CompactionPoint is a compaction block in the history: its message and
// the summary it holds.
type CompactionPoint struct {
	Message int // index in Request.Messages
	Summary string
}

// AppliedEdit is one entry of context_management.applied_edits.
type AppliedEdit struct {
	Type                 string
	ClearedInputTokens   int
	ClearedToolUses      int // clear_tool_uses_20250919
	ClearedThinkingTurns int // clear_thinking_20251015
}

// ContextEditing is how a backend gets a request's context management.
type ContextEditing string

// The modes.
const (
	// ContextAuto: ContextNative where the backend's codec carries
	// context_management (ContextCodec), ContextPolyfill elsewhere.
	ContextAuto ContextEditing = ""
	// ContextNative sends the client's context_management to the backend.
	ContextNative ContextEditing = "native"
	// ContextPolyfill applies the edits to the request (EditContext).
	ContextPolyfill ContextEditing = "polyfill"
	// ContextOff leaves context_management out, recorded as dropped.
	ContextOff ContextEditing = "off"
)

// ContextCodec is a codec whose backends apply Anthropic's context
// editing themselves, given the client's context_management.
//
// Default: they do not; louter applies the edits (EditContext).
type ContextCodec interface {
	// NativeContextEditing reports whether the protocol's request encoder
	// sends Request.ContextManagement.Raw to the backend.
	NativeContextEditing() bool
}

// NativeContextEditing reports whether backends of protocol p apply
// context_management themselves.
func NativeContextEditing(p Protocol) bool {
	c, ok := codecAs[ContextCodec](p)
	return ok && c.NativeContextEditing()
}

// EditContext prepares req's context management for a backend of protocol
// backend in mode: a compaction block's summary replaces the history
// before it; then the client's edits are sent on (native), applied to req
// and reported (polyfill), or left out (off). count estimates req's input
// tokens as the backend counts them; nil counts by text length. summarize
// writes compact_20260112's summary; nil: a compaction past the trigger is
// refused.
//
// The error is a 400 naming the offending edit (an edit type louter does
// not know, a setting of the wrong shape, or a compaction it would have to
// make without summarize), or summarize's failure. A request without
// context management is left alone.
func EditContext(req *Request, backend Protocol, mode ContextEditing, count func(*Request) int, summarize Summarizer) *Error {
	return editContext(req, backend, mode, count, summarize, nil)
}

// CountContext is EditContext for a token count (Anthropic's
// count_tokens), which counts the request as the model would see it: the
// clearing edits are applied, and reported, as for the request itself. A
// compact_20260112 edit is not: compacting needs a summary by the model,
// which a count does not ask for, so a request past the edit's trigger is
// counted uncompacted — the count the compaction would start from — and
// the edit is neither applied nor refused.
//
// original is a copy of req as it was before louter's edits, for the
// count Anthropic reports next to the edited one (original_input_tokens):
// nil when louter applies none (the request has no context_management, or
// the backend applies it itself). The edits copy what they change, so
// original shares the rest with req.
func CountContext(req *Request, backend Protocol, mode ContextEditing, count func(*Request) int) (original *Request, err *Error) {
	if err = editContext(req, backend, mode, count, nil, &original); err != nil {
		return nil, err
	}
	return original, nil
}

// editContext is EditContext; with snapshot, a count's (CountContext): it
// sets *snapshot to a copy of req as it is before the edits, when louter
// applies them, and leaves compaction out.
func editContext(req *Request, backend Protocol, mode ContextEditing, count func(*Request) int, summarize Summarizer, snapshot **Request) *Error {
	cm := req.ContextManagement
	if cm == nil {
		return nil
	}
	if cm.Compaction != nil {
		applyCompaction(req, cm.Compaction)
		cm.Compaction = nil
	}
	if cm.Raw == nil {
		return nil
	}
	if mode == ContextAuto {
		mode = ContextPolyfill
		if NativeContextEditing(backend) {
			mode = ContextNative
		}
	}
	switch mode {
	case ContextNative:
		return nil
	case ContextOff:
		cm.Raw = nil
		req.Drop("context_management", "context editing is off for this backend: the edits were not applied")
		return nil
	}
	edits, err := parseContextEdits(cm.Raw)
	if err != nil {
		return err
	}
	if count == nil {
		count = roughTokens
	}
	if snapshot != nil {
		before := *req
		*snapshot = &before
	}
	cm.Raw, cm.Reported = nil, true
	for i := range edits {
		ed := &edits[i]
		var applied AppliedEdit
		var e *Error
		switch ed.typ {
		case EditClearThinking:
			applied = clearThinking(req, ed, count)
		case EditClearToolUses:
			applied = clearToolUses(req, ed, count)
		case EditCompact:
			if snapshot != nil {
				continue // CountContext: counted uncompacted
			}
			applied, e = compactPolyfill(req, ed, i, count, summarize)
		}
		if e != nil {
			return e
		}
		if applied.Type == "" {
			continue
		}
		cm.Applied = append(cm.Applied, applied)
		if applied.Type == EditCompact {
			req.Drop("context_management."+applied.Type, fmt.Sprintf("louter compacted the history before the newest user turn (~%d input tokens) into a summary by the model, for a backend without context editing", applied.ClearedInputTokens))
			continue
		}
		n := applied.ClearedToolUses
		what := "tool uses"
		if applied.Type == EditClearThinking {
			n, what = applied.ClearedThinkingTurns, "thinking turns"
		}
		req.Drop("context_management."+applied.Type, fmt.Sprintf("louter cleared %d %s (~%d input tokens) for a backend without context editing", n, what, applied.ClearedInputTokens))
	}
	return nil
}

// contextEdit is one parsed edit.
type contextEdit struct {
	typ string
	// trigger: the kind ("input_tokens" or "tool_uses") and threshold.
	triggerKind  string
	trigger      int
	keep         int  // tool uses or thinking turns to keep
	keepAll      bool // clear_thinking's keep "all"
	clearAtLeast int
	exclude      map[string]bool
	// clearInputs: every cleared tool use's input (all), or those of the
	// tools named.
	clearInputsAll bool
	clearInputs    map[string]bool
	// compact_20260112's pause_after_compaction and instructions.
	pauseAfter   bool
	instructions string
}

// parseContextEdits reads context_management.edits, refusing what
// Anthropic would refuse for its shape.
func parseContextEdits(raw json.RawMessage) ([]contextEdit, *Error) {
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return nil, anthBadParam("context_management", "context_management: must be an object")
	}
	var bad *Error
	root.ForEach(func(k, _ gjson.Result) bool {
		if k.Str != "edits" {
			bad = anthBadParam("context_management."+k.Str, "context_management."+k.Str+": Extra inputs are not permitted")
		}
		return bad == nil
	})
	if bad != nil {
		return nil, bad
	}
	list := root.Get("edits")
	if list.Exists() && !list.IsArray() {
		return nil, anthBadParam("context_management.edits", "context_management.edits: must be an array")
	}
	var edits []contextEdit
	for i, v := range list.Array() {
		at := "context_management.edits." + strconv.Itoa(i)
		if !v.IsObject() {
			return nil, anthBadParam(at, at+": must be an object")
		}
		ed, err := parseContextEdit(v, at)
		if err != nil {
			return nil, err
		}
		if ed.typ == EditClearThinking && i > 0 {
			return nil, anthBadParam(at+".type", at+": clear_thinking_20251015 must be the first edit when edits are combined")
		}
		edits = append(edits, ed)
	}
	return edits, nil
}

// contextEditMembers are the members each edit type takes.
var contextEditMembers = map[string]map[string]bool{
	EditClearToolUses: {"type": true, "trigger": true, "keep": true, "clear_at_least": true, "exclude_tools": true, "clear_tool_inputs": true},
	EditClearThinking: {"type": true, "keep": true},
	EditCompact:       {"type": true, "trigger": true, "pause_after_compaction": true, "instructions": true},
}

func parseContextEdit(v gjson.Result, at string) (contextEdit, *Error) {
	ed := contextEdit{typ: v.Get("type").String()}
	members, ok := contextEditMembers[ed.typ]
	if !ok {
		return ed, anthBadParam(at+".type", fmt.Sprintf("%s.type: unknown context management edit type %q (louter applies %s, %s and %s)", at, ed.typ, EditClearToolUses, EditClearThinking, EditCompact))
	}
	var bad *Error
	v.ForEach(func(k, _ gjson.Result) bool {
		if !members[k.Str] {
			bad = anthBadParam(at+"."+k.Str, at+"."+k.Str+": Extra inputs are not permitted")
		}
		return bad == nil
	})
	if bad != nil {
		return ed, bad
	}
	var err *Error
	switch ed.typ {
	case EditClearToolUses:
		ed.triggerKind, ed.trigger = "input_tokens", 100000
		if ed.triggerKind, ed.trigger, err = countSetting(v.Get("trigger"), at+".trigger", ed.triggerKind, ed.trigger, "input_tokens", "tool_uses"); err != nil {
			return ed, err
		}
		if _, ed.keep, err = countSetting(v.Get("keep"), at+".keep", "tool_uses", 3, "tool_uses"); err != nil {
			return ed, err
		}
		if _, ed.clearAtLeast, err = countSetting(v.Get("clear_at_least"), at+".clear_at_least", "input_tokens", 0, "input_tokens"); err != nil {
			return ed, err
		}
		if ed.exclude, err = nameSet(v.Get("exclude_tools"), at+".exclude_tools"); err != nil {
			return ed, err
		}
		switch ci := v.Get("clear_tool_inputs"); {
		case !ci.Exists() || ci.Type == gjson.Null || ci.Type == gjson.False:
		case ci.Type == gjson.True:
			ed.clearInputsAll = true
		default:
			if ed.clearInputs, err = nameSet(ci, at+".clear_tool_inputs"); err != nil {
				return ed, err
			}
		}
	case EditClearThinking:
		keep := v.Get("keep")
		if keep.Type == gjson.String && keep.Str == "all" {
			ed.keepAll = true
			break
		}
		if _, ed.keep, err = countSetting(keep, at+".keep", "thinking_turns", 1, "thinking_turns"); err != nil {
			return ed, err
		}
	case EditCompact:
		if _, ed.trigger, err = countSetting(v.Get("trigger"), at+".trigger", "input_tokens", 150000, "input_tokens"); err != nil {
			return ed, err
		}
		switch p := v.Get("pause_after_compaction"); p.Type {
		case gjson.True:
			ed.pauseAfter = true
		case gjson.False, gjson.Null:
		default:
			if p.Exists() {
				return ed, anthBadParam(at+".pause_after_compaction", at+".pause_after_compaction: must be a boolean")
			}
		}
		switch ins := v.Get("instructions"); ins.Type {
		case gjson.String:
			ed.instructions = ins.Str
		case gjson.Null:
		default:
			if ins.Exists() {
				return ed, anthBadParam(at+".instructions", at+".instructions: must be a string")
			}
		}
	}
	return ed, nil
}

// countSetting reads a {"type":kind,"value":n} setting at path: the
// default kind and value when absent, a 400 when its type is not one of
// kinds or its value not a non-negative integer.
func countSetting(v gjson.Result, path, defKind string, def int, kinds ...string) (string, int, *Error) {
	if !v.Exists() || v.Type == gjson.Null {
		return defKind, def, nil
	}
	if !v.IsObject() {
		return "", 0, anthBadParam(path, path+": must be an object with type and value")
	}
	kind := v.Get("type").String()
	if !slices.Contains(kinds, kind) {
		return "", 0, anthBadParam(path+".type", fmt.Sprintf("%s.type: %q is not one of %s", path, kind, strings.Join(kinds, ", ")))
	}
	n := v.Get("value")
	if n.Type != gjson.Number || n.Num < 0 || n.Num != float64(int64(n.Num)) {
		return "", 0, anthBadParam(path+".value", path+".value: must be a non-negative integer")
	}
	return kind, int(n.Int()), nil
}

// nameSet reads an array of tool names.
func nameSet(v gjson.Result, path string) (map[string]bool, *Error) {
	if !v.Exists() || v.Type == gjson.Null {
		return nil, nil
	}
	if !v.IsArray() {
		return nil, anthBadParam(path, path+": must be an array of tool names")
	}
	set := map[string]bool{}
	for _, n := range v.Array() {
		if n.Type != gjson.String {
			return nil, anthBadParam(path, path+": must be an array of tool names")
		}
		set[n.Str] = true
	}
	return set, nil
}

// roughTokens is the count EditContext uses without a better one: a
// token per four bytes of text.
func roughTokens(req *Request) int {
	n := 0
	add := func(parts []Part) {
		for i := range parts {
			p := &parts[i]
			n += len(p.Text) + len(p.Signature)
			if p.ToolCall != nil {
				n += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				for j := range p.ToolResult.Content {
					n += len(p.ToolResult.Content[j].Text)
				}
			}
		}
	}
	add(req.System)
	for i := range req.Messages {
		add(req.Messages[i].Parts)
	}
	return n / 4
}

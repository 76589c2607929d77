package translate

import "fmt"

// The edits themselves, applied to the IR (see context_edits.go). Each
// changes req only when it applies, and returns what it removed; an edit
// that removed nothing returns a zero AppliedEdit and is not reported.

// clearThinking applies clear_thinking_20251015: the thinking of every
// assistant turn but the newest ed.keep that have some is removed. A turn
// is what the assistant says between two user messages with content of
// their own: its tool calls, and its messages after their results, are
// one turn, as in Anthropic's count of thinking turns. A message whose
// only content is thinking keeps it (removing it would leave an empty
// message, which backends refuse).
func clearThinking(req *Request, ed *contextEdit, count func(*Request) int) AppliedEdit {
	if ed.keepAll {
		return AppliedEdit{}
	}
	turn := make([]int, len(req.Messages)) // each message's turn
	var withThinking []int                 // the turns with thinking, oldest first
	t := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == RoleUser && !onlyToolResults(m.Parts) {
			t++
		}
		turn[i] = t
		if m.Role == RoleAssistant && hasThinking(m.Parts) && (len(withThinking) == 0 || withThinking[len(withThinking)-1] != t) {
			withThinking = append(withThinking, t)
		}
	}
	if len(withThinking) <= ed.keep {
		return AppliedEdit{}
	}
	firstKept := t + 1 // keep 0: no turn keeps its thinking
	if ed.keep > 0 {
		firstKept = withThinking[len(withThinking)-ed.keep]
	}
	before := count(req)
	msgs := cloneMessages(req.Messages)
	cleared := map[int]bool{}
	for i := range msgs {
		if turn[i] >= firstKept || msgs[i].Role != RoleAssistant || !hasThinking(msgs[i].Parts) {
			continue
		}
		kept := make([]Part, 0, len(msgs[i].Parts))
		for _, p := range msgs[i].Parts {
			if p.Type != PartThinking && p.Type != PartRedactedThinking {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			continue
		}
		msgs[i].Parts = kept
		cleared[turn[i]] = true
	}
	if len(cleared) == 0 {
		return AppliedEdit{}
	}
	req.Messages = msgs
	return AppliedEdit{Type: EditClearThinking, ClearedThinkingTurns: len(cleared), ClearedInputTokens: max(before-count(req), 0)}
}

// onlyToolResults reports whether parts hold tool results and nothing
// else: a user message that continues the assistant's turn.
func onlyToolResults(parts []Part) bool {
	for i := range parts {
		if parts[i].Type != PartToolResult {
			return false
		}
	}
	return len(parts) > 0
}

func hasThinking(parts []Part) bool {
	for i := range parts {
		if parts[i].Type == PartThinking || parts[i].Type == PartRedactedThinking {
			return true
		}
	}
	return false
}

// toolUse is a tool call of the history with where its call and its
// result are (result -1 when no result answers it).
type toolUse struct {
	msg, part   int
	resMsg, res int
	name        string
}

// clearToolUses applies clear_tool_uses_20250919. Past its trigger (the
// request's input tokens, or its tool uses, above the value) every tool
// use but the newest ed.keep has its result replaced with
// ClearedToolResult, oldest first, except those of the tools
// exclude_tools names; clear_tool_inputs also empties their inputs. When
// that would clear fewer than clear_at_least input tokens, nothing is
// cleared: clearing breaks the backend's prompt cache, and is done only
// when it is worth it.
func clearToolUses(req *Request, ed *contextEdit, count func(*Request) int) AppliedEdit {
	uses := toolUses(req.Messages)
	before := -1
	switch ed.triggerKind {
	case "tool_uses":
		if len(uses) <= ed.trigger {
			return AppliedEdit{}
		}
	default:
		if before = count(req); before <= ed.trigger {
			return AppliedEdit{}
		}
	}
	if len(uses) <= ed.keep {
		return AppliedEdit{}
	}
	var clear []toolUse
	for _, u := range uses[:len(uses)-ed.keep] {
		if !ed.exclude[u.name] {
			clear = append(clear, u)
		}
	}
	if len(clear) == 0 {
		return AppliedEdit{}
	}
	if before < 0 {
		before = count(req)
	}
	msgs := cloneMessages(req.Messages)
	placeholder := []Part{{Type: PartText, Text: ClearedToolResult}}
	for _, u := range clear {
		if u.res >= 0 {
			p := &msgs[u.resMsg].Parts[u.res]
			tr := *p.ToolResult
			tr.Content = placeholder
			p.ToolResult = &tr
		}
		if ed.clearInputsAll || ed.clearInputs[u.name] {
			p := &msgs[u.msg].Parts[u.part]
			tc := *p.ToolCall
			tc.Arguments = "{}"
			p.ToolCall = &tc
		}
	}
	edited := *req
	edited.Messages = msgs
	saved := max(before-count(&edited), 0)
	if saved < ed.clearAtLeast {
		return AppliedEdit{}
	}
	req.Messages = msgs
	return AppliedEdit{Type: EditClearToolUses, ClearedToolUses: len(clear), ClearedInputTokens: saved}
}

// toolUses lists the tool calls of the assistant messages, oldest first,
// with their results.
func toolUses(msgs []Message) []toolUse {
	var uses []toolUse
	byID := map[string]int{}
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			switch {
			case p.Type == PartToolCall && p.ToolCall != nil && msgs[i].Role == RoleAssistant:
				byID[p.ToolCall.ID] = len(uses)
				uses = append(uses, toolUse{msg: i, part: j, resMsg: -1, res: -1, name: p.ToolCall.Name})
			case p.Type == PartToolResult && p.ToolResult != nil:
				if k, ok := byID[p.ToolResult.CallID]; ok && uses[k].res < 0 {
					uses[k].resMsg, uses[k].res = i, j
				}
			}
		}
	}
	return uses
}

// cloneMessages copies msgs and each message's parts, so that an edit
// changes neither the decoded request's slices nor what they point at.
func cloneMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, Parts: append([]Part(nil), m.Parts...)}
	}
	return out
}

// compactPolyfill is compact_20260112 on a backend without it: below its
// trigger nothing is to be done; past it summarize writes the summary of
// the history before the newest user turn, which then stands in for that
// history as a compaction block's would (applyCompaction), and the answer
// starts with the block (ContextManagement.Compacted; with
// pause_after_compaction it is the whole answer: Paused). Without summarize
// the request is refused: sending it uncompacted would hide from the
// client that its context was not managed.
func compactPolyfill(req *Request, ed *contextEdit, i int, count func(*Request) int, summarize Summarizer) (AppliedEdit, *Error) {
	n := count(req)
	if n <= ed.trigger {
		return AppliedEdit{}, nil
	}
	at := fmt.Sprintf("context_management.edits.%d", i)
	if summarize == nil {
		return AppliedEdit{}, anthBadParam(at, fmt.Sprintf("%s: compact_20260112 is not available here: the request (~%d input tokens) is past the edit's trigger (%d), and compacting needs a summary by the model. Compact on the client side, raise the trigger, or route the model to an Anthropic backend.", at, n, ed.trigger))
	}
	k := len(req.Messages) - 1 // the newest user turn
	for k >= 0 && (req.Messages[k].Role != RoleUser || onlyToolResults(req.Messages[k].Parts)) {
		k--
	}
	if k <= 0 {
		return AppliedEdit{}, nil // no history before it to compact
	}
	hist := *req
	hist.Messages = req.Messages[:k:k]
	hist.ContextManagement, hist.Stream, hist.Dropped = nil, false, nil
	text, err := summarize(&hist, ed.instructions)
	if err != nil {
		if e, ok := err.(*Error); ok {
			return AppliedEdit{}, e
		}
		return AppliedEdit{}, &Error{Status: 502, Kind: ErrAPI, Param: at, Message: at + ": compacting the history failed: " + err.Error()}
	}
	cp := &CompactionPoint{Message: k, Summary: text}
	applyCompaction(req, cp)
	req.ContextManagement.Compacted, req.ContextManagement.Paused = cp, ed.pauseAfter
	return AppliedEdit{Type: EditCompact, ClearedInputTokens: max(n-count(req), 0)}, nil
}

// applyCompaction honours a compaction block of the history as Anthropic
// does: the messages before it are left out and its summary stands in
// for them, as the first user content. The message that held the block
// is dropped when the block was all it held.
func applyCompaction(req *Request, cp *CompactionPoint) {
	if cp.Message < 0 || cp.Message >= len(req.Messages) {
		return
	}
	rest := req.Messages[cp.Message:]
	if len(rest[0].Parts) == 0 {
		rest = rest[1:]
	}
	summary := Part{Type: PartText, Text: cp.Summary}
	msgs := make([]Message, 0, len(rest)+1)
	if len(rest) > 0 && rest[0].Role == RoleUser {
		msgs = append(msgs, Message{Role: RoleUser, Parts: append([]Part{summary}, rest[0].Parts...)})
		rest = rest[1:]
	} else {
		msgs = append(msgs, Message{Role: RoleUser, Parts: []Part{summary}})
	}
	req.Messages = append(msgs, rest...)
	req.Drop("messages.content.compaction", "the history before the compaction block is left out; its summary stands in for it")
}

package translate

import (
	"bytes"
	"strings"
)

// This file writes the Anthropic request's settings: tools and tool_choice,
// thinking and output_config, stop sequences and sampling.
// appendTools appends tools and tool_choice.
func (e *anthRequestEncoder) appendTools(b []byte) []byte {
	req := e.req
	tc := req.ToolChoice
	var allowed map[string]bool
	if tc != nil && len(tc.Allowed) > 0 && tc.Mode != ToolChoiceTool {
		// Anthropic cannot restrict which tools may be called; offering
		// only the allowed ones comes closest.
		allowed = make(map[string]bool, len(tc.Allowed))
		for _, name := range tc.Allowed {
			allowed[name] = true
		}
		req.Drop("tool_choice.allowed_tools", "approximated by sending only the allowed tools")
	}
	n := 0
	for i := range req.Tools {
		t := &req.Tools[i]
		if allowed != nil && !allowed[t.Name] {
			continue
		}
		if n == 0 {
			b = append(b, `,"tools":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"name":`...)
		b = appendJSONString(b, t.Name)
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONText(b, t.Description, t.descForm)
		}
		b = append(b, `,"input_schema":`...)
		if len(bytes.TrimSpace(t.Schema)) == 0 || bytes.Equal(t.Schema, []byte("null")) {
			b = append(b, `{"type":"object","properties":{}}`...)
		} else {
			b = append(b, t.Schema...) // untouched
		}
		if t.Strict != nil {
			b = append(b, `,"strict":`...)
			b = appendJSONBool(b, *t.Strict)
		}
		b = anthAppendCacheControl(b, t.CacheControl)
	}
	for i := range req.ServerTools {
		if n == 0 {
			b = append(b, `,"tools":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = e.appendServerTool(b, &req.ServerTools[i])
	}
	if n > 0 {
		b = append(b, ']')
	}

	noParallel := req.ParallelToolCalls != nil && !*req.ParallelToolCalls
	if n == 0 {
		// Anthropic rejects a tool_choice without tools; without tools
		// there is nothing it could say anyway.
		return b
	}
	mode := ToolChoiceAuto
	name := ""
	if tc != nil {
		mode, name = tc.Mode, tc.Name
	} else if !noParallel {
		return b
	}
	switch mode {
	case ToolChoiceRequired:
		b = append(b, `,"tool_choice":{"type":"any"`...)
	case ToolChoiceTool:
		if name == "" {
			b = append(b, `,"tool_choice":{"type":"any"`...)
			break
		}
		b = append(b, `,"tool_choice":{"type":"tool","name":`...)
		b = appendJSONString(b, name)
	case ToolChoiceNone:
		// tool_choice none takes no disable_parallel_tool_use: no tool
		// is called at all.
		return append(b, `,"tool_choice":{"type":"none"}`...)
	default:
		b = append(b, `,"tool_choice":{"type":"auto"`...)
	}
	if noParallel {
		b = append(b, `,"disable_parallel_tool_use":true`...)
	}
	return append(b, '}')
}

var anthThinkingDisabled = []byte(`{"type":"disabled"}`)

// thinking returns the thinking object to send (nil for none) and the
// output_config effort, adjusting *maxTokens so that the budget fits.
func (e *anthRequestEncoder) thinking(maxTokens *int) (thinking []byte, effort string) {
	req := e.req
	r := req.Reasoning
	if r == nil {
		return nil, ""
	}
	mode, budget := r.Mode, r.BudgetTokens
	switch mode {
	case ReasoningDisabled:
		return anthThinkingDisabled, ""
	case ReasoningDefault:
		switch {
		case r.Effort == "":
			return nil, ""
		case r.Effort == "none":
			return anthThinkingDisabled, ""
		case anthEffortBudgets[r.Effort] > 0:
			// An effort without Anthropic's adaptive mode becomes a
			// budget: every thinking model accepts one.
			mode, budget = ReasoningEnabled, anthEffortBudgets[r.Effort]
		default:
			req.Drop("reasoning_effort", "unknown effort "+r.Effort)
			return nil, ""
		}
	case ReasoningEnabled:
		if budget <= 0 {
			budget = anthEffortBudgets[r.Effort]
			if budget == 0 {
				budget = anthEffortBudgets["medium"]
			}
		}
	case ReasoningAdaptive:
		if anthEfforts[r.Effort] {
			effort = r.Effort
		} else if r.Effort != "" {
			req.Drop("output_config.effort", "unknown effort "+r.Effort)
		}
	}

	if tc := req.ToolChoice; tc != nil && (tc.Mode == ToolChoiceRequired || tc.Mode == ToolChoiceTool) {
		req.Drop("thinking", "Anthropic does not allow thinking with a forced tool choice")
		return anthThinkingDisabled, ""
	}
	if e.unsignedToolTurn() {
		req.Drop("thinking", "history has tool calls without signed thinking blocks")
		return anthThinkingDisabled, ""
	}

	var b []byte
	if mode == ReasoningAdaptive {
		b = append(b, `{"type":"adaptive"`...)
	} else {
		// Anthropic requires 1024 <= budget_tokens < max_tokens. The
		// client's max_tokens bounds the whole answer, so the budget is
		// clamped under it rather than the limit raised; only when
		// max_tokens cannot hold even the minimum budget is it raised,
		// by that budget, keeping the room the client asked for.
		budget = max(budget, anthMinThinkingBudget)
		switch {
		case req.MaxTokens <= 0:
			// No limit given: room for the budget plus the default answer.
			*maxTokens = budget + anthDefaultMaxTokens
		case budget >= *maxTokens && *maxTokens > anthMinThinkingBudget:
			budget = *maxTokens - 1
		case budget >= *maxTokens:
			budget = anthMinThinkingBudget
			*maxTokens += budget
			req.Drop("max_tokens", "raised to make room for the minimum thinking budget")
		}
		b = append(b, `{"type":"enabled","budget_tokens":`...)
		b = appendJSONInt(b, int64(budget))
	}
	switch r.Display {
	case "":
	case "summarized", "omitted":
		b = append(b, `,"display":`...)
		b = appendJSONString(b, r.Display)
	default:
		req.Drop("thinking.display", "Anthropic knows only summarized and omitted")
	}
	return append(b, '}'), effort
}

// unsignedToolTurn reports whether the tool-use cycle in progress has an
// assistant turn that calls tools but does not start with a signed thinking
// block. With thinking on, Anthropic rejects such a history ("expected
// thinking or redacted_thinking"). The cycle in progress is everything after
// the last user turn that is more than tool results: thinking from turns
// that ended with a plain answer is not required.
func (e *anthRequestEncoder) unsignedToolTurn() bool {
	from := 0
	for i := len(e.turns) - 1; i >= 0; i-- {
		t := &e.turns[i]
		if t.role == RoleUser && !anthOnlyToolResults(t) {
			from = i + 1
			break
		}
	}
	for i := from; i < len(e.turns); i++ {
		t := &e.turns[i]
		if t.role != RoleAssistant {
			continue
		}
		hasCall := false
		for _, p := range t.parts {
			if p.Type == PartToolCall {
				hasCall = true
				break
			}
		}
		if !hasCall {
			continue
		}
		first := t.parts[0].Type
		if first != PartThinking && first != PartRedactedThinking {
			return true
		}
	}
	return false
}

func anthOnlyToolResults(t *anthTurn) bool {
	for _, p := range t.parts {
		if p.Type != PartToolResult {
			return false
		}
	}
	return true
}

// appendOutputConfig appends output_config: the effort of adaptive
// thinking and a JSON schema for structured output.
func (e *anthRequestEncoder) appendOutputConfig(b []byte, effort string) []byte {
	req := e.req
	var schema []byte
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if len(rf.Schema) > 0 {
				schema = rf.Schema
			} else {
				req.Drop("response_format", "json_schema without a schema")
			}
		case "json_object":
			req.Drop("response_format", "Anthropic has no JSON mode without a schema")
		}
	}
	if effort == "" && schema == nil {
		return b
	}
	b = append(b, `,"output_config":{`...)
	if effort != "" {
		b = append(b, `"effort":`...)
		b = appendJSONString(b, effort)
	}
	if schema != nil {
		b = appendJSONComma(b)
		b = append(b, `"format":{"type":"json_schema","schema":`...)
		b = append(b, schema...)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (e *anthRequestEncoder) appendStopSequences(b []byte) []byte {
	n := 0
	for _, s := range e.req.StopSequences {
		if strings.TrimSpace(s) == "" {
			e.req.Drop("stop_sequences", "Anthropic rejects whitespace-only stop sequences")
			continue
		}
		if n == 0 {
			b = append(b, `,"stop_sequences":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, s)
	}
	if n > 0 {
		b = append(b, ']')
	}
	return b
}

// appendSampling appends temperature, top_p and top_k. With thinking on,
// Anthropic accepts only the default temperature, no top_k and a top_p of
// at least 0.95.
func (e *anthRequestEncoder) appendSampling(b []byte, thinkingOn bool) []byte {
	req := e.req
	if t := req.Temperature; t != nil {
		v := *t
		switch {
		case thinkingOn && v != 1:
			req.Drop("temperature", "Anthropic requires the default temperature with thinking")
		case v > 1:
			req.Drop("temperature", "clamped to Anthropic's maximum of 1")
			v = 1
			fallthrough
		default:
			b = append(b, `,"temperature":`...)
			b = appendJSONFloat(b, v)
		}
	}
	if p := req.TopP; p != nil {
		if thinkingOn && *p < 0.95 {
			req.Drop("top_p", "Anthropic requires top_p >= 0.95 with thinking")
		} else {
			b = append(b, `,"top_p":`...)
			b = appendJSONFloat(b, *p)
		}
	}
	if k := req.TopK; k != nil {
		if thinkingOn {
			req.Drop("top_k", "Anthropic does not allow top_k with thinking")
		} else {
			b = append(b, `,"top_k":`...)
			b = appendJSONInt(b, int64(*k))
		}
	}
	return b
}

package translate

// The request settings of a Chat Completions body: the tools and the tool
// choice, sampling parameters, reasoning effort and the response format
// (EncodeRequest, openai_chat_request_encode.go, writes the messages).

func (e *oaiRequestEncoder) appendTools(b []byte) []byte {
	b = append(b, `,"tools":[`...)
	for i := range e.req.Tools {
		t := &e.req.Tools[i]
		if len(t.CacheControl) > 0 {
			e.req.Drop("cache_control", oaiDropCacheControl)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","function":{"name":`...)
		b = appendJSONString(b, e.toolName(t.Name))
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONText(b, t.Description, t.descForm)
		}
		b = append(b, `,"parameters":`...)
		if len(t.Schema) > 0 {
			b = append(b, t.Schema...)
		} else {
			// OpenAI requires an object schema, even for a tool without
			// parameters.
			b = append(b, `{"type":"object","properties":{}}`...)
		}
		if t.Strict != nil {
			b = append(b, `,"strict":`...)
			b = appendJSONBool(b, *t.Strict)
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

func (e *oaiRequestEncoder) appendToolChoice(b []byte, tc *ToolChoice) []byte {
	b = append(b, `,"tool_choice":`...)
	switch tc.Mode {
	case ToolChoiceNone:
		return append(b, `"none"`...)
	case ToolChoiceTool:
		b = append(b, `{"type":"function","function":{"name":`...)
		b = appendJSONString(b, e.toolName(tc.Name))
		return append(b, "}}"...)
	}
	mode := "auto"
	if tc.Mode == ToolChoiceRequired {
		mode = "required"
	}
	if len(tc.Allowed) == 0 {
		b = append(b, '"')
		b = append(b, mode...)
		return append(b, '"')
	}
	b = append(b, `{"type":"allowed_tools","allowed_tools":{"mode":"`...)
	b = append(b, mode...)
	b = append(b, `","tools":[`...)
	for i, name := range tc.Allowed {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","function":{"name":`...)
		b = appendJSONString(b, e.toolName(name))
		b = append(b, "}}"...)
	}
	return append(b, "]}}"...)
}

// appendFloatField appends "key":f unless f is nil or the dialect drops
// key.
func (e *oaiRequestEncoder) appendFloatField(b []byte, key string, f *float64) []byte {
	if !e.sends(key, f != nil) {
		return b
	}
	return oaiAppendFloatField(b, key, f)
}

func oaiAppendFloatField(b []byte, key string, f *float64) []byte {
	if f == nil {
		return b
	}
	b = append(b, ',')
	b = appendJSONKey(b, key)
	return appendJSONFloat(b, *f)
}

// appendReasoning writes reasoning_effort. An explicit effort is sent as
// given; an Anthropic-style token budget is turned into an effort; adaptive
// thinking without an effort leaves the choice to the model's default, and
// disabled thinking sends nothing (unless the client said "none", which
// OpenAI's newer models understand).
func (e *oaiRequestEncoder) appendReasoning(b []byte) []byte {
	r := e.req.Reasoning
	if r == nil {
		return b
	}
	if r.Display != "" {
		e.req.Drop("thinking.display", "openai_chat has no reasoning display setting")
	}
	effort, fromBudget := r.Effort, false
	switch r.Mode {
	case ReasoningDisabled:
		if effort != "none" {
			effort = ""
		}
	case ReasoningEnabled:
		if effort == "" && r.BudgetTokens > 0 {
			effort, fromBudget = oaiEffortForBudget(r.BudgetTokens), true
		}
	}
	if !e.sends("reasoning_effort", effort != "") {
		return b
	}
	if fromBudget {
		e.req.Drop("thinking.budget_tokens", "sent as reasoning_effort "+effort)
	}
	b = append(b, `,"reasoning_effort":`...)
	return appendJSONString(b, effort)
}

// oaiEffortForBudget approximates a thinking token budget as an effort.
func oaiEffortForBudget(budget int) string {
	switch {
	case budget <= 4096:
		return "low"
	case budget <= 16384:
		return "medium"
	}
	return "high"
}

func oaiAppendResponseFormat(b []byte, rf *ResponseFormat) []byte {
	b = append(b, `,"response_format":{"type":`...)
	switch rf.Type {
	case "json_schema":
		b = append(b, `"json_schema","json_schema":{"name":`...)
		name := rf.Name
		if name == "" {
			name = "response" // required by OpenAI
		}
		b = appendJSONString(b, name)
		if rf.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONString(b, rf.Description)
		}
		if len(rf.Schema) > 0 {
			b = append(b, `,"schema":`...)
			b = append(b, rf.Schema...)
		}
		if rf.Strict != nil {
			b = append(b, `,"strict":`...)
			b = appendJSONBool(b, *rf.Strict)
		}
		return append(b, "}}"...)
	case "json_object":
		b = append(b, `"json_object"`...)
	default:
		b = append(b, `"text"`...)
	}
	return append(b, '}')
}

package translate

import "strings"

// The tools and generation settings of a generateContent body
// (gemini_request_encode.go writes the rest).

// appendTools writes the function declarations and the tool config.
func (e *geminiRequestEncoder) appendTools(b []byte) []byte {
	req := e.req
	if len(req.Tools) == 0 {
		if tc := req.ToolChoice; tc != nil && tc.Mode != ToolChoiceAuto && tc.Mode != ToolChoiceNone {
			req.Drop("tool_choice", "no function tools were given")
		}
		if len(req.ServerTools) > 0 {
			b = append(b, `,"tools":[`...)
			b = e.appendServerTools(b, false)
			b = append(b, ']')
		}
		return b
	}
	b = append(b, `,"tools":[{"functionDeclarations":[`...)
	for i := range req.Tools {
		t := &req.Tools[i]
		if len(t.CacheControl) > 0 {
			req.Drop("cache_control", geminiDropCacheControl)
		}
		if t.Strict != nil {
			req.Drop("tools.strict", "Gemini has no strict mode")
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, t.Name)
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONText(b, t.Description, t.descForm)
		}
		if len(t.Schema) > 0 && !geminiSchemaEmpty(t.Schema) {
			if s, ok := geminiJSONSchema(t.Schema); ok {
				b = append(b, `,"parametersJsonSchema":`...)
				b = append(b, s...)
			} else {
				req.Drop("tools.input_schema", "references that cannot be inlined; rewritten to Gemini's schema subset")
				b = append(b, `,"parameters":`...)
				b = append(b, geminiOpenAPISchema(t.Schema)...)
			}
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	b = e.appendServerTools(b, true)
	b = append(b, ']')
	if req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		req.Drop("parallel_tool_calls", "Gemini cannot forbid parallel function calls")
	}
	tc := req.ToolChoice
	if tc == nil {
		return b
	}
	if req.forcedServerTool() != nil {
		req.Drop("tool_choice", "Gemini cannot force a built-in tool")
		return b
	}
	b = append(b, `,"toolConfig":{"functionCallingConfig":{"mode":`...)
	switch tc.Mode {
	case ToolChoiceRequired:
		b = append(b, `"ANY"`...)
		if len(tc.Allowed) > 0 {
			b = append(b, `,"allowedFunctionNames":`...)
			b = appendStringList(b, tc.Allowed)
		}
	case ToolChoiceTool:
		b = append(b, `"ANY","allowedFunctionNames":`...)
		b = appendStringList(b, []string{tc.Name})
	case ToolChoiceNone:
		b = append(b, `"NONE"`...)
	default:
		b = append(b, `"AUTO"`...)
		if len(tc.Allowed) > 0 {
			req.Drop("tool_choice.allowed_tools", "Gemini restricts function names only in ANY mode")
		}
	}
	return append(b, "}}"...)
}

// appendGenerationConfig writes the sampling, limit, output-format and
// thinking settings.
func (e *geminiRequestEncoder) appendGenerationConfig(b []byte) []byte {
	req := e.req
	start := len(b)
	b = append(b, `,"generationConfig":{`...)
	open := len(b)
	if len(req.StopSequences) > 0 {
		b = append(b, `"stopSequences":`...)
		b = appendStringList(b, req.StopSequences)
	}
	if req.MaxTokens > 0 {
		b = appendJSONComma(b)
		b = append(b, `"maxOutputTokens":`...)
		b = appendJSONInt(b, int64(req.MaxTokens))
	}
	b = geminiAppendFloat(b, "temperature", req.Temperature)
	b = geminiAppendFloat(b, "topP", req.TopP)
	if req.TopK != nil {
		b = appendJSONComma(b)
		b = append(b, `"topK":`...)
		b = appendJSONInt(b, int64(*req.TopK))
	}
	if req.Seed != nil {
		b = appendJSONComma(b)
		b = append(b, `"seed":`...)
		b = appendJSONInt(b, *req.Seed)
	}
	b = geminiAppendFloat(b, "presencePenalty", req.PresencePenalty)
	b = geminiAppendFloat(b, "frequencyPenalty", req.FrequencyPenalty)
	if rf := req.ResponseFormat; rf != nil && (rf.Type == "json_object" || rf.Type == "json_schema") {
		b = appendJSONComma(b)
		b = append(b, `"responseMimeType":"application/json"`...)
		if len(rf.Schema) > 0 {
			if s, ok := geminiJSONSchema(rf.Schema); ok {
				b = append(b, `,"responseJsonSchema":`...)
				b = append(b, s...)
			} else {
				b = append(b, `,"responseSchema":`...)
				b = append(b, geminiOpenAPISchema(rf.Schema)...)
			}
		}
	}
	b = e.appendThinking(b)
	if len(b) == open {
		return b[:start]
	}
	return append(b, '}')
}

func geminiAppendFloat(b []byte, key string, f *float64) []byte {
	if f == nil {
		return b
	}
	b = appendJSONComma(b)
	b = appendJSONKey(b, key)
	return appendJSONFloat(b, *f)
}

// geminiLevels maps efforts onto Gemini 3's thinkingLevel.
var geminiLevels = map[string]string{"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH", "max": "HIGH"}

// appendThinking writes thinkingConfig. A budget goes out as
// thinkingBudget (clamped to what every 2.5 model accepts); an effort
// without a budget becomes thinkingLevel for Gemini 3 models and a budget
// for older ones, which know no levels. Thoughts are included unless the
// client asked not to see them.
func (e *geminiRequestEncoder) appendThinking(b []byte) []byte {
	r := e.req.Reasoning
	if r == nil {
		return b
	}
	var cfg []byte
	switch r.Mode {
	case ReasoningDisabled:
		cfg = append(cfg, `"thinkingBudget":0`...)
	case ReasoningAdaptive:
		cfg = append(cfg, `"thinkingBudget":-1`...)
	default:
		budget := r.BudgetTokens
		level := geminiLevels[r.Effort]
		if budget <= 0 && level != "" && strings.Contains(e.req.Model, "gemini-2") {
			budget = anthEffortBudgets[r.Effort]
			level = ""
		}
		switch {
		case budget > 0:
			if budget > geminiMaxThinkingBudget {
				budget = geminiMaxThinkingBudget
				e.req.Drop("thinking.budget_tokens", "clamped to Gemini's limit")
			}
			cfg = append(cfg, `"thinkingBudget":`...)
			cfg = appendJSONInt(cfg, int64(budget))
		case level != "":
			cfg = append(cfg, `"thinkingLevel":`...)
			cfg = appendJSONString(cfg, level)
		case r.Mode == ReasoningEnabled:
			cfg = append(cfg, `"thinkingBudget":-1`...)
		case r.Effort == "none":
			cfg = append(cfg, `"thinkingBudget":0`...)
		default:
			return b
		}
	}
	if r.Mode != ReasoningDisabled && r.Effort != "none" {
		cfg = append(cfg, `,"includeThoughts":`...)
		cfg = appendJSONBool(cfg, r.Display != "omitted")
	}
	b = appendJSONComma(b)
	b = append(b, `"thinkingConfig":{`...)
	b = append(b, cfg...)
	return append(b, '}')
}

package translate

import (
	"github.com/tidwall/gjson"
)

// field decodes the top-level member key, other than model and messages,
// whose value starts at data[i], and returns the index after the value.
// Every occurrence of a name is decoded in turn, as the gjson decoder's
// ForEach did: for most fields the last one wins.
func (d *oaiRequestDecoder) field(key string, i int) int {
	switch key {
	case "tools":
		return d.tools(i)
	case "functions":
		return d.functions(i)
	}
	v, end := d.value(i)
	if d.bad {
		return end
	}
	req := d.req
	var err *Error
	switch key {
	case "tool_choice":
		d.toolChoice(v)
	case "function_call":
		d.functionCallChoice(v)
	case "parallel_tool_calls":
		req.ParallelToolCalls, err = oaiBool(d.result(v), key)
	case "max_completion_tokens":
		d.maxCompletionTokens, err = oaiMaxTokens(d.result(v), key)
	case "max_tokens":
		d.maxTokens, err = oaiMaxTokens(d.result(v), key)
	case "temperature":
		req.Temperature, err = oaiFloat(d.result(v), key, ruleTemp2)
	case "top_p":
		req.TopP, err = oaiFloat(d.result(v), key, ruleUnit)
	case "presence_penalty":
		req.PresencePenalty, err = oaiFloat(d.result(v), key, rulePenalty)
	case "frequency_penalty":
		req.FrequencyPenalty, err = oaiFloat(d.result(v), key, rulePenalty)
	case "seed":
		if v.kind == jsonNull {
			break
		}
		r := d.result(v)
		if _, err = oaiNum(key, ruleSeed, r); err == nil {
			n := r.Int()
			req.Seed = &n
		}
	case "top_k":
		// Not in OpenAI's spec, but vLLM and llama-server accept it and
		// clients of those servers send it (-1: no limit, in vLLM).
		if v.kind == jsonNull {
			break
		}
		var f float64
		if f, err = oaiNum(key, numRule{integer: true, min: -1, max: ruleCount.max}, d.result(v)); err == nil && f >= 0 {
			n := int(f)
			req.TopK = &n
		}
	case "n":
		if v.kind == jsonNull {
			break
		}
		var f float64
		if f, err = oaiNum(key, numRule{integer: true, min: 1, max: ruleCount.max}, d.result(v)); err == nil && f > 1 {
			err = oaiBadRequest(key, "n > 1 is not supported")
		}
	case "stop":
		d.stop(v)
	case "response_format":
		d.responseFormat(v)
	case "reasoning_effort":
		switch v.kind {
		case jsonNull:
		case jsonString:
			s := d.str(v)
			r := &Reasoning{Effort: s, Mode: ReasoningEnabled}
			if s == "none" {
				r.Mode = ReasoningDisabled
			}
			req.Reasoning = r
		default:
			err = oaiBadRequest(key, "reasoning_effort: must be a string")
		}
	case "stream":
		var b *bool
		if b, err = oaiBool(d.result(v), key); b != nil {
			req.Stream = *b
		}
	case "stream_options":
		switch v.kind {
		case jsonNull:
		case jsonObject:
			req.IncludeUsage = d.isTrue(d.get(v, "include_usage"))
			// include_obfuscation needs no translation: louter never pads chunks.
		default:
			err = oaiBadRequest(key, "stream_options: must be an object")
		}
	case "user":
		req.User, err = oaiString(d.result(v), key)
	case "safety_identifier":
		d.safetyIdentifier, err = oaiString(d.result(v), key)
	default:
		if v.kind == jsonNull || v.kind == jsonBool && !d.isTrue(v) {
			break // an explicit default asks for nothing
		}
		reason, known := oaiDroppedFields[key]
		if !known {
			reason = DropUnknown
		}
		if key == "modalities" && d.onlyText(v) {
			break
		}
		d.drop(oaiAtFields, key, reason)
	}
	if err != nil {
		d.fail(oaiAtFields, err)
	}
	return end
}

// onlyText reports whether a modalities value asks for text only (every
// value gjson's ForEach yields is "text").
func (d *oaiRequestDecoder) onlyText(v jsonSpan) bool {
	for m := range d.each(v) {
		if d.str(m) != "text" {
			return false
		}
	}
	return true
}

// stop decodes stop sequences: a string replaces them, an array adds to
// them.
func (d *oaiRequestDecoder) stop(v jsonSpan) {
	switch v.kind {
	case jsonNull:
	case jsonString:
		if v.isString() {
			d.req.StopSequences = []string{d.str(v)}
		}
	case jsonArray:
		for s := range d.each(v) {
			if s.kind != jsonString {
				d.fail(oaiAtFields, oaiBadRequest("stop", "stop: must be a string or an array of strings"))
				return
			}
			if s.isString() {
				d.req.StopSequences = append(d.req.StopSequences, d.str(s))
			}
		}
	default:
		d.fail(oaiAtFields, oaiBadRequest("stop", "stop: must be a string or an array of strings"))
	}
}

// The readers below check one top-level field the way the OpenAI API does;
// the Responses decoder shares them.

func oaiBool(v gjson.Result, field string) (*bool, *Error) {
	switch v.Type {
	case gjson.Null:
		return nil, nil
	case gjson.True, gjson.False:
		b := v.Type == gjson.True
		return &b, nil
	}
	return nil, oaiInvalidType(field, wantBool, v)
}

// oaiFloat reads a number field in the range r; null is "not given".
func oaiFloat(v gjson.Result, field string, r numRule) (*float64, *Error) {
	if v.Type == gjson.Null {
		return nil, nil
	}
	f, err := oaiNum(field, r, v)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func oaiString(v gjson.Result, field string) (string, *Error) {
	switch v.Type {
	case gjson.Null:
		return "", nil
	case gjson.String:
		return v.Str, nil
	}
	return "", oaiInvalidType(field, wantString, v)
}

// oaiMaxTokens reads a token limit; null is "not given".
func oaiMaxTokens(v gjson.Result, field string) (int, *Error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	f, err := oaiNum(field, ruleMaxTokens, v)
	return int(f), err
}

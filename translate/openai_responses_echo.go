package translate

// The Responses API's response object repeats the request's parameters:
// the tools offered, the tool choice, temperature and top_p, the output
// format (text), alongside max_output_tokens, parallel_tool_calls,
// reasoning and previous_response_id (Request.PreviousResponseID, set by
// the caller that served it). Clients read them back (the SDKs type them; Codex and
// Agents-SDK traces show them), so louter echoes what the client asked for,
// in the JSON response and in every response object of a stream.
// instructions stays null: the IR does not tell the instructions apart from
// system messages of the input.

// respAppendEcho appends ,"temperature",…,"top_p" for req (nil: the API's
// defaults and no tools).
func respAppendEcho(b []byte, req *Request) []byte {
	b = append(b, `,"temperature":`...)
	b = respAppendFloatOrOne(b, req, func(r *Request) *float64 { return r.Temperature })
	if req != nil && req.ResponseFormat != nil {
		b = respAppendTextFormat(b, req.ResponseFormat)
	} else {
		b = append(b, `,"text":{"format":{"type":"text"}}`...)
	}
	if req != nil && req.ToolChoice != nil {
		b = respAppendToolChoice(b, req.ToolChoice)
	} else {
		b = append(b, `,"tool_choice":"auto"`...)
	}
	b = append(b, `,"tools":[`...)
	if req != nil {
		b = respAppendEchoTools(b, req.Tools)
	}
	b = append(b, `],"top_p":`...)
	return respAppendFloatOrOne(b, req, func(r *Request) *float64 { return r.TopP })
}

// respAppendFloatOrOne appends the request's value, or 1, the API's
// default for temperature and top_p.
func respAppendFloatOrOne(b []byte, req *Request, field func(*Request) *float64) []byte {
	if req != nil {
		if v := field(req); v != nil {
			return appendJSONFloat(b, *v)
		}
	}
	return append(b, "1.0"...)
}

// respAppendEchoTools appends the tools as the client declared them:
// functions with their schema and strictness (the API's default, true,
// when the client did not say), freeform tools as custom tools.
func respAppendEchoTools(b []byte, tools []Tool) []byte {
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			b = append(b, ',')
		}
		if t.Custom {
			b = append(b, `{"type":"custom","name":`...)
			b = appendJSONString(b, t.Name)
			b = append(b, `,"description":`...)
			b = appendJSONStringOrNull(b, t.Description)
			b = append(b, '}')
			continue
		}
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, t.Name)
		b = append(b, `,"description":`...)
		b = appendJSONStringOrNull(b, t.Description)
		b = append(b, `,"parameters":`...)
		b = appendJSONRawOrNull(b, t.Schema)
		b = append(b, `,"strict":`...)
		b = appendJSONBool(b, t.Strict == nil || *t.Strict)
		b = append(b, '}')
	}
	return b
}

// respEchoSummary is the reasoning summary setting to echo ("" for null).
func respEchoSummary(req *Request) string {
	if req == nil || req.Reasoning == nil {
		return ""
	}
	switch s := req.Reasoning.Display; s {
	case "auto", "concise", "detailed":
		return s
	}
	return ""
}

package translate

import (
	"fmt"
	"math"
	"strings"

	"github.com/tidwall/gjson"
)

// DecodeRequest implements Codec. It parses a generateContent request, as
// Gemini CLI and the genai SDKs send it, into the IR. Members are read in
// either spelling (camelCase or snake_case), as the API itself accepts.
//
// The model and the stream mode come from the URL: the request's "model"
// member, when present, names the model; otherwise Model stays empty and
// the caller sets it, and Stream, from the path.
func (geminiCodec) DecodeRequest(body []byte) (*Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, BadRequest("request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, BadRequest("request body must be a JSON object")
	}
	d := geminiRequestDecoder{req: &Request{}}
	if err := d.decode(root); err != nil {
		return nil, err
	}
	return d.req, nil
}

// geminiRequestDecoder holds the state of one DecodeRequest call.
type geminiRequestDecoder struct {
	req *Request
	// calls links the function calls of the history, by the id the client
	// knows them by, to their IR id and name; pending lists the calls of
	// the latest model turn that no response has answered yet, in order,
	// for responses that carry no id.
	calls   map[string]geminiCallRef
	pending []geminiCallRef
	// sawContents is whether the request has a non-empty contents array.
	sawContents bool
}

type geminiCallRef struct {
	id, name string
}

// geminiBadRequest is a 400 naming the offending field.
func geminiBadRequest(param, format string, args ...any) *Error {
	e := BadRequest(fmt.Sprintf(format, args...))
	e.Param = param
	return e
}

// geminiDroppedFields are request members with no equivalent elsewhere.
var geminiDroppedFields = map[string]string{
	"safetySettings": "safety settings are specific to Gemini",
	"cachedContent":  "Gemini cached contents have no equivalent",
	"labels":         "billing labels are specific to Gemini",
	"serviceTier":    "service tiers are provider-specific",
	"store":          "Gemini interaction storage has no equivalent",
}

// geminiCamel turns a snake_case member name into its camelCase spelling,
// so a switch over camelCase names reads both.
func geminiCamel(key string) string {
	if strings.IndexByte(key, '_') < 0 {
		return key
	}
	var b strings.Builder
	b.Grow(len(key))
	up := false
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}

func (d *geminiRequestDecoder) decode(root gjson.Result) *Error {
	var err *Error
	root.ForEach(func(k, v gjson.Result) bool {
		err = d.field(geminiCamel(k.Str), v)
		return err == nil
	})
	if err == nil && !d.sawContents {
		err = geminiBadRequest("contents", "* GenerateContentRequest.contents: contents is not specified")
	}
	return err
}

func (d *geminiRequestDecoder) field(key string, v gjson.Result) *Error {
	req := d.req
	switch key {
	case "model":
		switch v.Type {
		case gjson.String:
			req.Model = geminiModelName(v.Str)
		case gjson.Null:
		default:
			return geminiInvalidType("model", wantString, v)
		}
	case "contents":
		if !v.IsArray() {
			return geminiInvalidType("contents", wantArray, v)
		}
		d.sawContents = v.Get("0").Exists()
		return d.contents(v)
	case "systemInstruction":
		return d.system(v)
	case "tools":
		return d.tools(v)
	case "generationConfig":
		return d.generationConfig(v)
	case "toolConfig":
		if v.Type != gjson.Null && !v.IsObject() {
			return geminiInvalidType(key, wantObject, v)
		}
		return d.toolConfig(v)
	default:
		if reason, ok := geminiDroppedFields[key]; ok && v.Type != gjson.Null {
			req.Drop(key, reason)
		}
	}
	return nil
}

// system reads systemInstruction: a Content whose text parts form the system
// prompt (its role is ignored). A bare string is accepted too.
func (d *geminiRequestDecoder) system(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.Null:
	case v.Type == gjson.String:
		if v.Str != "" {
			d.req.System = append(d.req.System, Part{Type: PartText, Text: v.Str})
		}
	case v.IsObject():
		var err *Error
		v.Get("parts").ForEach(func(_, p gjson.Result) bool {
			t := p.Get("text")
			switch {
			case t.Type == gjson.String:
				if t.Str != "" {
					d.req.System = append(d.req.System, Part{Type: PartText, Text: t.Str})
				}
			case p.IsObject():
				d.req.Drop("systemInstruction.parts", "only text parts are supported in the system instruction")
			default:
				err = geminiBadRequest("systemInstruction", "systemInstruction.parts: each part must be an object")
			}
			return err == nil
		})
		return err
	default:
		return geminiInvalidType("systemInstruction", wantObject, v)
	}
	return nil
}

func (d *geminiRequestDecoder) contents(arr gjson.Result) *Error {
	var err *Error
	i := 0
	arr.ForEach(func(_, c gjson.Result) bool {
		if !c.IsObject() {
			err = geminiBadRequest("contents", "contents[%d]: must be an object", i)
			return false
		}
		role := RoleUser
		if c.Get("role").Str == "model" {
			role = RoleAssistant
		}
		var parts []Part
		parts, err = d.parts(c.Get("parts"), i, role)
		if err != nil {
			return false
		}
		if role == RoleAssistant {
			parts = d.continueThought(parts)
		}
		if len(parts) > 0 {
			d.req.Messages = append(d.req.Messages, Message{Role: role, Parts: parts})
		}
		i++
		return true
	})
	return err
}

// tools reads the function declarations of every Tool, and Google Search
// and URL context as server tools (gemini_server_tools.go); Gemini's other
// built-in tools (code execution, file search, ...) have no equivalent.
func (d *geminiRequestDecoder) tools(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return geminiInvalidType("tools", wantArray, v)
	}
	var err *Error
	v.ForEach(func(_, t gjson.Result) bool {
		t.ForEach(func(k, decls gjson.Result) bool {
			key := geminiCamel(k.Str)
			if st, ok := geminiServerTool(key, k.Str, decls); ok {
				d.req.ServerTools = append(d.req.ServerTools, st)
				return true
			}
			if key != "functionDeclarations" {
				d.req.Drop("tools."+key, "only function declarations, Google Search and URL context are supported")
				return true
			}
			decls.ForEach(func(_, fn gjson.Result) bool {
				err = d.declaration(fn)
				return err == nil
			})
			return err == nil
		})
		return err == nil
	})
	return err
}

func (d *geminiRequestDecoder) declaration(fn gjson.Result) *Error {
	name := fn.Get("name")
	if name.Type != gjson.String || name.Str == "" {
		return geminiBadRequest("tools", "tools.functionDeclarations: every declaration needs a name")
	}
	t := Tool{Name: name.Str, Description: fn.Get("description").Str}
	if s := geminiGet(fn, "parametersJsonSchema", "parameters_json_schema"); s.IsObject() {
		t.Schema = geminiSchemaToJSONSchema([]byte(s.Raw))
	} else if s := fn.Get("parameters"); s.IsObject() {
		t.Schema = geminiSchemaToJSONSchema([]byte(s.Raw))
	}
	d.req.Tools = append(d.req.Tools, t)
	return nil
}

// toolConfig reads functionCallingConfig: AUTO, ANY (with
// allowedFunctionNames: one name forces that tool, several restrict the
// choice), NONE. VALIDATED, AUTO with schema checks, is AUTO elsewhere.
func (d *geminiRequestDecoder) toolConfig(v gjson.Result) *Error {
	fc := geminiGet(v, "functionCallingConfig", "function_calling_config")
	if !fc.IsObject() {
		return nil
	}
	var allowed []string
	geminiGet(fc, "allowedFunctionNames", "allowed_function_names").ForEach(func(_, n gjson.Result) bool {
		if n.Type == gjson.String {
			allowed = append(allowed, n.Str)
		}
		return true
	})
	tc := &ToolChoice{}
	switch fc.Get("mode").Str {
	case "ANY":
		tc.Mode = ToolChoiceRequired
		if len(allowed) == 1 {
			tc.Mode, tc.Name = ToolChoiceTool, allowed[0]
		} else {
			tc.Allowed = allowed
		}
	case "NONE":
		tc.Mode = ToolChoiceNone
	case "", "MODE_UNSPECIFIED":
		return nil
	default: // AUTO, VALIDATED
		tc.Mode = ToolChoiceAuto
	}
	d.req.ToolChoice = tc
	return nil
}

func (d *geminiRequestDecoder) generationConfig(v gjson.Result) *Error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return geminiInvalidType("generationConfig", wantObject, v)
	}
	req := d.req
	var mime string
	var schema gjson.Result
	var err *Error
	v.ForEach(func(k, x gjson.Result) bool {
		key := geminiCamel(k.Str)
		if x.Type == gjson.Null {
			return true
		}
		path := "generationConfig." + key
		var f float64
		switch key {
		case "stopSequences":
			if !x.IsArray() {
				err = geminiInvalidType(path, wantArray, x)
				break
			}
			x.ForEach(func(_, s gjson.Result) bool {
				if s.Type != gjson.String {
					err = geminiInvalidType(path, wantString, s)
					return false
				}
				req.StopSequences = append(req.StopSequences, s.Str)
				return true
			})
		case "maxOutputTokens":
			if f, err = geminiNum(path, ruleMaxTokens, x); err == nil {
				req.MaxTokens = int(f)
			}
		case "temperature":
			if f, err = geminiNum(path, ruleTemp2, x); err == nil {
				req.Temperature = &f
			}
		case "topP":
			if f, err = geminiNum(path, ruleUnit, x); err == nil {
				req.TopP = &f
			}
		case "topK":
			// A float in the genai SDKs, an int32 in the API's proto.
			if f, err = geminiNum(path, ruleNonNegReal, x); err == nil {
				n := int(f)
				req.TopK = &n
			}
		case "seed":
			if _, err = geminiNum(path, numRule{integer: true, min: math.MinInt32, max: math.MaxInt32}, x); err == nil {
				n := x.Int()
				req.Seed = &n
			}
		case "presencePenalty":
			if f, err = geminiNum(path, ruleAnyReal, x); err == nil {
				req.PresencePenalty = &f
			}
		case "frequencyPenalty":
			if f, err = geminiNum(path, ruleAnyReal, x); err == nil {
				req.FrequencyPenalty = &f
			}
		case "candidateCount":
			if f, err = geminiNum(path, numRule{integer: true, min: 1, max: math.MaxInt32}, x); err == nil && f > 1 {
				err = geminiBadRequest(path, "candidateCount > 1 is not supported")
			}
		case "responseMimeType":
			if x.Type != gjson.String {
				err = geminiInvalidType(path, wantString, x)
			}
			mime = x.Str
		case "responseSchema", "responseJsonSchema":
			schema = x
		case "thinkingConfig":
			d.thinking(x)
		case "responseModalities":
			x.ForEach(func(_, m gjson.Result) bool {
				if m.Str != "TEXT" {
					req.Drop("generationConfig.responseModalities", "only text output is supported")
				}
				return true
			})
		default:
			req.Drop("generationConfig."+key, "not translated")
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	switch {
	case mime == "application/json" && schema.IsObject():
		req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "response", Schema: geminiSchemaToJSONSchema([]byte(schema.Raw))}
	case mime == "application/json":
		req.ResponseFormat = &ResponseFormat{Type: "json_object"}
	case mime == "text/x.enum":
		req.Drop("generationConfig.responseMimeType", "enum output has no equivalent")
	}
	return nil
}

// thinking reads thinkingConfig: thinkingBudget (-1 dynamic, 0 off, N
// tokens), thinkingLevel (Gemini 3: MINIMAL, LOW, MEDIUM, HIGH) and
// includeThoughts (whether thought summaries are returned).
func (d *geminiRequestDecoder) thinking(v gjson.Result) {
	r := &Reasoning{}
	budget := geminiGet(v, "thinkingBudget", "thinking_budget")
	level := geminiGet(v, "thinkingLevel", "thinking_level")
	switch {
	case budget.Type == gjson.Number && budget.Int() == 0:
		r.Mode = ReasoningDisabled
	case budget.Type == gjson.Number && budget.Int() > 0:
		r.Mode, r.BudgetTokens = ReasoningEnabled, int(budget.Int())
	case budget.Type == gjson.Number:
		// -1, dynamic: thinking on, the model picks the depth.
		r.Mode = ReasoningEnabled
	}
	if level.Type == gjson.String && level.Str != "" && level.Str != "THINKING_LEVEL_UNSPECIFIED" {
		r.Effort = strings.ToLower(level.Str)
		if r.Mode == ReasoningDefault {
			r.Mode = ReasoningEnabled
		}
	}
	switch geminiGet(v, "includeThoughts", "include_thoughts").Type {
	case gjson.False:
		r.Display = "omitted"
	case gjson.True:
		if r.Mode == ReasoningDefault {
			// includeThoughts alone: think as the model does by default
			// and show the thoughts. Gemini's thinking models think
			// unasked; Anthropic and Responses backends must be asked,
			// so it is thinking on, depth left to the backend's default.
			r.Mode = ReasoningEnabled
		}
	}
	if r.Mode == ReasoningDefault {
		return // includeThoughts false alone: nothing to think about
	}
	d.req.Reasoning = r
}

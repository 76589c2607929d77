package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Each provider words a field error its own way; these build a 400 naming
// the field as the client's SDK expects: Anthropic "<path>: Input should
// be …" (pydantic's wording), OpenAI "Invalid type for '<param>' …" with
// param and code set, Gemini "Invalid value at '<snake_path>' …" with the
// path in a BadRequest field violation.

// anthWantText is pydantic's name for a JSON type.
var anthWantText = [...]string{
	wantBool:          "a valid boolean",
	wantInt:           "a valid integer",
	wantNumber:        "a valid number",
	wantString:        "a valid string",
	wantArray:         "a valid list",
	wantObject:        "a valid dictionary",
	wantStringOrArray: "a valid string or a valid list",
}

// anthInvalidType is Anthropic's error for a field of the wrong type.
func anthInvalidType(path string, w jsonWant) *Error {
	return anthBadParam(path, path+": Input should be "+anthWantText[w])
}

// anthNum checks a numeric field and returns its value, or Anthropic's
// error naming it.
func anthNum(path string, r numRule, v gjson.Result) (float64, *Error) {
	f, p := r.check(v)
	switch p {
	case numOK:
		return f, nil
	case numType:
		if r.integer {
			return 0, anthInvalidType(path, wantInt)
		}
		return 0, anthInvalidType(path, wantNumber)
	case numFraction:
		return 0, anthBadParam(path, path+": Input should be a valid integer, got a number with a fractional part")
	case numBelow:
		return 0, anthBadParam(path, path+": Input should be greater than or equal to "+formatBound(r.min, r.integer))
	}
	return 0, anthBadParam(path, path+": Input should be less than or equal to "+formatBound(r.max, r.integer))
}

// oaiWantText is OpenAI's name for a JSON type.
var oaiWantText = [...]string{
	wantBool:          "a boolean",
	wantInt:           "an integer",
	wantNumber:        "a decimal",
	wantString:        "a string",
	wantArray:         "an array",
	wantObject:        "an object",
	wantStringOrArray: "one of a string or an array",
}

// oaiInvalidType is OpenAI's error for a field of the wrong type.
func oaiInvalidType(param string, w jsonWant, v gjson.Result) *Error {
	e := oaiBadRequest(param, "Invalid type for '%s': expected %s, but got %s instead.", param, oaiWantText[w], jsonTypeName(v))
	e.Code = "invalid_type"
	return e
}

// oaiNum checks a numeric field and returns its value, or OpenAI's error
// naming it.
func oaiNum(param string, r numRule, v gjson.Result) (float64, *Error) {
	f, p := r.check(v)
	kind := "decimal"
	if r.integer {
		kind = "integer"
	}
	var e *Error
	switch p {
	case numOK:
		return f, nil
	case numType, numFraction:
		return 0, oaiInvalidType(param, r.want(), v)
	case numBelow:
		e = oaiBadRequest(param, "Invalid '%s': %s below minimum value. Expected a value >= %s, but got %s instead.", param, kind, formatBound(r.min, r.integer), jsonSnippet(v))
		e.Code = kind + "_below_min_value"
	default:
		e = oaiBadRequest(param, "Invalid '%s': %s above maximum value. Expected a value <= %s, but got %s instead.", param, kind, formatBound(r.max, r.integer), jsonSnippet(v))
		e.Code = kind + "_above_max_value"
	}
	return 0, e
}

// geminiProtoType is the proto type Gemini names in a type error.
var geminiProtoType = [...]string{
	wantBool:          "TYPE_BOOL",
	wantInt:           "TYPE_INT32",
	wantNumber:        "TYPE_FLOAT",
	wantString:        "TYPE_STRING",
	wantArray:         "TYPE_MESSAGE",
	wantObject:        "TYPE_MESSAGE",
	wantStringOrArray: "TYPE_MESSAGE",
}

// geminiSnake is a camelCase member path in the snake_case the Gemini API
// quotes paths in ("generationConfig.maxOutputTokens" becomes
// "generation_config.max_output_tokens").
func geminiSnake(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// geminiInvalidType is Gemini's error for a field of the wrong type.
func geminiInvalidType(path string, w jsonWant, v gjson.Result) *Error {
	return geminiBadRequest(path, "Invalid value at '%s' (%s), %s", geminiSnake(path), geminiProtoType[w], jsonSnippet(v))
}

// geminiNum checks a numeric field and returns its value, or Gemini's error
// naming it.
func geminiNum(path string, r numRule, v gjson.Result) (float64, *Error) {
	f, p := r.check(v)
	switch p {
	case numOK:
		return f, nil
	case numType, numFraction:
		return 0, geminiInvalidType(path, r.want(), v)
	case numBelow:
		return 0, geminiBadRequest(path, "Invalid value at '%s', %s: must be at least %s", geminiSnake(path), jsonSnippet(v), formatBound(r.min, r.integer))
	}
	return 0, geminiBadRequest(path, "Invalid value at '%s', %s: must be at most %s", geminiSnake(path), jsonSnippet(v), formatBound(r.max, r.integer))
}

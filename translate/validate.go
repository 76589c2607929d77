package translate

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// The real APIs answer a field of the wrong JSON type, or an impossible
// value, with a 400 naming the field; louter does the same, so that a
// request it would otherwise read wrongly (max_tokens "abc" dropped, 1e300
// clamped, stream "yes" taken as false) fails as it would at the provider.
// The checks run while the decoders read each field: no extra pass over
// the body. This file holds the checks; validate_messages.go words the
// errors as each provider does.

// jsonWant is the JSON type a field must have.
type jsonWant uint8

const (
	wantBool jsonWant = iota
	wantInt
	wantNumber
	wantString
	wantArray
	wantObject
	wantStringOrArray
)

// numProblem is what is wrong with a numeric field.
type numProblem uint8

const (
	numOK       numProblem = iota
	numType                // not a JSON number
	numFraction            // a fraction where an integer is due
	numBelow               // below the minimum
	numAbove               // above the maximum
)

// numRule is the domain of a numeric field.
type numRule struct {
	integer  bool
	min, max float64
}

// want is the JSON type the rule's field takes, for type errors.
func (r numRule) want() jsonWant {
	if r.integer {
		return wantInt
	}
	return wantNumber
}

// Rules of the numeric fields louter reads. Token limits are positive
// 32-bit integers (Gemini's are int32; no model comes near); sampling
// parameters have the ranges the providers document.
var (
	ruleMaxTokens  = numRule{integer: true, min: 1, max: math.MaxInt32}
	ruleCount      = numRule{integer: true, min: 0, max: math.MaxInt32}
	ruleSeed       = numRule{integer: true, min: math.MinInt64, max: math.MaxInt64}
	ruleUnit       = numRule{min: 0, max: 1}  // top_p; Anthropic's temperature
	ruleTemp2      = numRule{min: 0, max: 2}  // OpenAI's and Gemini's temperature
	rulePenalty    = numRule{min: -2, max: 2} // presence and frequency penalties
	ruleNonNegReal = numRule{min: 0, max: math.MaxFloat64}
	ruleAnyReal    = numRule{min: -math.MaxFloat64, max: math.MaxFloat64}
)

// check reports what is wrong with v under r, and v's value when nothing
// is. JSON has no NaN or infinity; a literal too large for a float64 reads
// as +Inf and is above any maximum.
func (r numRule) check(v gjson.Result) (float64, numProblem) {
	if v.Type != gjson.Number {
		return 0, numType
	}
	f := v.Num
	switch {
	case r.integer && f != math.Trunc(f) && !math.IsInf(f, 0):
		return f, numFraction
	case f < r.min:
		return f, numBelow
	case f > r.max:
		return f, numAbove
	}
	return f, numOK
}

// match reports whether v has the JSON type w.
func (w jsonWant) match(v gjson.Result) bool {
	switch w {
	case wantBool:
		return v.Type == gjson.True || v.Type == gjson.False
	case wantInt, wantNumber:
		return v.Type == gjson.Number
	case wantString:
		return v.Type == gjson.String
	case wantArray:
		return v.IsArray()
	case wantObject:
		return v.IsObject()
	case wantStringOrArray:
		return v.Type == gjson.String || v.IsArray()
	}
	return false
}

// jsonTypeName names v's JSON type as OpenAI's messages do.
func jsonTypeName(v gjson.Result) string {
	switch v.Type {
	case gjson.Null:
		return "null"
	case gjson.True, gjson.False:
		return "a boolean"
	case gjson.String:
		return "a string"
	case gjson.Number:
		if v.Num == math.Trunc(v.Num) {
			return "an integer"
		}
		return "a decimal"
	}
	if v.IsArray() {
		return "an array"
	}
	return "an object"
}

// jsonSnippet is v as the error quotes it, cut short.
func jsonSnippet(v gjson.Result) string {
	s := v.Raw
	if len(s) > 40 {
		s = oaiSnippetN([]byte(s), 40)
	}
	return s
}

// formatBound writes a range bound as the messages quote it.
func formatBound(f float64, integer bool) string {
	if integer || f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

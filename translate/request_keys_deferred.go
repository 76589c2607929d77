package translate

import (
	"slices"

	"github.com/tidwall/gjson"
)

// ScanTopLevelDeferred is ScanTopLevel for a body that is to be decoded:
// the members it does not read (the system prompt, the conversation, the
// tools: most of a coding agent's request) are skipped without being
// validated, since DecodeRequest validates every byte of the body as it
// decodes it (Codec). The rest is read and validated as ScanTopLevel
// does, UTF-8 included, and the errors are ScanTopLevel's: a repeated
// member or invalid UTF-8 is reported only after what was skipped has
// been validated, so that a body that is not JSON still gets that answer.
//
// decodes says whether the body will be decoded. It is asked once, at the
// first member that could be skipped, with the model when the scan found
// it before (as Claude Code and Codex send it; "" when it comes later or
// not at all); when it answers false, nothing is skipped and the scan is
// ScanTopLevel's. A body passed on as it is gains nothing from skipping:
// Validate reads it again.
//
// A body that is not JSON inside the skipped members may be accepted
// here, with members found wrongly after them: before anything relies
// on the body beyond routing (sending it on, answering an error of
// another kind), the caller calls Validate, or decodes the body and, when
// that fails, calls Validate for the answer. A 100 KB Claude Code request
// is ~99 % system prompt, messages and tools, which the validating scan
// reads at about a nanosecond a byte; skipped, their strings are crossed
// from quote to quote.
func ScanTopLevelDeferred(p Protocol, body []byte, decodes func(model string) bool) (TopLevel, *Error) {
	return scanTopLevel(p, body, decodes)
}

// decided returns decodes' answer for model, asking it the first time.
func decided(decision *int8, decodes func(string) bool, model string) bool {
	if *decision == 0 {
		*decision = -1
		if decodes(model) {
			*decision = 1
		}
	}
	return *decision > 0
}

// Validate validates what ScanTopLevelDeferred skipped; it returns the
// answer ScanTopLevel gives a body that is not JSON when that is not
// valid. It does nothing for a TopLevel from ScanTopLevel, or once it
// has succeeded. body is the body that was scanned; it is validated
// whole, as only a body that is refused, or passed on, is validated here.
func (t *TopLevel) Validate(body []byte) *Error {
	if !t.deferred {
		return nil
	}
	if end, ok := jsonSkipValue(body, jsonSkipSpace(body, 0)); !ok || !jsonScanTail(body, end) {
		return errNotJSON()
	}
	t.deferred = false
	return nil
}

// deferrable reports whether the value of member name, at m, is one
// ScanTopLevelDeferred may skip: a string, an array or an object (a
// scalar costs nothing to validate) of a member the scan does not read
// (the members it acts on, the metadata it reads the conversation from,
// and the output limits are validated as they are read).
func deferrable(m *jsonMembers, rules *TopLevelRules, name string) bool {
	switch m.peek() {
	case jsonString, jsonArray, jsonObject:
	default:
		return false
	}
	switch name {
	case "", "model", "stream", "metadata", "prompt_cache_key", "stream_options",
		"max_tokens", "max_completion_tokens", "max_output_tokens":
		return false
	}
	return !slices.Contains(rules.ActedOn, name)
}

// modelStr is the model a decodes function is told: the member's string,
// "" when it is absent or not a string.
func modelStr(m gjson.Result) string {
	if m.Type != gjson.String {
		return ""
	}
	return m.Str
}

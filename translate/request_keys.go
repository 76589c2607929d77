package translate

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// TopLevel is what one scan over a request body's top-level members found:
// the members louter routes by, read before the body is decoded (or, for a
// request passed on untranslated, instead of decoding it), and where the
// members louter may edit are, so that a request passed on is edited by
// splicing, without another scan.
type TopLevel struct {
	// Model is the "model" member (gjson.Result{} when absent).
	Model gjson.Result
	// Stream is the "stream" member (gjson.Result{} when absent).
	Stream gjson.Result
	// Metadata and PromptCacheKey are the members a conversation is known
	// by (Claude Code's metadata.user_id, Codex's prompt_cache_key), read
	// in the same pass so that finding them costs nothing more.
	Metadata, PromptCacheKey gjson.Result

	// ModelAt is where the "model" member's value is in the body.
	ModelAt Span
	// LimitsAt is where the output limits are in the body, indexed by
	// Limit: the members a max_tokens cap rewrites. Only the first copy of
	// a member louter does not act on for the protocol is located.
	LimitsAt [LimitCount]Span
	// SystemAt and MessagesAt are where the system prompt and the
	// conversation are (system and messages; the Responses API's
	// instructions and input; Gemini's systemInstruction and contents),
	// which the conversation key hashes when an agent sends no session id.
	SystemAt, MessagesAt Span
	// Open is the index just past the body's opening '{', where a member
	// can be inserted; 0 when the body is not an object.
	Open int
	// ModelInURL says the protocol names the model and the stream mode in
	// the URL, not in the body (TopLevelRules.InURL): Model, Stream and
	// ModelAt are never set, and a rename is made in the URL.
	ModelInURL bool

	// UsageOptIn says the protocol's streams report usage only when the
	// request asks for it (TopLevelRules.UsageOptIn); StreamOptionsAt is
	// then where the member that asks is (OpenAI Chat's stream_options),
	// which a request passed on is edited at when louter needs the usage
	// itself.
	UsageOptIn      bool
	StreamOptionsAt Span

	configDup bool // the config object repeats its limit (TopLevelRules.Config)
	// deferred says members were skipped, not validated
	// (ScanTopLevelDeferred); Validate clears it.
	deferred bool
}

// Span locates a member's value in the body: body[Start:End] is the raw
// JSON of the value (a string with its quotes). End is 0 when the member
// is absent.
type Span struct{ Start, End int }

// Found reports whether the member was there.
func (s Span) Found() bool { return s.End > 0 }

// Limit names an output limit member a max_tokens cap may rewrite.
type Limit uint8

// The output limits, as the protocols spell them.
const (
	LimitMaxTokens           Limit = iota // Anthropic's, and OpenAI Chat's older one
	LimitMaxCompletionTokens              // OpenAI Chat's newer one
	LimitMaxOutputTokens                  // the Responses API's
	LimitGeminiMaxOutput                  // Gemini's generationConfig.maxOutputTokens, in either spelling
	LimitCount
)

// LimitNames are the members of each Limit, as a path (for messages).
var LimitNames = [LimitCount]string{"max_tokens", "max_completion_tokens", "max_output_tokens", "generationConfig.maxOutputTokens"}

// TopLevelRules say how ScanTopLevel reads the request bodies of one
// protocol (TopLevelCodec). The zero value reads no member at all; a codec
// without rules gets defaultTopLevel.
type TopLevelRules struct {
	// ActedOn are the top-level members louter acts on: it routes by the
	// model, answers as the stream member says and caps the output
	// limit. A body that repeats one is refused. At most 8; spelled as
	// Name returns them.
	ActedOn []string
	// System and Messages name the members holding the system prompt and
	// the conversation (TopLevel.SystemAt, MessagesAt); "" when the
	// protocol has no such member.
	System, Messages string
	// InURL says the model and the stream mode are in the URL, not in the
	// body (Gemini): the "model" and "stream" members are not read.
	InURL bool
	// UsageOptIn says the protocol's streams report usage only when the
	// request asks, in its "stream_options" member (OpenAI Chat's
	// stream_options.include_usage); TopLevel.StreamOptionsAt is then
	// located.
	UsageOptIn bool
	// Name, when set, maps a member name (its escapes undone) onto the
	// spelling the other fields use, before it is compared: Gemini reads
	// generationConfig and generation_config alike. Nil: names as sent.
	Name func(string) string
	// Config, when set, is a member whose object value holds an output
	// limit, ConfigLimit, located as TopLevel.LimitsAt[ConfigLimitAt]
	// (Gemini's generationConfig.maxOutputTokens); a repeat of it is
	// refused as a repeat of "Config.ConfigLimit". Names inside go through
	// Name too.
	Config, ConfigLimit string
	ConfigLimitAt       Limit
	// Duplicate is the 400 for a member sent twice, in the protocol's
	// words; key is the member's path. Nil: duplicateKeyDefault.
	Duplicate func(key string) *Error
}

// defaultTopLevel are the rules of a protocol whose codec has none
// (TopLevelCodec): the model and stream members, in the body.
var defaultTopLevel = TopLevelRules{ActedOn: []string{"model", "stream"}}

// topLevelRules returns protocol p's rules.
func topLevelRules(p Protocol) *TopLevelRules {
	if c, ok := codecAs[TopLevelCodec](p); ok {
		return c.TopLevelRules()
	}
	return &defaultTopLevel
}

// duplicate is the 400 for a repeat of the member at path key.
func (r *TopLevelRules) duplicate(key string) *Error {
	if r.Duplicate != nil {
		return r.Duplicate(key)
	}
	return duplicateKeyDefault(key)
}

// duplicateKeyDefault is the 400 for a repeated member in the words of
// OpenAI's invalid-request errors, with code duplicate_key: the protocols
// without wording of their own get it.
func duplicateKeyDefault(key string) *Error {
	e := BadRequest(fmt.Sprintf("Duplicate key '%s' in the request body; send each field once.", key))
	e.Param, e.Code = key, "duplicate_key"
	return e
}

// errNotJSON is the answer to a body that is not valid JSON.
func errNotJSON() *Error { return BadRequest("louter: the request body is not valid JSON") }

// ScanTopLevel validates a request body and reads its top-level members,
// in one pass: every value is validated as it is skipped (the acceptance
// is gjson.ValidBytes'), and the members louter acts on are noted. A body
// that is not valid JSON, empty ones included, gets a 400 "louter: the
// request body is not valid JSON"; valid JSON that is not an object is
// accepted with nothing found (the caller then finds no model).
//
// It refuses a body whose strings (names or values, anywhere) are not valid
// UTF-8, naming the top-level member that holds the first invalid byte. RFC
// 8259 requires UTF-8 of JSON exchanged between systems; a decoder would
// pass such bytes on (or replace them), and a name could reach a log line
// or a metric label, which must be UTF-8.
//
// It refuses a body that repeats a member louter acts on. JSON parsers
// disagree on duplicates: gjson, which louter routes and caps with, takes
// the first copy, while most backends take the last, so a request with two
// "model" members could be routed by one and served by the other. Key
// escapes are undone before comparing ("mod\u0065l" is "model"). Inside
// Gemini's generationConfig the same holds for maxOutputTokens.
//
// What the members of protocol p are called, and which ones it acts on,
// are p's codec's rules (TopLevelCodec, TopLevelRules).
//
// What it returns holds no reference to body.
func ScanTopLevel(p Protocol, body []byte) (TopLevel, *Error) {
	return scanTopLevel(p, body, nil)
}

// scanTopLevel is ScanTopLevel, deferring what decodes asks for
// (ScanTopLevelDeferred); nil defers nothing.
func scanTopLevel(p Protocol, body []byte, decodes func(string) bool) (TopLevel, *Error) {
	rules := topLevelRules(p)
	top := TopLevel{ModelInURL: rules.InURL}
	i := jsonSkipSpace(body, 0)
	if i >= len(body) {
		return top, errNotJSON()
	}
	if body[i] != '{' {
		_, end, ok := jsonScanValue(body, i)
		if !ok || !jsonScanTail(body, end) {
			return top, errNotJSON()
		}
		if !utf8.Valid(body) {
			return top, errNotUTF8(body, 0, "", "the body")
		}
		return top, nil
	}
	top.Open = i + 1
	top.UsageOptIn = rules.UsageOptIn
	keys := rules.ActedOn
	var seen uint8 // one bit per entry of keys
	var scratch []byte
	var decision int8 // what decodes answered: 0 not asked yet, 1 yes, -1 no
	// A repeated member and invalid UTF-8 are reported once the whole
	// body is known to be JSON: invalid JSON is the answer to a body that
	// is both. Of the two, invalid UTF-8 is: the body is not JSON text.
	var dup, badText *Error
	m := jsonOpenObject(body, i)
	for {
		raw, esc, more := m.next()
		if !more {
			break
		}
		if badText == nil && !utf8.Valid(raw) {
			// raw is a view of body: its offset is what their capacities differ by.
			badText = errNotUTF8(body, cap(body)-cap(raw), "", fmt.Sprintf("the name of member %q", raw))
		}
		name := memberName(raw, esc, &scratch)
		if rules.Name != nil {
			name = rules.Name(name)
		}
		for k, key := range keys {
			if name != key {
				continue
			}
			if seen&(1<<k) != 0 && dup == nil {
				dup = rules.duplicate(key)
			}
			seen |= 1 << k
			break
		}
		start := m.i
		if rules.Config != "" && name == rules.Config && m.peek() == jsonObject {
			// Walked here, to find the limit; the decoder reports a
			// config of another type.
			if !scanConfigLimit(&m, &top, rules) {
				return top, errNotJSON()
			}
			if badText == nil {
				badText = checkUTF8(body, start, m.i, name)
			}
			if top.configDup && dup == nil {
				dup = rules.duplicate(rules.Config + "." + rules.ConfigLimit)
			}
			continue
		}
		var sp jsonSpan
		var ok bool
		if decodes != nil && deferrable(&m, rules, name) && decided(&decision, decodes, modelStr(top.Model)) {
			m.i, ok = jsonSkipUnchecked(body, m.i)
			top.deferred = true
		} else {
			sp, ok = m.value()
		}
		if !ok {
			return top, errNotJSON()
		}
		if badText == nil {
			badText = checkUTF8(body, start, m.i, name)
		}
		at := Span{start, m.i}
		val := body[start:m.i]
		switch {
		case name == "":
		case name == rules.System:
			if !top.SystemAt.Found() {
				top.SystemAt = at
			}
			continue
		case name == rules.Messages:
			if !top.MessagesAt.Found() {
				top.MessagesAt = at
			}
			continue
		}
		switch name {
		case "model":
			if !rules.InURL {
				top.Model, top.ModelAt = smallResult(val), at
			}
		case "stream":
			if !rules.InURL {
				top.Stream = smallResult(val)
			}
		case "metadata":
			top.Metadata = smallResult(val)
		case "prompt_cache_key":
			if sp.kind == jsonString {
				top.PromptCacheKey = smallResult(val)
			} else {
				top.PromptCacheKey = gjson.Result{}
			}
		case "stream_options":
			if top.UsageOptIn {
				top.StreamOptionsAt = at
			}
		case "max_tokens":
			top.setLimit(LimitMaxTokens, at)
		case "max_completion_tokens":
			top.setLimit(LimitMaxCompletionTokens, at)
		case "max_output_tokens":
			top.setLimit(LimitMaxOutputTokens, at)
		}
	}
	if m.bad || !jsonScanTail(body, m.i) {
		return top, errNotJSON()
	}
	if (badText != nil || dup != nil) && top.Validate(body) != nil {
		return top, errNotJSON() // invalid JSON is the answer, as above
	}
	if badText != nil {
		return top, badText
	}
	return top, dup
}

// checkUTF8 is the 400 for the value of member name, body[start:end], when
// it holds invalid UTF-8; nil when it does not. Bytes from 0x80 up are
// valid JSON only inside strings, so this checks the strings the scan let
// through. utf8.Valid reads ASCII eight bytes at a time: a few percent of
// the scan's cost on a typical request.
func checkUTF8(body []byte, start, end int, name string) *Error {
	if utf8.Valid(body[start:end]) {
		return nil
	}
	return errNotUTF8(body, start, name, fmt.Sprintf("member %q", name))
}

// errNotUTF8 is the answer to a body with invalid UTF-8 at or after
// body[from], in what where names; param is the member, if its name is
// fit to be one. The offset lets a client find the byte.
func errNotUTF8(body []byte, from int, param, where string) *Error {
	at := from
	for at < len(body) {
		r, size := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	e := BadRequest(fmt.Sprintf("louter: the request body is not valid UTF-8: %s has an invalid byte at offset %d (0x%02x); JSON text must be UTF-8", where, at, body[min(at, len(body)-1)]))
	e.Param = param
	return e
}

// setLimit locates the first copy of an output limit.
func (t *TopLevel) setLimit(l Limit, at Span) {
	if !t.LimitsAt[l].Found() {
		t.LimitsAt[l] = at
	}
}

// memberName returns a member's name with its escapes undone. The string
// is a view of raw (or of scratch) for comparisons only, never kept.
func memberName(raw []byte, esc bool, scratch *[]byte) string {
	if esc {
		*scratch = jsonUnescape((*scratch)[:0], raw)
		raw = *scratch
	}
	if len(raw) == 0 {
		return ""
	}
	return unsafe.String(&raw[0], len(raw))
}

// smallResult is the gjson reading of a small value, copied out of the
// body (a model name, a stream flag, Claude Code's metadata).
func smallResult(raw []byte) gjson.Result {
	switch string(raw) { // the stream flag: no copy needed
	case "true":
		return gjson.Result{Type: gjson.True, Raw: "true"}
	case "false":
		return gjson.Result{Type: gjson.False, Raw: "false"}
	}
	return gjson.Parse(string(raw))
}

// scanConfigLimit walks the config object (TopLevelRules.Config) whose
// value starts at m.i, locating its output limit and noting a repeat of
// it. It is false when the object is not valid JSON.
func scanConfigLimit(m *jsonMembers, top *TopLevel, rules *TopLevelRules) bool {
	g := jsonOpenObject(m.data, m.i)
	var scratch []byte
	for {
		raw, esc, more := g.next()
		if !more {
			break
		}
		start := g.i
		if _, ok := g.value(); !ok {
			return false
		}
		name := memberName(raw, esc, &scratch)
		if rules.Name != nil {
			name = rules.Name(name)
		}
		if name != rules.ConfigLimit {
			continue
		}
		if top.LimitsAt[rules.ConfigLimitAt].Found() {
			top.configDup = true
			continue
		}
		top.LimitsAt[rules.ConfigLimitAt] = Span{start, g.i}
	}
	m.i = g.i
	return !g.bad
}

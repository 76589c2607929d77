package dialect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Hermes tool calls (REFERENCE §6.1):
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>

// appendHermesCalls parses the JSON body of a <tool_call> block: one call
// object, or an array of them, which some models write for parallel calls.
func appendHermesCalls(dst []Segment, body string) ([]Segment, error) {
	if !json.Valid([]byte(body)) {
		return dst, errors.New("invalid JSON")
	}
	v := gjson.Parse(body)
	if !v.IsArray() {
		seg, err := hermesCall(v)
		if err != nil {
			return dst, err
		}
		return append(dst, seg), nil
	}
	calls := v.Array()
	if len(calls) == 0 {
		return dst, errors.New("empty array")
	}
	n := len(dst)
	for i, c := range calls {
		seg, err := hermesCall(c)
		if err != nil {
			return dst[:n], fmt.Errorf("call %d: %w", i, err)
		}
		dst = append(dst, seg)
	}
	return dst, nil
}

func hermesCall(v gjson.Result) (Segment, error) {
	if !v.IsObject() {
		return Segment{}, errors.New("not a JSON object")
	}
	// Some models copy the OpenAI shape {"type":"function","function":{…}}.
	if f := v.Get("function"); f.IsObject() && !v.Get("name").Exists() {
		v = f
	}
	name := v.Get("name")
	if name.Type != gjson.String || strings.TrimSpace(name.Str) == "" {
		return Segment{}, errors.New("no name")
	}
	args := v.Get("arguments")
	if !args.Exists() {
		args = v.Get("parameters")
	}
	s, err := hermesArguments(args)
	if err != nil {
		return Segment{}, fmt.Errorf("%s: %w", name.Str, err)
	}
	return Segment{Kind: SegmentToolCall, Name: name.Str, Arguments: s}, nil
}

// hermesArguments accepts the arguments as an object, as a string holding
// one (a model imitating OpenAI's wire format), or missing.
func hermesArguments(a gjson.Result) (string, error) {
	switch {
	case !a.Exists() || a.Type == gjson.Null:
		return "{}", nil
	case a.IsObject():
		return compactJSON(a.Raw), nil
	case a.Type == gjson.String:
		s := strings.TrimSpace(a.Str)
		if s == "" {
			return "{}", nil
		}
		if s[0] == '{' && json.Valid([]byte(s)) {
			return compactJSON(s), nil
		}
		return "", errors.New("arguments string is not a JSON object")
	}
	return "", fmt.Errorf("arguments are %s, not an object", a.Type)
}

// compactJSON removes the insignificant whitespace of valid JSON, keeping
// strings byte for byte (no re-escaping, unlike a decode and re-encode).
func compactJSON(s string) string {
	var b bytes.Buffer
	b.Grow(len(s))
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s // unreachable: callers pass valid JSON
	}
	return b.String()
}

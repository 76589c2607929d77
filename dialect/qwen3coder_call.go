package dialect

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/louter/louter/translate"
)

// Qwen3-Coder tool calls (REFERENCE §6.2):
//
//	<tool_call>
//	<function=get_weather>
//	<parameter=city>
//	Paris
//	</parameter>
//	</function>
//	</tool_call>
//
// also without the <tool_call> wrapper, and llama.cpp's
// <function=NAME>{json}</function>.

// maxFunctionName bounds NAME in <function=NAME>: until its '>' arrives
// the marker is held back from the text.
const maxFunctionName = 256

var (
	functionBodyOpeners = []string{tagParameter, tagFunctionEnd}
	functionBodyMarkers = []string{tagParameter, tagParameterEnd, tagFunctionEnd}
)

// advanceFunction follows a bare <function=NAME> block as it streams in.
// Without a wrapper to delimit the block, its end is the first
// </function> outside a parameter value: a value may hold the literal tag
// until its </parameter> arrives.
func (p *ContentParser) advanceFunction() (end int, verdict callVerdict, why string) {
	c := &p.call
	b := c.buf
	if c.phase == phaseHeader {
		i := c.scan
		for ; i < len(b) && b[i] != '>'; i++ {
			if b[i] == '<' || b[i] == '\n' || i-len(tagFunction) >= maxFunctionName {
				return i + 1, callRejected, p.bareWhy("<function= without a name")
			}
		}
		c.scan = i
		if i == len(b) {
			return 0, callPending, ""
		}
		name := strings.TrimSpace(string(b[len(tagFunction):i]))
		if name == "" {
			return i + 1, callRejected, p.bareWhy("<function= without a name")
		}
		// In auto mode the markup is a call only for a declared tool:
		// anything else is a model writing about the syntax.
		if !p.bareAny && !p.schemas.has(name) {
			return i + 1, callRejected, ""
		}
		c.headerEnd = i + 1
		c.scan = i + 1
		c.phase = phaseBodyStart
	}
	if c.phase == phaseBodyStart {
		i := c.scan
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		c.scan = i
		if i == len(b) {
			return 0, callPending, ""
		}
		if b[i] != '{' {
			ok, pending, decided := startsWithAny(b, i, functionBodyOpeners)
			if pending {
				return 0, callPending, ""
			}
			if !ok {
				return decided, callRejected, p.bareWhy("<function=NAME> followed by neither parameters nor JSON")
			}
		}
		c.phase = phaseBody
	}
	for {
		at, k := scanMarkersBytes(b, c.scan, functionBodyMarkers)
		if k < 0 {
			c.scan = at
			return 0, callPending, ""
		}
		c.scan = at + len(functionBodyMarkers[k])
		switch functionBodyMarkers[k] {
		case tagParameter:
			c.inParam = true
		case tagParameterEnd:
			c.inParam = false
		default:
			if !c.inParam {
				return c.scan, callComplete, ""
			}
		}
	}
}

// bareWhy is the warning for a rejected bare block: none in auto mode,
// where the markup was only ever a candidate.
func (p *ContentParser) bareWhy(why string) string {
	if p.bareAny {
		return why
	}
	return ""
}

// wrappedFunction parses a <tool_call> body that starts with <function=.
// Inside the wrapper the structural </function> is the last one.
func (p *ContentParser) wrappedFunction(body string) (Segment, error) {
	rest := body[len(tagFunction):]
	j := strings.IndexByte(rest, '>')
	if j < 0 {
		return Segment{}, errors.New(tagFunction + " not closed by '>'")
	}
	name, rest := rest[:j], rest[j+1:]
	if k := strings.LastIndex(rest, tagFunctionEnd); k >= 0 {
		if strings.TrimSpace(rest[k+len(tagFunctionEnd):]) != "" {
			return Segment{}, errors.New("text after " + tagFunctionEnd)
		}
		rest = rest[:k]
	}
	return p.functionCall(name, rest)
}

// functionCall parses one function block: NAME and what lies between its
// header and its </function>.
func (p *ContentParser) functionCall(name, body string) (Segment, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Segment{}, errors.New(tagFunction + " without a name")
	}
	var args string
	switch t := strings.TrimSpace(body); {
	case t == "":
		args = "{}"
	case t[0] == '{':
		if !json.Valid([]byte(t)) {
			return Segment{}, fmt.Errorf("function %s: arguments are not valid JSON", name)
		}
		args = compactJSON(t)
	default:
		var err error
		if args, err = p.qwen3Arguments(name, body); err != nil {
			return Segment{}, fmt.Errorf("function %s: %w", name, err)
		}
	}
	return Segment{Kind: SegmentToolCall, Name: name, Arguments: args}, nil
}

type qwen3Param struct{ name, value string }

// qwen3Arguments builds the JSON object of a function's <parameter=P>
// blocks, typing each value by the tool's schema.
func (p *ContentParser) qwen3Arguments(tool, body string) (string, error) {
	var params []qwen3Param
	for rest := body; ; {
		i := strings.Index(rest, tagParameter)
		if i < 0 {
			break
		}
		rest = rest[i+len(tagParameter):]
		j := strings.IndexByte(rest, '>')
		if j < 0 {
			return "", errors.New(tagParameter + " not closed by '>'")
		}
		name := strings.TrimSpace(rest[:j])
		if name == "" {
			return "", errors.New(tagParameter + " without a name")
		}
		rest = rest[j+1:]
		// A missing </parameter> is tolerated when the next parameter or
		// the end of the function follows, as vLLM does.
		next := strings.Index(rest, tagParameter)
		if next < 0 {
			next = len(rest)
		}
		end, after := next, next
		if k := strings.Index(rest[:next], tagParameterEnd); k >= 0 {
			end, after = k, k+len(tagParameterEnd)
		}
		params = setQwen3Param(params, name, trimOneNewline(rest[:end]))
		rest = rest[after:]
	}
	if len(params) == 0 {
		return "", errors.New("neither parameters nor JSON")
	}
	out := make([]byte, 0, len(body)+8)
	out = append(out, '{')
	for i, prm := range params {
		if i > 0 {
			out = append(out, ',')
		}
		out = translate.AppendJSONString(out, prm.name)
		out = append(out, ':')
		out = p.schemas.appendValue(out, tool, prm.name, prm.value)
	}
	return string(append(out, '}')), nil
}

// setQwen3Param keeps a repeated parameter's last value at its first
// place: a JSON object must not repeat a name.
func setQwen3Param(params []qwen3Param, name, value string) []qwen3Param {
	for i := range params {
		if params[i].name == name {
			params[i].value = value
			return params
		}
	}
	return append(params, qwen3Param{name, value})
}

// trimOneNewline strips the newline the template puts on each side of a
// value, and no more: the value's own blank lines are content.
func trimOneNewline(v string) string {
	v = strings.TrimPrefix(v, "\n")
	return strings.TrimSuffix(v, "\n")
}

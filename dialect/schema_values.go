package dialect

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/louter/louter/translate"
	"github.com/tidwall/gjson"
)

// Qwen3-Coder writes parameter values as bare text: strings raw, objects
// and arrays as JSON. Only the tool's JSON schema says whether "42" is a
// number or a string, so values are typed by it, following vLLM's
// qwen3coder parser: a parameter the schema does not describe stays a
// string.

// toolSchemas are the declared tools by name.
type toolSchemas map[string]*toolSchema

type toolSchema struct {
	raw   []byte
	props map[string]gjson.Result // built on first use
}

// appendTypingSchema appends to dst what appendValue reads of a tool's
// JSON schema, as a schema of its own: per parameter, its type and
// nullable, the types and nullable of its anyOf and oneOf alternatives,
// and whether it has properties or items. Descriptions, enums, defaults
// and the rest, the bulk of an agent's schemas, are left out, so that a
// stream keeps a few bytes per tool rather than the whole schema: the
// stream's plan outlives the request, whose schemas are views of the
// client's body. It appends nothing for a schema that describes no
// parameters.
func appendTypingSchema(dst, raw []byte) []byte {
	// A view, not GetBytes, which copies what it finds: what is read
	// here is copied into dst.
	props := gjson.Get(unsafe.String(unsafe.SliceData(raw), len(raw)), "properties")
	if !props.IsObject() {
		return dst
	}
	dst = append(dst, `{"properties":{`...)
	n := 0
	props.ForEach(func(k, v gjson.Result) bool {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, k.Raw...)
		dst = append(dst, ':')
		dst = appendTyping(dst, v, true)
		return true
	})
	return append(dst, "}}"...)
}

// typingSchemas returns the typing schemas (appendTypingSchema) of the
// tools' schemas: nil for a tool without parameters. They come from
// typingCache, so that the work is done once per distinct schema, not per
// request: an agent sends the same tools every turn.
func typingSchemas(tools []translate.Tool) [][]byte {
	out := make([][]byte, len(tools))
	for i, t := range tools {
		out[i] = cachedTypingSchema(t.Schema)
	}
	return out
}

// typingCache maps the tool schemas seen to their typing schemas, which
// every stream with the same tools shares (nobody writes to them). It is
// bounded: past typingCacheMax bytes of keys and values it starts over.
var typingCache struct {
	sync.Mutex
	m     map[string][]byte
	bytes int
}

const typingCacheMax = 4 << 20

func cachedTypingSchema(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	typingCache.Lock()
	v, ok := typingCache.m[string(raw)]
	typingCache.Unlock()
	if ok {
		return v
	}
	if v = appendTypingSchema(nil, raw); v != nil {
		v = bytes.Clone(v) // exactly sized: it is kept
	}
	if len(raw)+len(v) > typingCacheMax/16 {
		return v // a schema this large is not kept twice
	}
	typingCache.Lock()
	defer typingCache.Unlock()
	if typingCache.m == nil || typingCache.bytes+len(raw)+len(v) > typingCacheMax {
		typingCache.m, typingCache.bytes = map[string][]byte{}, 0
	}
	typingCache.m[string(raw)] = v
	typingCache.bytes += len(raw) + len(v)
	return v
}

// appendTyping appends the members of schema v that schemaTypes reads;
// alts says whether to follow its anyOf and oneOf (schemaTypes reads
// only the type and nullable of an alternative). It reads v in one pass,
// keeping the first of a repeated member as gjson's Get does.
func appendTyping(out []byte, v gjson.Result, alts bool) []byte {
	out = append(out, '{')
	if !v.IsObject() {
		return append(out, '}')
	}
	var seen uint8
	v.ForEach(func(k, m gjson.Result) bool {
		var bit uint8
		switch k.Str {
		case "type":
			bit = 1
		case "nullable":
			bit = 2
		case "anyOf":
			bit = 4
		case "oneOf":
			bit = 8
		case "properties":
			bit = 16
		case "items":
			bit = 32
		}
		if bit == 0 || seen&bit != 0 || (!alts && bit > 2) {
			return true
		}
		seen |= bit
		if out[len(out)-1] != '{' {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k.Str...)
		out = append(out, `":`...)
		switch {
		case bit <= 2:
			out = append(out, m.Raw...)
		case bit <= 8:
			out = append(out, '[')
			i := 0
			m.ForEach(func(_, alt gjson.Result) bool {
				if i > 0 {
					out = append(out, ',')
				}
				i++
				out = appendTyping(out, alt, false)
				return true
			})
			out = append(out, ']')
		default:
			out = append(out, "{}"...)
		}
		return true
	})
	return append(out, '}')
}

func newToolSchemas(tools []translate.Tool) toolSchemas {
	if len(tools) == 0 {
		return nil
	}
	s := make(toolSchemas, len(tools))
	// One allocation for all of them rather than one a tool: a request
	// declares tens of tools, and a stream builds this once.
	vals := make([]toolSchema, len(tools))
	for i, t := range tools {
		vals[i].raw = t.Schema
		s[t.Name] = &vals[i]
	}
	return s
}

func (s toolSchemas) has(name string) bool {
	_, ok := s[name]
	return ok
}

// property returns the schema of a tool's parameter.
func (s toolSchemas) property(tool, param string) (gjson.Result, bool) {
	t := s[tool]
	if t == nil || len(t.raw) == 0 {
		return gjson.Result{}, false
	}
	if t.props == nil {
		t.props = map[string]gjson.Result{}
		gjson.GetBytes(t.raw, "properties").ForEach(func(k, v gjson.Result) bool {
			t.props[k.String()] = v
			return true
		})
	}
	v, ok := t.props[param]
	return v, ok
}

// appendValue appends the JSON for a parameter value written as text.
func (s toolSchemas) appendValue(dst []byte, tool, param, value string) []byte {
	prop, ok := s.property(tool, param)
	if !ok {
		return translate.AppendJSONString(dst, value)
	}
	types, nullable := schemaTypes(prop)
	if len(types) == 0 {
		return translate.AppendJSONString(dst, value)
	}
	t := strings.TrimSpace(value)
	if t == "null" && (nullable || !anyStringType(types)) {
		return append(dst, "null"...)
	}
	for _, ty := range types {
		if out, ok := appendTyped(dst, ty, value, t); ok {
			return out
		}
	}
	return translate.AppendJSONString(dst, value)
}

// schemaTypes lists the types a property allows, in the order a value is
// tried against them: its "type" (a name or an array of names), then those
// of its anyOf and oneOf alternatives. A property with only "properties"
// or "items" is an object or an array.
func schemaTypes(prop gjson.Result) (types []string, nullable bool) {
	add := func(v gjson.Result) {
		t := v.Get("type")
		if t.IsArray() {
			for _, e := range t.Array() {
				types = append(types, strings.ToLower(e.String()))
			}
		} else if t.Type == gjson.String {
			types = append(types, strings.ToLower(t.Str))
		}
		if v.Get("nullable").Bool() {
			nullable = true
		}
	}
	add(prop)
	for _, key := range [...]string{"anyOf", "oneOf"} {
		prop.Get(key).ForEach(func(_, alt gjson.Result) bool {
			add(alt)
			return true
		})
	}
	if len(types) == 0 {
		switch {
		case prop.Get("properties").Exists():
			types = append(types, "object")
		case prop.Get("items").Exists():
			types = append(types, "array")
		}
	}
	n := len(types)
	types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	return types, nullable || len(types) < n
}

func anyStringType(types []string) bool {
	for _, t := range types {
		if stringType(t) {
			return true
		}
	}
	return false
}

func stringType(t string) bool {
	switch t {
	case "string", "str", "text", "varchar", "char", "enum":
		return true
	}
	return false
}

// appendTyped appends value as JSON of type ty, reporting whether it is
// one. t is value without surrounding whitespace.
func appendTyped(dst []byte, ty, value, t string) ([]byte, bool) {
	switch {
	case stringType(ty):
		return translate.AppendJSONString(dst, value), true
	case strings.HasPrefix(ty, "int") || strings.HasPrefix(ty, "uint") || ty == "long" || ty == "short":
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return strconv.AppendInt(dst, n, 10), true
		}
		if f, ok := parseFiniteFloat(t); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.AppendInt(dst, int64(f), 10), true
		}
	case ty == "number" || ty == "float" || ty == "double" || ty == "num" || ty == "decimal":
		if f, ok := parseFiniteFloat(t); ok {
			return appendNumber(dst, f), true
		}
	case ty == "boolean" || ty == "bool" || ty == "binary":
		switch strings.ToLower(t) {
		case "true":
			return append(dst, "true"...), true
		case "false":
			return append(dst, "false"...), true
		}
	case ty == "object" || ty == "dict" || ty == "map":
		return appendJSONValue(dst, t, '{')
	case ty == "array" || ty == "list" || ty == "arr" || ty == "sequence" || ty == "tuple":
		return appendJSONValue(dst, t, '[')
	}
	return dst, false
}

func parseFiniteFloat(t string) (float64, bool) {
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// appendNumber writes an integral number in integer form, as Python's
// float-then-int conversion in vLLM does, and any other as JSON.
func appendNumber(dst []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	return append(dst, b...)
}

// appendJSONValue appends t compacted if it is a JSON object or array
// (open is '{' or '['), trying a Python literal ('single quotes', True,
// None) when it is not JSON: models often write dicts the Python way.
func appendJSONValue(dst []byte, t string, open byte) ([]byte, bool) {
	if t == "" || t[0] != open {
		return dst, false
	}
	if !json.Valid([]byte(t)) {
		py, ok := pythonLiteralJSON(t)
		if !ok || !json.Valid([]byte(py)) {
			return dst, false
		}
		t = py
	}
	return append(dst, compactJSON(t)...), true
}

// pythonLiteralJSON rewrites a Python literal as JSON: single-quoted
// strings become double-quoted, True, False and None become true, false
// and null. The result still has to be validated.
func pythonLiteralJSON(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return "", false
			}
			b.WriteString(s[i : j+1])
			i = j + 1
		case c == '\'':
			b.WriteByte('"')
			j := i + 1
			for ; j < len(s) && s[j] != '\''; j++ {
				switch {
				case s[j] == '\\' && j+1 < len(s) && s[j+1] == '\'':
					b.WriteByte('\'')
					j++
				case s[j] == '\\' && j+1 < len(s):
					b.WriteString(s[j : j+2])
					j++
				case s[j] == '"':
					b.WriteString(`\"`)
				default:
					b.WriteByte(s[j])
				}
			}
			if j >= len(s) {
				return "", false
			}
			b.WriteByte('"')
			i = j + 1
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			switch w := s[i:j]; w {
			case "True":
				b.WriteString("true")
			case "False":
				b.WriteString("false")
			case "None":
				b.WriteString("null")
			default:
				b.WriteString(w)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

package mock

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// maxSchemaDepth stops argument synthesis on deeply nested or recursive
// schemas.
const maxSchemaDepth = 8

// synthesizeArguments returns a JSON arguments object that satisfies the
// required properties of a tool's JSON schema: strings are "louter",
// integers and numbers 1 (or the schema's minimum, when larger), booleans
// true, arrays empty unless minItems asks for items, objects filled
// recursively, enums and consts their first value. Optional properties are
// left out, so a tool without required properties gets "{}".
func synthesizeArguments(schema []byte) string {
	if len(schema) == 0 || !gjson.ValidBytes(schema) {
		return "{}"
	}
	s := gjson.ParseBytes(schema)
	if !s.IsObject() {
		return "{}"
	}
	return string(appendObjectValue(nil, s, 0))
}

func appendSchemaValue(dst []byte, s gjson.Result, depth int) []byte {
	if depth > maxSchemaDepth || !s.IsObject() {
		return append(dst, `"louter"`...)
	}
	if c := s.Get("const"); c.Exists() {
		return append(dst, c.Raw...)
	}
	if e := s.Get("enum.0"); e.Exists() {
		return append(dst, e.Raw...)
	}
	for _, k := range [...]string{"anyOf", "oneOf", "allOf"} {
		if alt := s.Get(k + ".0"); alt.Exists() {
			return appendSchemaValue(dst, alt, depth+1)
		}
	}
	switch schemaType(s) {
	case "string":
		return append(dst, `"louter"`...)
	case "integer", "number":
		n := 1.0
		if m := s.Get("minimum"); m.Exists() && m.Float() > n {
			n = math.Ceil(m.Float())
		}
		return strconv.AppendFloat(dst, n, 'f', -1, 64)
	case "boolean":
		return append(dst, "true"...)
	case "null":
		return append(dst, "null"...)
	case "array":
		dst = append(dst, '[')
		for i := int64(0); i < s.Get("minItems").Int() && i < 16; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendSchemaValue(dst, s.Get("items"), depth+1)
		}
		return append(dst, ']')
	case "object":
		return appendObjectValue(dst, s, depth)
	}
	return append(dst, `"louter"`...)
}

// appendObjectValue appends an object holding the schema's required
// properties.
func appendObjectValue(dst []byte, s gjson.Result, depth int) []byte {
	dst = append(dst, '{')
	props := s.Get("properties")
	n := 0
	s.Get("required").ForEach(func(_, name gjson.Result) bool {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendJSONString(dst, name.String())
		dst = append(dst, ':')
		dst = appendSchemaValue(dst, propertySchema(props, name.String()), depth+1)
		return true
	})
	return append(dst, '}')
}

// propertySchema finds a property by name without building a gjson path,
// so names with dots or wildcards work.
func propertySchema(props gjson.Result, name string) gjson.Result {
	var found gjson.Result
	props.ForEach(func(key, value gjson.Result) bool {
		if key.String() == name {
			found = value
			return false
		}
		return true
	})
	return found
}

// schemaType is the schema's type; for a list of types, the first that is
// not "null". Without a type, properties imply an object.
func schemaType(s gjson.Result) string {
	t := s.Get("type")
	if t.IsArray() {
		for _, v := range t.Array() {
			if v.String() != "null" {
				return v.String()
			}
		}
		return "null"
	}
	if t.Exists() {
		return t.String()
	}
	if s.Get("properties").Exists() {
		return "object"
	}
	return ""
}

// propertyType is the type of the named property of a tool schema, or "".
func propertyType(schema []byte, name string) (string, bool) {
	p := propertySchema(gjson.GetBytes(schema, "properties"), name)
	if !p.Exists() {
		return "", false
	}
	return schemaType(p), true
}

const jsonHex = "0123456789abcdef"

// appendJSONString appends s as a JSON string. The mock only builds small
// argument objects, but their strings (shell commands) are full of <, > and
// &, which encoding/json would escape.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

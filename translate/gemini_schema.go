package translate

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// Gemini takes function parameter and response schemas in two forms
// (REFERENCE §4.2):
//
//   - parametersJsonSchema / responseJsonSchema carry JSON Schema as it is.
//     Gemini ignores the keywords it does not support, but it rejects a
//     $ref with sibling keywords other than description and default, and
//     cross-document references mean nothing to it.
//   - parameters / responseSchema take an OpenAPI 3.0 subset (go-genai's
//     Schema type) and reject every other keyword with a 400 "Unknown
//     name": $schema, additionalProperties, const, exclusiveMinimum,
//     propertyNames, type arrays, $ref, oneOf, allOf, ...
//
// The encoder prefers the JSON Schema form: the client's schema goes out
// byte for byte unless it uses $ref, in which case the references are
// inlined (geminiJSONSchema). Only a schema whose references cannot be
// inlined (a cycle, or a reference outside the document) is rewritten to the
// OpenAPI subset (geminiOpenAPISchema), where recursion is cut at a fixed
// depth. In the other direction, a Gemini client's schema (possibly in the
// OpenAPI form, with upper-case types, as Gemini CLI's router sends even in
// responseJsonSchema) becomes plain JSON Schema (geminiSchemaToJSONSchema).

// geminiSchemaMode says how a schemaWriter rewrites.
type geminiSchemaMode uint8

const (
	geminiToJSONSchema geminiSchemaMode = iota // Gemini's form → JSON Schema (lower-case types, no nullable)
	geminiInlineRefs                           // JSON Schema → JSON Schema with $ref inlined
	geminiToOpenAPI                            // JSON Schema → Gemini's OpenAPI subset
)

// geminiMaxRefDepth bounds $ref inlining: deeper means a cycle.
const geminiMaxRefDepth = 12

// geminiSchemaToJSONSchema turns a schema a Gemini client sent into JSON
// Schema for the other protocols. A schema with nothing Gemini-specific is
// returned as it is.
func geminiSchemaToJSONSchema(raw []byte) []byte {
	if !geminiHasGeminiForm(raw) {
		return raw
	}
	w := geminiSchemaWriter{mode: geminiToJSONSchema, root: gjson.ParseBytes(raw)}
	return w.schema(nil, w.root, 0)
}

// geminiHasGeminiForm reports whether a schema uses Gemini's own spellings:
// upper-case type names, nullable or propertyOrdering.
func geminiHasGeminiForm(raw []byte) bool {
	for _, s := range [...]string{`"nullable"`, `"propertyOrdering"`, `"OBJECT"`, `"STRING"`, `"INTEGER"`, `"NUMBER"`, `"BOOLEAN"`, `"ARRAY"`, `"NULL"`} {
		if bytes.Contains(raw, []byte(s)) {
			return true
		}
	}
	return false
}

// geminiJSONSchema prepares a JSON Schema for parametersJsonSchema or
// responseJsonSchema. ok is false when its references cannot be inlined;
// then the caller falls back to geminiOpenAPISchema.
func geminiJSONSchema(raw []byte) (out []byte, ok bool) {
	if !bytes.Contains(raw, []byte(`"$ref"`)) {
		return raw, true
	}
	w := geminiSchemaWriter{mode: geminiInlineRefs, root: gjson.ParseBytes(raw)}
	out = w.schema(nil, w.root, 0)
	return out, !w.failed
}

// geminiOpenAPISchema rewrites a JSON Schema into the OpenAPI subset of
// parameters and responseSchema.
func geminiOpenAPISchema(raw []byte) []byte {
	w := geminiSchemaWriter{mode: geminiToOpenAPI, root: gjson.ParseBytes(raw)}
	return w.schema(nil, w.root, 0)
}

// geminiSchemaEmpty reports whether a schema constrains nothing (absent,
// {}, or an object without properties), so a function declaration can omit
// its parameters.
func geminiSchemaEmpty(raw []byte) bool {
	s := gjson.ParseBytes(raw)
	if !s.IsObject() {
		return true
	}
	empty := true
	s.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			empty = v.Str == "object" || v.Str == "OBJECT"
		case "properties":
			// No member; Map would build a map only to count them.
			empty = !v.IsObject() || strings.TrimSpace(v.Raw[1:len(v.Raw)-1]) == ""
		case "$schema", "additionalProperties", "description", "title":
		default:
			empty = false
		}
		return empty
	})
	return empty
}

type geminiSchemaWriter struct {
	mode   geminiSchemaMode
	root   gjson.Result
	failed bool // a reference could not be inlined
}

// geminiMember is one member of a schema node after $ref and allOf were
// merged into it.
type geminiMember struct {
	key string
	val gjson.Result
}

// geminiNode is a schema node with its references and allOf parts merged
// in: members keep the first value of each keyword (the node's own wins
// over what it references), properties and required are united.
type geminiNode struct {
	members  []geminiMember
	props    []geminiMember
	required []string
	hasProps bool
}

func (n *geminiNode) has(key string) bool {
	for i := range n.members {
		if n.members[i].key == key {
			return true
		}
	}
	return false
}

func (n *geminiNode) get(key string) gjson.Result {
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return gjson.Result{}
}

// collect merges s into n. In geminiToJSONSchema mode references are kept
// as they are (they are JSON Schema already).
func (w *geminiSchemaWriter) collect(n *geminiNode, s gjson.Result, depth int) {
	var ref, allOf gjson.Result
	s.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "$ref" && w.mode != geminiToJSONSchema:
			ref = v
		case k.Str == "allOf" && w.mode == geminiToOpenAPI:
			allOf = v
		case k.Str == "properties" && v.IsObject():
			n.hasProps = true
			v.ForEach(func(name, p gjson.Result) bool {
				for i := range n.props {
					if n.props[i].key == name.Str {
						return true
					}
				}
				n.props = append(n.props, geminiMember{name.Str, p})
				return true
			})
		case k.Str == "required" && v.IsArray():
			v.ForEach(func(_, r gjson.Result) bool {
				if r.Type == gjson.String && !containsString(n.required, r.Str) {
					n.required = append(n.required, r.Str)
				}
				return true
			})
		case (k.Str == "$defs" || k.Str == "definitions") && w.mode != geminiToJSONSchema:
			// Inlined where they are used.
		case k.Str == "$schema" && w.mode == geminiToOpenAPI:
		default:
			if !n.has(k.Str) {
				n.members = append(n.members, geminiMember{k.Str, v})
			}
		}
		return true
	})
	if ref.Exists() {
		target, ok := w.resolve(ref.Str)
		if !ok || depth >= geminiMaxRefDepth {
			w.failed = true
			if w.mode == geminiToOpenAPI && !n.has("type") {
				// A cut cycle: an object of any shape.
				n.members = append(n.members, geminiMember{"type", gjson.Result{Type: gjson.String, Str: "object"}})
			}
		} else {
			w.collect(n, target, depth+1)
		}
	}
	allOf.ForEach(func(_, part gjson.Result) bool {
		if part.IsObject() {
			w.collect(n, part, depth+1)
		}
		return true
	})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// resolve finds a same-document reference ("#", "#/$defs/X",
// "#/definitions/X", any JSON pointer into the root).
func (w *geminiSchemaWriter) resolve(ref string) (gjson.Result, bool) {
	if ref == "#" {
		return w.root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return gjson.Result{}, false
	}
	cur := w.root
	for seg := range strings.SplitSeq(ref[2:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		cur = cur.Get(geminiEscapePath(seg))
		if !cur.Exists() {
			return cur, false
		}
	}
	return cur, cur.IsObject()
}

// geminiEscapePath escapes a member name for a gjson path.
func geminiEscapePath(s string) string {
	if !strings.ContainsAny(s, `.*?|#@\!=<>%`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`.*?|#@\!=<>%`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// schema appends the rewritten schema s.
func (w *geminiSchemaWriter) schema(b []byte, s gjson.Result, depth int) []byte {
	if !s.IsObject() {
		if w.mode == geminiToOpenAPI {
			return append(b, "{}"...) // true/false schemas have no OpenAPI form
		}
		return append(b, s.Raw...)
	}
	var n geminiNode
	w.collect(&n, s, depth)
	if w.mode == geminiToOpenAPI {
		return w.openAPI(b, &n, depth)
	}
	b = append(b, '{')
	nullable := w.mode == geminiToJSONSchema && n.get("nullable").Type == gjson.True
	for _, m := range n.members {
		switch {
		case w.mode == geminiToJSONSchema && (m.key == "nullable" || m.key == "propertyOrdering"):
			continue
		case w.mode == geminiToJSONSchema && m.key == "type" && m.val.Type == gjson.String:
			b = appendJSONComma(b)
			b = appendJSONKey(b, "type")
			t := strings.ToLower(m.val.Str)
			if nullable && t != "null" {
				b = append(b, '[')
				b = appendJSONString(b, t)
				b = append(b, `,"null"]`...)
			} else {
				b = appendJSONString(b, t)
			}
			continue
		}
		b = appendJSONComma(b)
		b = appendJSONKey(b, m.key)
		b = w.sub(b, m.key, m.val, depth)
	}
	if n.hasProps {
		b = appendJSONComma(b)
		b = append(b, `"properties":{`...)
		for _, p := range n.props {
			b = appendJSONComma(b)
			b = appendJSONKey(b, p.key)
			b = w.schema(b, p.val, depth+1)
		}
		b = append(b, '}')
	}
	if len(n.required) > 0 {
		b = appendJSONComma(b)
		b = append(b, `"required":`...)
		b = appendStringList(b, n.required)
	}
	return append(b, '}')
}

// sub appends the value of member key, recursing into subschemas.
func (w *geminiSchemaWriter) sub(b []byte, key string, v gjson.Result, depth int) []byte {
	switch key {
	case "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else":
		if v.IsObject() {
			return w.schema(b, v, depth+1)
		}
		if v.IsArray() {
			return w.schemaList(b, v, depth)
		}
	case "anyOf", "oneOf", "allOf", "prefixItems":
		if v.IsArray() {
			return w.schemaList(b, v, depth)
		}
	case "patternProperties", "dependentSchemas", "$defs", "definitions":
		if v.IsObject() {
			b = append(b, '{')
			v.ForEach(func(k, s gjson.Result) bool {
				b = appendJSONComma(b)
				b = appendJSONKey(b, k.Str)
				b = w.schema(b, s, depth+1)
				return true
			})
			return append(b, '}')
		}
	}
	return append(b, v.Raw...)
}

func (w *geminiSchemaWriter) schemaList(b []byte, v gjson.Result, depth int) []byte {
	b = append(b, '[')
	v.ForEach(func(_, s gjson.Result) bool {
		b = appendJSONComma(b)
		b = w.schema(b, s, depth+1)
		return true
	})
	return append(b, ']')
}

// geminiOpenAPIFormats are the formats Gemini's Schema accepts.
var geminiOpenAPIFormats = map[string]bool{"enum": true, "date-time": true, "int32": true, "int64": true, "float": true, "double": true}

// openAPI appends a node in Gemini's OpenAPI subset: upper-case types,
// nullable instead of type arrays and null branches, anyOf instead of
// oneOf, enum instead of const, minimum instead of exclusiveMinimum; every
// keyword Gemini's Schema lacks is left out.
func (w *geminiSchemaWriter) openAPI(b []byte, n *geminiNode, depth int) []byte {
	b = append(b, '{')
	typ, nullable := "", n.get("nullable").Type == gjson.True
	// The union branches; a null branch makes the node nullable, and a
	// union of one schema (and null) is that schema, merged into the node.
	var anyOf []gjson.Result
	for _, key := range [...]string{"anyOf", "oneOf"} {
		n.get(key).ForEach(func(_, s gjson.Result) bool {
			if s.Get("type").Str == "null" && len(s.Map()) == 1 {
				nullable = true
			} else if s.IsObject() {
				anyOf = append(anyOf, s)
			}
			return true
		})
	}
	if len(anyOf) == 1 && !n.has("type") {
		w.collect(n, anyOf[0], depth+1)
		anyOf = nil
	}
	var extraTypes []string
	switch t := n.get("type"); {
	case t.Type == gjson.String:
		typ = t.Str
	case t.IsArray():
		t.ForEach(func(_, x gjson.Result) bool {
			switch {
			case x.Str == "null":
				nullable = true
			case typ == "":
				typ = x.Str
			default:
				extraTypes = append(extraTypes, x.Str)
			}
			return true
		})
	}
	if typ == "null" {
		typ, nullable = "", true
	}
	if typ == "" && n.hasProps {
		typ = "object"
	}
	if len(extraTypes) > 0 {
		// Several types: anyOf one schema per type.
		b = append(b, `"anyOf":[`...)
		for i, t := range append([]string{typ}, extraTypes...) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = appendJSONString(b, strings.ToUpper(t))
			b = append(b, '}')
		}
		b = append(b, ']')
		typ = ""
	}
	if typ != "" {
		b = appendJSONComma(b)
		b = append(b, `"type":`...)
		b = appendJSONString(b, strings.ToUpper(typ))
	}
	for _, m := range n.members {
		v := m.val
		switch m.key {
		case "description", "title", "pattern":
			if v.Type == gjson.String {
				b = appendJSONComma(b)
				b = appendJSONKey(b, m.key)
				b = append(b, v.Raw...)
			}
		case "default", "example":
			b = appendJSONComma(b)
			b = appendJSONKey(b, m.key)
			b = append(b, v.Raw...)
		case "format":
			if geminiOpenAPIFormats[v.Str] {
				b = appendJSONComma(b)
				b = append(b, `"format":`...)
				b = append(b, v.Raw...)
			}
		case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties", "minimum", "maximum":
			if v.Type == gjson.Number {
				b = appendJSONComma(b)
				b = appendJSONKey(b, m.key)
				b = append(b, v.Raw...)
			}
		case "exclusiveMinimum", "exclusiveMaximum":
			bound := "minimum"
			if m.key == "exclusiveMaximum" {
				bound = "maximum"
			}
			if v.Type == gjson.Number && !n.has(bound) {
				b = appendJSONComma(b)
				b = appendJSONKey(b, bound)
				b = append(b, v.Raw...)
			}
		case "enum":
			if geminiAllStrings(v) {
				b = appendJSONComma(b)
				b = append(b, `"enum":`...)
				b = append(b, v.Raw...)
			}
		case "const":
			if v.Type == gjson.String && !n.has("enum") {
				b = appendJSONComma(b)
				b = append(b, `"enum":[`...)
				b = append(b, v.Raw...)
				b = append(b, ']')
			}
		case "items":
			if v.IsArray() {
				v = v.Get("0") // a tuple: its first element describes the items best
			}
			if v.IsObject() {
				b = appendJSONComma(b)
				b = append(b, `"items":`...)
				b = w.schema(b, v, depth+1)
			}
		}
	}
	if len(anyOf) > 0 {
		b = appendJSONComma(b)
		b = append(b, `"anyOf":[`...)
		for i, s := range anyOf {
			if i > 0 {
				b = append(b, ',')
			}
			b = w.schema(b, s, depth+1)
		}
		b = append(b, ']')
	}
	if nullable {
		b = appendJSONComma(b)
		b = append(b, `"nullable":true`...)
	}
	if len(n.props) > 0 {
		b = appendJSONComma(b)
		b = append(b, `"properties":{`...)
		for _, p := range n.props {
			b = appendJSONComma(b)
			b = appendJSONKey(b, p.key)
			b = w.schema(b, p.val, depth+1)
		}
		b = append(b, '}')
		var req []string
		for _, r := range n.required {
			for _, p := range n.props {
				if p.key == r {
					req = append(req, r)
					break
				}
			}
		}
		if len(req) > 0 {
			b = append(b, `,"required":`...)
			b = appendStringList(b, req)
		}
	}
	return append(b, '}')
}

func geminiAllStrings(v gjson.Result) bool {
	if !v.IsArray() {
		return false
	}
	ok := true
	v.ForEach(func(_, x gjson.Result) bool {
		ok = x.Type == gjson.String
		return ok
	})
	return ok
}

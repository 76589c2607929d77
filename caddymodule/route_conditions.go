package caddymodule

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/louter/louter/tokencount"
	"github.com/louter/louter/translate"
)

// RouteCondition sends a request whose model a route matched to another
// backend when the request's content says so: images, a long context, a
// request to think, tools, the client's protocol, a header. A route's
// conditions are tried in order after its pattern matched, and the first
// whose tests all hold picks the backend; when none holds, the route's own
// backend serves. Every test that is set must hold; a condition with no
// test set never matches.
type RouteCondition struct {
	// The request carries an image or a document (PDF, text file),
	// anywhere in the conversation, tool results included.
	Images bool `json:"images,omitempty"`

	// The request's input is estimated at more than this many tokens. The
	// estimate is local and cheap (tokencount.Quick, a sampled estimate of
	// the text, images and tools): a threshold, not a bill. 0: not tested.
	TokensAbove int `json:"tokens_above,omitempty"`

	// The request asks the model to think: Anthropic thinking enabled or
	// adaptive, an OpenAI reasoning_effort or Responses reasoning effort
	// other than none, a Gemini thinking budget or level.
	Thinking bool `json:"thinking,omitempty"`

	// The request offers the model at least one tool.
	Tools bool `json:"tools,omitempty"`

	// The request offers a tool of this name or type: a function tool's
	// name, or a provider's built-in tool: "web_search" matches
	// Anthropic's web_search_20250305, the Responses API's
	// {"type":"web_search"} (which Codex always offers) and Gemini's
	// googleSearch (which Gemini CLI always offers).
	Tool string `json:"tool,omitempty"`

	// The client's protocol: anthropic, openai_chat, openai_responses or
	// gemini.
	Client translate.Protocol `json:"client,omitempty"`

	// A request header that must be present, with a value matching
	// HeaderValue.
	Header string `json:"header,omitempty"`

	// The glob the value of Header must match ('*' matches any run of
	// characters; "*" alone, or empty, any value). Used with Header only.
	HeaderValue string `json:"header_value,omitempty"`

	// The backend (a key of backends) that serves a request this condition
	// matches.
	Backend string `json:"backend"`

	// The model name to send to that backend instead of the client's.
	// Empty keeps the client's model name (not the route's rename, which is
	// for the route's own backend).
	Rename string `json:"rename,omitempty"`

	backend *Backend
	header  string // Header in canonical form
}

// needsRequest reports whether testing c needs the decoded request (the
// IR); the other tests read the headers, the protocol or the raw body.
func (c *RouteCondition) needsRequest() bool {
	return c.Images || c.TokensAbove > 0 || c.Thinking
}

// empty reports whether c tests nothing.
func (c *RouteCondition) empty() bool {
	return !c.needsRequest() && !c.Tools && c.Tool == "" && c.Client == "" && c.Header == ""
}

// conditionInput is what route conditions are tested against. The decoded
// request is obtained through decode, at most once and only when a
// condition needs it.
type conditionInput struct {
	client translate.Protocol
	header http.Header
	body   []byte
	// decode returns the request in the IR, or nil when the body does not
	// decode (the tests on it then fail, and the route's backend answers
	// as it would have).
	decode func() *translate.Request
	// tokensFor is the protocol whose counting the token estimate follows.
	tokensFor translate.Protocol
}

// matches reports whether every test c sets holds for in.
func (c *RouteCondition) matches(in *conditionInput) bool {
	if c.empty() {
		return false
	}
	if c.Client != "" && c.Client != in.client {
		return false
	}
	if c.Header != "" {
		name := c.header
		if name == "" { // not provisioned (tests)
			name = http.CanonicalHeaderKey(c.Header)
		}
		vs, ok := in.header[name]
		if !ok || !anyGlob(c.HeaderValue, vs) {
			return false
		}
	}
	if c.Tools && !bodyHasTools(in.body) {
		return false
	}
	if c.Tool != "" && !bodyHasTool(in.body, c.Tool) {
		return false
	}
	if !c.needsRequest() {
		return true
	}
	req := in.decode()
	if req == nil {
		return false
	}
	if c.Images && !hasMedia(req) {
		return false
	}
	if c.Thinking && !wantsThinking(req) {
		return false
	}
	if c.TokensAbove > 0 && tokencount.Quick(req, rowOf(in.tokensFor).tokenFraming) <= c.TokensAbove {
		return false
	}
	return true
}

// anyGlob reports whether one of values matches pattern; an empty pattern
// or "*" matches any value.
func anyGlob(pattern string, values []string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	for _, v := range values {
		if globMatch(pattern, v) {
			return true
		}
	}
	return false
}

// chooseBackend returns the backend for a request the route matched, and
// the model name to send it instead of the client's ("" for none): those of
// the first condition that holds, else the route's own.
func (r *ModelRoute) chooseBackend(in *conditionInput) (*Backend, string, *RouteCondition) {
	for i := range r.When {
		if c := &r.When[i]; c.matches(in) {
			return c.backend, c.Rename, c
		}
	}
	return r.backend, r.Rename, nil
}

// hasMedia reports whether req carries an image or a document anywhere.
func hasMedia(req *translate.Request) bool {
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			switch p.Type {
			case translate.PartImage, translate.PartDocument:
				return true
			case translate.PartToolResult:
				for k := range p.ToolResult.Content {
					if t := p.ToolResult.Content[k].Type; t == translate.PartImage || t == translate.PartDocument {
						return true
					}
				}
			}
		}
	}
	return false
}

// wantsThinking reports whether req asks the model to reason. An effort
// alone (Anthropic's output_config.effort) without thinking turned on does
// not count; "none" and "minimal" efforts decode as disabled or low and
// are not thinking either.
func wantsThinking(req *translate.Request) bool {
	r := req.Reasoning
	if r == nil {
		return false
	}
	switch r.Mode {
	case translate.ReasoningEnabled, translate.ReasoningAdaptive:
		return r.Effort != "none" && r.Effort != "minimal"
	}
	return false
}

// bodyHasTools reports whether the raw request offers any tool. All four
// protocols put them in a top-level "tools" array.
func bodyHasTools(body []byte) bool {
	t := topMember(body, "tools")
	if !t.IsArray() {
		return false
	}
	found := false
	t.ForEach(func(_, _ gjson.Result) bool { found = true; return false })
	return found
}

// bodyHasTool reports whether the raw request offers a tool named or typed
// name. It reads the raw body because the decoders leave out providers'
// built-in tools, which the IR cannot carry, and those (web search) are
// what an operator most wants to route by.
func bodyHasTool(body []byte, name string) bool {
	tools := topMember(body, "tools")
	if !tools.IsArray() {
		return false
	}
	found := false
	tools.ForEach(func(_, t gjson.Result) bool {
		found = toolIs(t, name)
		return !found
	})
	return found
}

// toolIs reports whether one tools entry, in any protocol, is the tool
// name: Anthropic {"name"} (and a server tool's versioned "type", such as
// web_search_20250305), OpenAI Chat {"function":{"name"}}, Responses
// {"name"} or {"type":"web_search"}, Gemini {"functionDeclarations":[...]}
// or a built-in tool's key ({"googleSearch":{}}).
func toolIs(t gjson.Result, name string) bool {
	if !t.IsObject() {
		return false
	}
	is := func(s string) bool {
		if s == "" {
			return false
		}
		if s == name || slices.Contains(toolAliases[name], s) {
			return true
		}
		// Anthropic versions its server tools' types: web_search_20250305.
		return strings.HasPrefix(s, name+"_") && isVersionSuffix(s[len(name)+1:])
	}
	typ, nm, fn := t.Get("type"), t.Get("name"), t.Get("function")
	if typ.Exists() || nm.Exists() || fn.Exists() { // Anthropic, OpenAI
		return is(typ.Str) || is(nm.Str) || is(fn.Get("name").Str)
	}
	// Gemini: one object of function declarations, or a built-in tool by
	// its key.
	found := false
	t.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "functionDeclarations", "function_declarations":
			v.ForEach(func(_, fd gjson.Result) bool {
				found = is(fd.Get("name").Str)
				return !found
			})
		default:
			found = is(k.Str) || is(geminiCamelName(k.Str))
		}
		return !found
	})
	return found
}

// toolAliases are the other protocols' names of a built-in tool, so that
// one condition catches it from every client: Gemini's googleSearch for
// web_search, the Responses API's preview spelling.
var toolAliases = map[string][]string{
	"web_search": {"googleSearch", "google_search", "web_search_preview"},
}

// isVersionSuffix reports whether s is the date version Anthropic appends
// to its server tools' types (20250305).
func isVersionSuffix(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// geminiCamelName turns google_search into googleSearch.
func geminiCamelName(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// topMember returns a top-level member of a JSON object body, read without
// copying the body.
func topMember(body []byte, key string) gjson.Result {
	if len(body) == 0 {
		return gjson.Result{}
	}
	return gjson.Get(unsafe.String(&body[0], len(body)), key)
}

// provisionConditions resolves the backends the conditions of every route
// name.
func (l *Louter) provisionConditions() {
	for i := range l.Models {
		for j := range l.Models[i].When {
			c := &l.Models[i].When[j]
			c.backend = l.Backends[c.Backend]
			c.header = http.CanonicalHeaderKey(c.Header)
		}
	}
}

// validateConditions checks every route's conditions.
func (l *Louter) validateConditions() []error {
	var errs []error
	for i := range l.Models {
		m := &l.Models[i]
		for j := range m.When {
			c := &m.When[j]
			where := fmt.Sprintf("model route %d (%q), condition %d", i, m.Match, j)
			if c.backend == nil {
				errs = append(errs, fmt.Errorf("%s: unknown backend %q", where, c.Backend))
			}
			if c.empty() {
				errs = append(errs, fmt.Errorf("%s: tests nothing (set images, tokens_above, thinking, tools, tool, client or header)", where))
			}
			if c.TokensAbove < 0 {
				errs = append(errs, fmt.Errorf("%s: tokens_above must not be negative", where))
			}
			if c.Client != "" {
				if _, _, ok := servedProtocol(c.Client); !ok {
					errs = append(errs, fmt.Errorf("%s: unknown client protocol %q (known: %s)", where, c.Client, knownProtocols()))
				}
			}
			if c.HeaderValue != "" && c.Header == "" {
				errs = append(errs, fmt.Errorf("%s: header_value without header", where))
			}
		}
	}
	return errs
}

// applyConditions tests the conditions of the route that matched model,
// and returns the backend and rename they pick, with the request decoded
// if a condition needed it (nil otherwise), so that a translated request
// is not decoded twice, and whether a condition held (else the route's own
// backend and rename are returned). A body that does not decode fails the tests that
// need it; the error is reported later, by the backend's own translation,
// as without conditions.
func (l *Louter) applyConditions(route *ModelRoute, p translate.Protocol, client translate.Codec, h http.Header, body []byte, model string) (b *Backend, rename string, ir *translate.Request, held bool) {
	decoded := false
	in := conditionInput{
		client: p, header: h, body: body, tokensFor: route.backend.Protocol,
		decode: func() *translate.Request {
			if !decoded {
				decoded = true
				if req, err := client.DecodeRequest(body); err == nil {
					ir = req
				}
			}
			return ir
		},
	}
	b, rename, c := route.chooseBackend(&in)
	if c != nil {
		held = true
		if ce := l.logger.Check(zapcore.DebugLevel, "route condition matched"); ce != nil {
			ce.Write(zap.String("model", model), zap.String("route", route.Match), zap.String("backend", c.Backend), zap.String("condition", c.String()))
		}
	}
	return b, rename, ir, held
}

// String describes the condition's tests in the Caddyfile's words, for
// logs and errors.
func (c *RouteCondition) String() string {
	var parts []string
	if c.Images {
		parts = append(parts, "images")
	}
	if c.TokensAbove > 0 {
		parts = append(parts, fmt.Sprintf("tokens > %d", c.TokensAbove))
	}
	if c.Thinking {
		parts = append(parts, "thinking")
	}
	if c.Tools {
		parts = append(parts, "tools")
	}
	if c.Tool != "" {
		parts = append(parts, "tool "+c.Tool)
	}
	if c.Client != "" {
		parts = append(parts, "client "+string(c.Client))
	}
	if c.Header != "" {
		v := c.HeaderValue
		if v == "" {
			v = "*"
		}
		parts = append(parts, "header "+c.Header+" "+v)
	}
	return strings.Join(parts, " and ")
}

package translate

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"
)

// The Anthropic request decoder reads the body in one pass with the
// scanner of json_scan.go: every byte is looked at once, validated on the
// way, and the IR's strings are views of the body (or, when the client
// escaped something, unescaped once). A Claude Code request is ~100 KB of
// which nearly all is message text, tool results and tool schemas, so this
// is where a translated request spent its time when it was parsed with
// gjson (which re-scans each nested object and copies every string).
//
// The small settings (tool_choice, thinking, metadata, numbers, ...) are
// still read with gjson, on views of their few bytes, so that they behave
// exactly as before. Files: this one (entry point, top-level members,
// settings), anthropic_request_decode_values.go (strings and raw values),
// anthropic_request_decode_blocks.go (messages and content blocks),
// anthropic_request_decode_tools.go (tools),
// anthropic_request_decode_slabs.go (where parts and calls are allocated).

// DecodeRequest implements Codec. It accepts what Claude Code and the
// Anthropic SDKs send, including beta fields such as role:"system" messages,
// adaptive thinking and output_config. What the IR cannot carry is recorded
// with req.Drop; a request Anthropic itself would reject for its shape is a
// 400.
//
// DecodeRequest validates the body (a body that is not valid JSON is a
// 400), so it need not be validated before. The returned Request shares
// memory with body: body must not be modified while the Request is used.
func (anthropicCodec) DecodeRequest(body []byte) (*Request, error) {
	d := anthRequestDecoder{body: body, req: &Request{}}
	if p, ok := anthScratch.Get().(*[]byte); ok {
		d.scratch = *p
	}
	err := d.decode()
	if cap(d.scratch) <= anthScratchMax {
		s := d.scratch[:0]
		anthScratch.Put(&s)
	}
	if err == nil {
		return d.req, nil
	}
	// A field error found before the end of the body counts only if the
	// rest is valid JSON too: a body that is not JSON is reported as such,
	// whatever it holds.
	if err == errAnthSyntax || !gjson.ValidBytes(body) {
		return nil, BadRequest("request body is not valid JSON")
	}
	return nil, err
}

// anthScratch holds the buffers textAt unescapes into before the text is
// copied out, so that a request's largest text does not cost a growing
// buffer of garbage each time; anthScratchMax bounds what is kept.
var anthScratch sync.Pool

const anthScratchMax = 1 << 20

// errAnthSyntax is returned inside the decoder when the body is not valid
// JSON; DecodeRequest turns it into a fresh error.
var errAnthSyntax = BadRequest("request body is not valid JSON")

// anthBadParam is a 400 naming the offending field.
func anthBadParam(param, message string) *Error {
	e := BadRequest(message)
	e.Param = param
	return e
}

// anthPath is the location of a value in the request
// ("messages.3.content.0.id"). It is a value built on the stack while
// decoding and rendered only for an error, so a valid request costs no
// allocation for it.
type anthPath struct {
	n    int
	segs [12]anthPathSeg // enough for anthMaxBlockDepth
}

type anthPathSeg struct {
	key   string // member name; "" for an array element
	index int
}

// key is the path of member k.
func (p anthPath) key(k string) anthPath {
	if p.n < len(p.segs) {
		p.segs[p.n] = anthPathSeg{key: k}
		p.n++
	}
	return p
}

// index is the path of array element i.
func (p anthPath) index(i int) anthPath {
	if p.n < len(p.segs) {
		p.segs[p.n] = anthPathSeg{index: i}
		p.n++
	}
	return p
}

func (p *anthPath) String() string {
	var b []byte
	for i := 0; i < p.n; i++ {
		if i > 0 {
			b = append(b, '.')
		}
		if s := p.segs[i]; s.key != "" {
			b = append(b, s.key...)
		} else {
			b = strconv.AppendInt(b, int64(s.index), 10)
		}
	}
	return string(b)
}

// bad is a 400 for the value at p.
func (p *anthPath) bad(reason string) *Error {
	param := p.String()
	return anthBadParam(param, param+": "+reason)
}

// anthRequestDecoder holds the state of one DecodeRequest call.
type anthRequestDecoder struct {
	body        []byte
	req         *Request
	sawMessages bool
	toolRef     bool      // the message being read has a tool_reference in a tool_result
	depth       int       // nesting of block arrays being decoded
	arena       textArena // backs the small unescaped strings (see keep)
	scratch     []byte    // unescaped text before keep copies it out

	// Slabs and scratch space for the IR's small values (see carve).
	partScratch [anthMaxBlockDepth][]Part // blocks decoded at each depth
	partSlab    []Part
	calls       []ToolCall
	results     []ToolResult
}

// anthMaxBlockDepth bounds the nesting of block arrays: a message's content,
// a tool result's content, a content document inside it.
const anthMaxBlockDepth = 3

// decode walks the top-level object.
func (d *anthRequestDecoder) decode() *Error {
	data := d.body
	i := jsonSkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return BadRequest("request body must be a JSON object")
	}
	m := jsonOpenObject(data, i)
	for {
		name, esc, ok := m.next()
		if !ok {
			break
		}
		if err := d.member(&m, d.key(name, esc)); err != nil {
			return err
		}
	}
	if m.bad || !jsonScanTail(data, m.i) {
		return errAnthSyntax
	}
	if d.req.Model == "" {
		return anthBadParam("model", "model: field required")
	}
	if !d.sawMessages {
		return anthBadParam("messages", "messages: field required")
	}
	return nil
}

// member decodes the top-level member key, whose value starts at m.i, and
// moves m past it. The messages, the system prompt and the tools are walked
// where they lie; every other value is small and read with gjson.
func (d *anthRequestDecoder) member(m *jsonMembers, key string) *Error {
	switch kind := m.peek(); {
	case key == "messages" && kind == jsonArray:
		d.sawMessages = true
		a := jsonOpenArray(d.body, m.i)
		if !a.next() {
			if a.bad {
				return errAnthSyntax
			}
			return anthBadParam("messages", "messages: at least one message is required")
		}
		end, err := d.messages(&a)
		m.i = end
		return err
	case key == "system" && kind == jsonArray:
		parts, end, err := d.blocks(anthPath{}.key("system"), m.i, anthInMessage)
		if err != nil {
			return err
		}
		m.i = end
		d.req.System = d.textOnly(parts, "system")
		return nil
	case key == "tools" && kind == jsonArray:
		end, err := d.tools(m.i)
		m.i = end
		return err
	}
	if key == "system" && m.peek() == jsonString {
		_, s, form, ok := d.textAt(m)
		if !ok {
			return errAnthSyntax
		}
		if s != "" {
			d.req.System = append(d.req.System, Part{Type: PartText, Text: s, textForm: form})
		}
		return nil
	}
	sp, ok := m.value()
	if !ok {
		return errAnthSyntax
	}
	return d.setting(key, d.result(sp))
}

// setting decodes a top-level member other than the messages, an array
// system prompt and the tools. JSON null means "not given" for every field,
// as in the SDKs.
func (d *anthRequestDecoder) setting(key string, v gjson.Result) *Error {
	req := d.req
	if v.Type == gjson.Null {
		if key == "model" || key == "messages" {
			return anthBadParam(key, key+": must not be null")
		}
		return nil
	}
	switch key {
	case "model":
		if v.Type != gjson.String || v.Str == "" {
			return anthBadParam("model", "model: must be a non-empty string")
		}
		req.Model = v.Str
	case "messages":
		return anthInvalidType("messages", wantArray)
	case "system":
		return anthInvalidType("system", wantStringOrArray)
	case "tools":
		return anthInvalidType("tools", wantArray)
	case "max_tokens":
		n, err := anthNum(key, ruleMaxTokens, v)
		if err != nil {
			return err
		}
		req.MaxTokens = int(n)
	case "temperature":
		f, err := anthNum(key, ruleUnit, v)
		if err != nil {
			return err
		}
		req.Temperature = &f
	case "top_p":
		f, err := anthNum(key, ruleUnit, v)
		if err != nil {
			return err
		}
		req.TopP = &f
	case "top_k":
		f, err := anthNum(key, ruleCount, v)
		if err != nil {
			return err
		}
		n := int(f)
		req.TopK = &n
	case "stop_sequences":
		if !v.IsArray() {
			return anthInvalidType(key, wantArray)
		}
		var err *Error
		i := 0
		v.ForEach(func(_, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = anthInvalidType("stop_sequences."+strconv.Itoa(i), wantString)
				return false
			}
			req.StopSequences = append(req.StopSequences, s.Str)
			i++
			return true
		})
		return err
	case "stream":
		if !wantBool.match(v) {
			return anthInvalidType(key, wantBool)
		}
		req.Stream = v.Type == gjson.True
	case "metadata":
		if !v.IsObject() {
			return anthInvalidType(key, wantObject)
		}
		v.ForEach(func(k, m gjson.Result) bool {
			if k.Str == "user_id" && m.Type == gjson.String {
				req.User = m.Str
			} else if m.Type != gjson.Null {
				req.Drop("metadata."+k.Str, "not translated")
			}
			return true
		})
	case "tool_choice", "thinking", "output_config":
		// Objects by the API's schema; what is inside is read leniently.
		if !v.IsObject() {
			return anthInvalidType(key, wantObject)
		}
		switch key {
		case "tool_choice":
			d.toolChoice(v)
		case "thinking":
			d.thinking(v)
		default:
			d.outputConfig(v)
		}
	case "context_management":
		// Sent on to a backend that edits itself, applied by louter for
		// the others (context_edits.go).
		if v.Type == gjson.Null {
			return nil
		}
		if !v.IsObject() {
			return anthInvalidType(key, wantObject)
		}
		d.contextManagement().Raw = json.RawMessage(v.Raw)
	case "cache_control":
		req.Drop(key, "Anthropic automatic prompt caching has no equivalent elsewhere")
	case "service_tier", "inference_geo":
		req.Drop(key, "Anthropic-specific routing option")
	case "container":
		req.Drop(key, "Anthropic code execution container")
	case "mcp_servers":
		req.Drop(key, "Anthropic-hosted MCP connector is not translated")
	default:
		req.Drop(key, DropUnknown)
	}
	return nil
}

// contextManagement returns req.ContextManagement, creating it.
func (d *anthRequestDecoder) contextManagement() *ContextManagement {
	if d.req.ContextManagement == nil {
		d.req.ContextManagement = &ContextManagement{}
	}
	return d.req.ContextManagement
}

func (d *anthRequestDecoder) toolChoice(v gjson.Result) {
	req := d.req
	tc := &ToolChoice{}
	switch v.Get("type").Str {
	case "auto":
		tc.Mode = ToolChoiceAuto
	case "any":
		tc.Mode = ToolChoiceRequired
	case "tool":
		tc.Mode, tc.Name = ToolChoiceTool, v.Get("name").String()
	case "none":
		tc.Mode = ToolChoiceNone
	default:
		req.Drop("tool_choice", "unknown type "+strconv.Quote(v.Get("type").String()))
		return
	}
	req.ToolChoice = tc
	if v.Get("disable_parallel_tool_use").Type == gjson.True {
		f := false
		req.ParallelToolCalls = &f
	}
}

// reasoning returns req.Reasoning, creating it: thinking and output_config
// both contribute to it, in either order.
func (d *anthRequestDecoder) reasoning() *Reasoning {
	if d.req.Reasoning == nil {
		d.req.Reasoning = &Reasoning{}
	}
	return d.req.Reasoning
}

func (d *anthRequestDecoder) thinking(v gjson.Result) {
	var mode ReasoningMode
	switch v.Get("type").Str {
	case "enabled":
		mode = ReasoningEnabled
	case "disabled":
		mode = ReasoningDisabled
	case "adaptive":
		mode = ReasoningAdaptive
	default:
		d.req.Drop("thinking", "unknown type "+strconv.Quote(v.Get("type").String()))
		return
	}
	r := d.reasoning()
	r.Mode = mode
	if mode == ReasoningEnabled {
		r.BudgetTokens = int(v.Get("budget_tokens").Int())
	}
	if disp := v.Get("display"); disp.Type == gjson.String {
		r.Display = disp.Str
	}
}

func (d *anthRequestDecoder) outputConfig(v gjson.Result) {
	req := d.req
	v.ForEach(func(k, val gjson.Result) bool {
		if val.Type == gjson.Null {
			return true
		}
		switch k.Str {
		case "effort":
			d.reasoning().Effort = val.String()
		case "format":
			switch val.Get("type").Str {
			case "json_schema":
				req.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: anthRaw(val.Get("schema"))}
			default:
				req.Drop("output_config.format", "unknown type "+strconv.Quote(val.Get("type").String()))
			}
		default:
			req.Drop("output_config."+k.Str, DropUnknown)
		}
		return true
	})
}

// anthRaw copies a raw JSON value that gjson read, nil when absent or null.
func anthRaw(v gjson.Result) json.RawMessage {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	return json.RawMessage(v.Raw)
}

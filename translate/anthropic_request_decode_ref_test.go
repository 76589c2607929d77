package translate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"
)

// anthRefDecodeRequest is the gjson-based Anthropic request decoder that
// the single-pass decoder replaced, kept as the reference the fuzz test
// holds the new one to (FuzzAnthropicDecodeRequestReference).
func anthRefDecodeRequest(body []byte) (*Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, BadRequest("request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, BadRequest("request body must be a JSON object")
	}
	d := anthRefDecoder{req: &Request{}}
	var err *Error
	root.ForEach(func(key, value gjson.Result) bool {
		err = d.field(key.Str, value)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if d.req.Model == "" {
		return nil, anthBadParam("model", "model: field required")
	}
	if !d.sawMessages {
		return nil, anthBadParam("messages", "messages: field required")
	}
	return d.req, nil
}

// anthRefDecoder holds the state of one anthRefDecodeRequest call.
type anthRefDecoder struct {
	req         *Request
	sawMessages bool
	depth       int // nesting of block arrays being decoded
}

// field decodes one top-level member. JSON null means "not given" for every
// field, as in the SDKs.
func (d *anthRefDecoder) field(key string, v gjson.Result) *Error {
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
		if !v.IsArray() {
			return anthInvalidType("messages", wantArray)
		}
		d.sawMessages = true
		if !v.Get("0").Exists() {
			return anthBadParam("messages", "messages: at least one message is required")
		}
		return d.messages(v)
	case "system":
		return d.system(v)
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
	case "tools":
		return d.tools(v)
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
		req.Drop(key, "unknown field")
	}
	return nil
}

// system decodes the top-level system prompt: a string or text blocks.
func (d *anthRefDecoder) system(v gjson.Result) *Error {
	switch {
	case v.Type == gjson.String:
		if v.Str != "" {
			d.req.System = append(d.req.System, Part{Type: PartText, Text: v.Str})
		}
	case v.IsArray():
		parts, err := d.blocks(anthPath{}.key("system"), v, anthInMessage)
		if err != nil {
			return err
		}
		d.req.System = d.textOnly(parts, "system")
	default:
		return anthInvalidType("system", wantStringOrArray)
	}
	return nil
}

// textOnly keeps the text parts of a system prompt.
func (d *anthRefDecoder) textOnly(parts []Part, field string) []Part {
	out := parts[:0]
	for _, p := range parts {
		if p.Type == PartText {
			out = append(out, p)
		} else {
			d.req.Drop(field, string(p.Type)+" content in a system prompt is not translated")
		}
	}
	return out
}

func (d *anthRefDecoder) messages(v gjson.Result) *Error {
	var err *Error
	i := 0
	v.ForEach(func(_, m gjson.Result) bool {
		err = d.message(i, m)
		i++
		return err == nil
	})
	return err
}

func (d *anthRefDecoder) message(i int, m gjson.Result) *Error {
	path := anthPath{}.key("messages").index(i)
	if !m.IsObject() {
		return path.bad("must be an object")
	}
	var role, content gjson.Result
	m.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			role = v
		case "content":
			content = v
		}
		return true
	})
	msg := Message{}
	switch role.Str {
	case "user":
		msg.Role = RoleUser
	case "assistant":
		msg.Role = RoleAssistant
	case "system":
		// A beta mid-conversation system message (Claude Code sends it,
		// sometimes last).
		msg.Role = RoleSystem
	default:
		return unknownRoleRef(path, role.Str)
	}
	switch {
	case content.Type == gjson.String:
		msg.Parts = []Part{{Type: PartText, Text: content.Str}}
	case content.IsArray():
		parts, err := d.blocks(path.key("content"), content, anthInMessage)
		if err != nil {
			return err
		}
		msg.Parts = parts
	default:
		cpath := path.key("content")
		return cpath.bad("must be a string or an array of content blocks")
	}
	if msg.Role == RoleSystem {
		msg.Parts = d.textOnly(msg.Parts, "messages.content")
	}
	d.req.Messages = append(d.req.Messages, msg)
	return nil
}

// blocks decodes an array of content blocks.
func (d *anthRefDecoder) blocks(path anthPath, arr gjson.Result, where anthBlockContext) ([]Part, *Error) {
	// Tool results and content documents nest block arrays; a hostile
	// body nesting them a million deep must not exhaust the stack.
	if d.depth >= anthMaxBlockDepth {
		return nil, path.bad("content blocks nested too deeply")
	}
	d.depth++
	defer func() { d.depth-- }()
	var parts []Part
	var err *Error
	i := 0
	arr.ForEach(func(_, b gjson.Result) bool {
		bpath := path.index(i)
		i++
		if !b.IsObject() {
			err = bpath.bad("content block must be an object")
			return false
		}
		if where == anthInMessage && anthIsServerToolBlock(b.Get("type").Str) {
			if p, ok := anthServerToolPart(b); ok {
				parts = append(parts, p)
			} else {
				d.req.Drop("messages.content", "block type server_tool_use is not translated")
			}
			return true
		}
		parts, err = d.block(parts, &bpath, anthCollectBlock(b), where)
		return err == nil
	})
	return parts, err
}

// block appends the parts one content block decodes to.
func (d *anthRefDecoder) block(parts []Part, path *anthPath, f anthBlockFields, where anthBlockContext) ([]Part, *Error) {
	req := d.req
	typ := f.typ.String()
	if where == anthInToolResult {
		switch typ {
		case "text", "image", "document":
		default:
			req.Drop("messages.content.tool_result.content", "block type "+typ+" is not translated")
			return parts, nil
		}
	}
	switch typ {
	case "text":
		if f.citations.IsArray() && f.citations.Get("#").Int() > 0 {
			req.Drop("messages.content.citations", "citations are not translated")
		}
		return append(parts, Part{Type: PartText, Text: f.text.String(), CacheControl: anthRaw(f.cacheControl)}), nil

	case "image":
		m := d.media("image", f.source)
		if m == nil {
			return parts, nil
		}
		return append(parts, Part{Type: PartImage, Media: m, CacheControl: anthRaw(f.cacheControl)}), nil

	case "document":
		return d.document(parts, path, f)

	case "tool_use":
		if f.id.Type != gjson.String || f.id.Str == "" {
			p := path.key("id")
			return parts, p.bad("tool_use requires an id")
		}
		if f.name.Type != gjson.String || f.name.Str == "" {
			p := path.key("name")
			return parts, p.bad("tool_use requires a name")
		}
		args := "{}"
		if f.input.Exists() && f.input.Type != gjson.Null {
			// The raw text, untouched: Arguments is JSON text.
			args = f.input.Raw
		}
		return append(parts, Part{
			Type:         PartToolCall,
			ToolCall:     &ToolCall{ID: f.id.Str, Name: f.name.Str, Arguments: args},
			CacheControl: anthRaw(f.cacheControl),
		}), nil

	case "tool_result":
		if f.toolUseID.Type != gjson.String || f.toolUseID.Str == "" {
			p := path.key("tool_use_id")
			return parts, p.bad("tool_result requires a tool_use_id")
		}
		tr := &ToolResult{CallID: f.toolUseID.Str, IsError: f.isError.Type == gjson.True}
		switch {
		case f.content.Type == gjson.String:
			if f.content.Str != "" {
				tr.Content = []Part{{Type: PartText, Text: f.content.Str}}
			}
		case f.content.IsArray():
			content, err := d.blocks(path.key("content"), f.content, anthInToolResult)
			if err != nil {
				return parts, err
			}
			tr.Content = content
		}
		return append(parts, Part{Type: PartToolResult, ToolResult: tr, CacheControl: anthRaw(f.cacheControl)}), nil

	case "thinking":
		return append(parts, Part{Type: PartThinking, Text: f.thinking.String(), Signature: f.signature.String()}), nil

	case "redacted_thinking":
		return append(parts, Part{Type: PartRedactedThinking, Signature: f.data.String()}), nil

	case "compaction":
		if where == anthInMessage && f.content.Type == gjson.String {
			d.contextManagement().Compaction = &CompactionPoint{Message: len(req.Messages), Summary: f.content.Str}
		}
		return parts, nil
	}
	// server_tool_use, web_search_tool_result, container_upload, ... and
	// block types newer than this codec.
	if typ == "" {
		typ = "(none)"
	}
	req.Drop("messages.content", "block type "+typ+" is not translated")
	return parts, nil
}

// document decodes a document block: a PDF (base64 or URL), a plain text
// document, or a "content" document whose blocks are flattened into text
// and image parts.
func (d *anthRefDecoder) document(parts []Part, path *anthPath, f anthBlockFields) ([]Part, *Error) {
	req := d.req
	if f.context.Exists() && f.context.Type != gjson.Null {
		req.Drop("messages.content.document.context", "not translated")
	}
	if f.citations.IsObject() && f.citations.Get("enabled").Bool() {
		req.Drop("messages.content.document.citations", "citations are not translated")
	}
	if f.source.Get("type").Str == "content" {
		content := f.source.Get("content")
		req.Drop("messages.content.document.source", "a content document is flattened into its text and image blocks")
		if content.Type == gjson.String {
			return append(parts, Part{Type: PartText, Text: content.Str}), nil
		}
		inner, err := d.blocks(path.key("source").key("content"), content, anthInToolResult)
		if err != nil {
			return parts, err
		}
		return append(parts, inner...), nil
	}
	m := d.media("document", f.source)
	if m == nil {
		return parts, nil
	}
	m.Title = f.title.String()
	return append(parts, Part{Type: PartDocument, Media: m, CacheControl: anthRaw(f.cacheControl)}), nil
}

// media decodes an image or document source. It returns nil, with a Drop
// note, for sources the IR cannot carry.
func (d *anthRefDecoder) media(kind string, src gjson.Result) *Media {
	var typ, mediaType, data, url, fileID gjson.Result
	src.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "media_type":
			mediaType = v
		case "data":
			data = v
		case "url":
			url = v
		case "file_id":
			fileID = v
		}
		return true
	})
	switch typ.Str {
	case "base64":
		return &Media{MediaType: mediaType.String(), Data: data.String()}
	case "url":
		m := &Media{URL: url.String()}
		if kind == "document" {
			m.MediaType = "application/pdf" // URL documents are PDFs
		}
		return m
	case "file":
		return &Media{FileID: fileID.String()}
	case "text":
		if kind == "document" {
			// Media.Data is base64 in the IR whatever the media type, so
			// every codec handles documents alike.
			mt := mediaType.String()
			if mt == "" {
				mt = "text/plain"
			}
			return &Media{MediaType: mt, Data: base64.StdEncoding.EncodeToString([]byte(data.String()))}
		}
	}
	d.req.Drop("messages.content."+kind+".source", "source type "+typ.String()+" is not translated")
	return nil
}

// tools decodes the tool list. Client tools ("custom" or no type) are kept;
// Anthropic server tools (web_search_…, bash_…, text_editor_…, …) run on
// Anthropic's side and cannot be offered to another backend.
func (d *anthRefDecoder) tools(v gjson.Result) *Error {
	if !v.IsArray() {
		return anthInvalidType("tools", wantArray)
	}
	var err *Error
	i := 0
	v.ForEach(func(_, t gjson.Result) bool {
		err = d.tool(i, t)
		i++
		return err == nil
	})
	return err
}

func (d *anthRefDecoder) tool(i int, t gjson.Result) *Error {
	req := d.req
	path := anthPath{}.key("tools").index(i)
	if !t.IsObject() {
		return path.bad("must be an object")
	}
	var tool Tool
	var typ, name gjson.Result
	var extra []string
	t.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "name":
			name = v
		case "description":
			tool.Description = v.String()
		case "input_schema":
			tool.Schema = anthRaw(v)
		case "strict":
			if v.IsBool() {
				b := v.Bool()
				tool.Strict = &b
			}
		case "cache_control":
			tool.CacheControl = anthRaw(v)
		default: // defer_loading, eager_input_streaming, input_examples, ...
			if v.Type != gjson.Null {
				extra = append(extra, k.Str)
			}
		}
		return true
	})
	if typ.Str != "" && typ.Str != "custom" {
		if st, ok := anthServerTool(typ.Str, t); ok {
			st.Param = "tools." + strconv.Itoa(i)
			req.ServerTools = append(req.ServerTools, st)
			anthDropServerToolExtras(req, t)
			return nil
		}
		req.Drop("tools", "server tool "+typ.Str+" is not translated")
		return nil
	}
	if name.Type != gjson.String || name.Str == "" {
		p := path.key("name")
		return p.bad("tool requires a name")
	}
	tool.Name = name.Str
	for _, k := range extra {
		switch k {
		case "defer_loading":
			req.Drop("tools.defer_loading", "tool search is Anthropic-only; the tool is sent up front")
		case "eager_input_streaming":
			req.Drop("tools.eager_input_streaming", "Anthropic-only streaming option")
		case "input_examples":
			req.Drop("tools.input_examples", "not translated")
		default:
			req.Drop("tools."+k, "unknown field")
		}
	}
	req.Tools = append(req.Tools, tool)
	return nil
}

func (d *anthRefDecoder) contextManagement() *ContextManagement {
	if d.req.ContextManagement == nil {
		d.req.ContextManagement = &ContextManagement{}
	}
	return d.req.ContextManagement
}

func (d *anthRefDecoder) toolChoice(v gjson.Result) {
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
func (d *anthRefDecoder) reasoning() *Reasoning {
	if d.req.Reasoning == nil {
		d.req.Reasoning = &Reasoning{}
	}
	return d.req.Reasoning
}

func (d *anthRefDecoder) thinking(v gjson.Result) {
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

func (d *anthRefDecoder) outputConfig(v gjson.Result) {
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
			req.Drop("output_config."+k.Str, "unknown field")
		}
		return true
	})
}

// unknownRoleRef is the reference decoder's error for a role it does not
// know, or none.
func unknownRoleRef(path anthPath, role string) *Error {
	at := path.key("role")
	if role == "" {
		return at.bad("a role is required: user or assistant")
	}
	return at.bad(fmt.Sprintf("unknown role %q: user or assistant", role))
}

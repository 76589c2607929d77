package translate

import (
	"bytes"
	"encoding/base64"
	"strings"

	"github.com/tidwall/gjson"
)

// Defaults and limits of the Anthropic request encoder.
const (
	// anthDefaultMaxTokens is sent when the client gave no limit: Anthropic
	// requires max_tokens, OpenAI does not.
	anthDefaultMaxTokens = 4096
	// anthMinThinkingBudget is Anthropic's smallest budget_tokens.
	anthMinThinkingBudget = 1024
)

// anthEffortBudgets turns an effort level (OpenAI reasoning_effort, Gemini
// thinkingLevel) into an Anthropic thinking budget.
var anthEffortBudgets = map[string]int{
	"minimal": anthMinThinkingBudget,
	"low":     2048,
	"medium":  8192,
	"high":    24576,
	"xhigh":   24576,
	"max":     24576,
}

// anthEfforts are the values output_config.effort accepts.
var anthEfforts = map[string]bool{"low": true, "medium": true, "high": true, "xhigh": true, "max": true}

// EncodeRequest implements Codec. The IR came from another protocol, so the
// encoder repairs what Anthropic would reject: it merges consecutive turns
// of one role, puts tool results first in their user turn, moves system
// messages into system, keeps only signed thinking, wraps arguments that are
// not a JSON object, and fits the thinking budget under max_tokens.
func (anthropicCodec) EncodeRequest(req *Request) ([]byte, error) {
	e := anthRequestEncoder{req: req}
	return e.encode(), nil
}

// anthTurn is one Anthropic message: consecutive IR messages of one role,
// with the parts Anthropic can take.
type anthTurn struct {
	role  Role
	parts []*Part
}

// anthRequestEncoder holds the state of one EncodeRequest call.
type anthRequestEncoder struct {
	req    *Request
	system []*Part
	turns  []anthTurn
}

func (e *anthRequestEncoder) encode() []byte {
	req := e.req
	e.collect()

	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = anthDefaultMaxTokens
	}
	thinking, effort := e.thinking(&maxTokens)
	thinkingOn := thinking != nil && !bytes.Equal(thinking, anthThinkingDisabled)

	b := make([]byte, 0, e.sizeHint())
	b = append(b, `{"model":`...)
	b = appendJSONString(b, req.Model)
	b = append(b, `,"max_tokens":`...)
	b = appendJSONInt(b, int64(maxTokens))

	if len(e.system) > 0 {
		b = append(b, `,"system":[`...)
		for i, p := range e.system {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendText(b, p.Text, p.CacheControl)
		}
		b = append(b, ']')
	}

	b = append(b, `,"messages":[`...)
	for i := range e.turns {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendTurn(b, &e.turns[i])
	}
	b = append(b, ']')

	b = e.appendTools(b)

	if thinking != nil {
		b = append(b, `,"thinking":`...)
		b = append(b, thinking...)
	}
	b = e.appendOutputConfig(b, effort)

	if req.User != "" {
		b = append(b, `,"metadata":{"user_id":`...)
		b = appendJSONString(b, req.User)
		b = append(b, '}')
	}
	b = e.appendStopSequences(b)
	b = e.appendSampling(b, thinkingOn)
	if req.Seed != nil {
		req.Drop("seed", "Anthropic has no seed")
	}
	if req.PresencePenalty != nil {
		req.Drop("presence_penalty", "Anthropic has no presence penalty")
	}
	if req.FrequencyPenalty != nil {
		req.Drop("frequency_penalty", "Anthropic has no frequency penalty")
	}
	if req.Stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}')
}

// sizeHint estimates the body size so that large conversations are built
// without repeated growth.
func (e *anthRequestEncoder) sizeHint() int {
	n := 1024
	add := func(p *Part) {
		n += len(p.Text) + len(p.Signature) + 64
		if p.Media != nil {
			n += len(p.Media.Data) + len(p.Media.URL)
		}
		if p.ToolCall != nil {
			n += len(p.ToolCall.Arguments) + len(p.ToolCall.ID) + len(p.ToolCall.Name)
		}
		if p.ToolResult != nil {
			for i := range p.ToolResult.Content {
				n += len(p.ToolResult.Content[i].Text) + 32
			}
		}
	}
	for _, p := range e.system {
		add(p)
	}
	for i := range e.turns {
		for _, p := range e.turns[i].parts {
			add(p)
		}
	}
	for i := range e.req.Tools {
		n += len(e.req.Tools[i].Schema) + len(e.req.Tools[i].Description) + 64
	}
	return n
}

// collect sorts the conversation into the system prompt and alternating
// turns, leaving out (with a Drop note) what Anthropic cannot take.
func (e *anthRequestEncoder) collect() {
	req := e.req
	for i := range req.System {
		p := &req.System[i]
		if p.Type == PartText {
			if p.Text != "" {
				e.system = append(e.system, p)
			}
		} else {
			req.Drop("system", string(p.Type)+" content in a system prompt is not supported by Anthropic")
		}
	}
	for mi := range req.Messages {
		m := &req.Messages[mi]
		if m.Role == RoleSystem {
			// Anthropic takes no system role in messages: the text joins
			// the system prompt. Nothing is lost but its position.
			for i := range m.Parts {
				p := &m.Parts[i]
				if p.Type == PartText {
					if p.Text != "" {
						e.system = append(e.system, p)
					}
				} else {
					req.Drop("system", string(p.Type)+" content in a system message is not supported by Anthropic")
				}
			}
			continue
		}
		role := RoleUser
		if m.Role == RoleAssistant {
			role = RoleAssistant
		}
		for i := range m.Parts {
			p := &m.Parts[i]
			if !e.keep(p) {
				continue
			}
			// Anthropic requires alternating roles: consecutive messages
			// of one role become one turn.
			if n := len(e.turns); n == 0 || e.turns[n-1].role != role {
				e.turns = append(e.turns, anthTurn{role: role})
			}
			t := &e.turns[len(e.turns)-1]
			t.parts = append(t.parts, p)
		}
	}
}

// keep reports whether a message part can be sent, recording why not.
func (e *anthRequestEncoder) keep(p *Part) bool {
	switch p.Type {
	case PartText:
		return p.Text != "" // Anthropic rejects empty text blocks; nothing is lost
	case PartImage, PartDocument:
		return e.mediaOK(p)
	case PartToolCall:
		return p.ToolCall != nil
	case PartToolResult:
		return p.ToolResult != nil
	case PartThinking:
		if p.Signature == "" {
			e.req.Drop("thinking", "thinking without a signature cannot be sent to Anthropic")
			return false
		}
		return true
	case PartRedactedThinking:
		return p.Signature != ""
	}
	e.req.Drop("messages.content", "part type "+string(p.Type)+" is not supported by Anthropic")
	return false
}

// mediaOK reports whether an image or document can be expressed as an
// Anthropic source, recording why not.
func (e *anthRequestEncoder) mediaOK(p *Part) bool {
	m := p.Media
	switch {
	case m == nil:
		return false
	case m.Data != "":
		if p.Type == PartImage || anthIsPDF(m) {
			return true
		}
		if strings.HasPrefix(m.MediaType, "text/") {
			if _, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
				return true
			}
			e.req.Drop("document", "text document data is not valid base64")
			return false
		}
		e.req.Drop("document", "media type "+m.MediaType+" is not supported by Anthropic documents")
		return false
	case m.URL != "":
		if strings.HasPrefix(m.URL, "data:") {
			if _, _, ok := anthSplitDataURL(m.URL); ok {
				return true
			}
			e.req.Drop(string(p.Type), "malformed data URL")
			return false
		}
		return true
	case m.FileID != "":
		e.req.Drop(string(p.Type), "provider file ids do not carry across providers")
		return false
	}
	return false
}

// anthIsPDF reports whether inline document data is a PDF.
func anthIsPDF(m *Media) bool {
	return m.MediaType == "application/pdf" || (m.MediaType == "" && strings.HasPrefix(m.Data, "JVBER"))
}

// anthSplitDataURL splits data:<media type>;base64,<data>.
func anthSplitDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mediaType, isB64 := strings.CutSuffix(meta, ";base64")
	if !isB64 {
		return "", "", false
	}
	return mediaType, data, true
}

// anthSniffImageType guesses an image media type from its base64 data, for
// clients that sent none: Anthropic requires media_type.
func anthSniffImageType(data string) string {
	switch {
	case strings.HasPrefix(data, "iVBORw0KGgo"):
		return "image/png"
	case strings.HasPrefix(data, "/9j/"):
		return "image/jpeg"
	case strings.HasPrefix(data, "R0lGOD"):
		return "image/gif"
	case strings.HasPrefix(data, "UklGR"):
		return "image/webp"
	}
	return "image/png"
}

func (e *anthRequestEncoder) appendText(b []byte, text string, cc []byte) []byte {
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONString(b, text)
	return anthAppendCacheControl(b, cc)
}

// anthAppendCacheControl appends ,"cache_control":… and the closing brace
// of a block.
func anthAppendCacheControl(b []byte, cc []byte) []byte {
	if len(cc) > 0 {
		b = append(b, `,"cache_control":`...)
		b = append(b, cc...)
	}
	return append(b, '}')
}

func (e *anthRequestEncoder) appendTurn(b []byte, t *anthTurn) []byte {
	if t.role == RoleAssistant {
		b = append(b, `{"role":"assistant","content":[`...)
	} else {
		b = append(b, `{"role":"user","content":[`...)
	}
	start := len(b)
	if t.role == RoleUser {
		// Anthropic wants the tool results first in their user turn, and
		// any other content after them.
		for _, p := range t.parts {
			if p.Type == PartToolResult {
				if len(b) > start {
					b = append(b, ',')
				}
				b = e.appendToolResult(b, p)
			}
		}
	}
	for _, p := range t.parts {
		if t.role == RoleUser && p.Type == PartToolResult {
			continue
		}
		if len(b) > start {
			b = append(b, ',')
		}
		b = e.appendPart(b, p)
	}
	return append(b, "]}"...)
}

// appendPart appends one content block; keep has accepted p.
func (e *anthRequestEncoder) appendPart(b []byte, p *Part) []byte {
	switch p.Type {
	case PartText:
		return e.appendText(b, p.Text, p.CacheControl)
	case PartImage, PartDocument:
		return e.appendMedia(b, p)
	case PartToolCall:
		tc := p.ToolCall
		id := tc.ID
		if id == "" {
			id = newID("toolu_")
		}
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, tc.Name)
		b = append(b, `,"input":`...)
		b = anthAppendToolInput(b, tc.Arguments, e.req)
		return anthAppendCacheControl(b, p.CacheControl)
	case PartToolResult:
		return e.appendToolResult(b, p)
	case PartThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendJSONString(b, p.Text)
		b = append(b, `,"signature":`...)
		b = appendJSONString(b, p.Signature)
		return append(b, '}')
	case PartRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendJSONString(b, p.Signature)
		return append(b, '}')
	}
	return b
}

// anthAppendToolInput appends a tool call's arguments as the JSON object
// Anthropic's input must be. Arguments that are not an object (a model
// produced broken JSON, or a bare value) are wrapped as {"_raw":"…"} rather
// than lost; req, when not nil, records it.
func anthAppendToolInput(b []byte, args string, req *Request) []byte {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return append(b, "{}"...)
	}
	if trimmed[0] == '{' && gjson.Valid(trimmed) {
		return append(b, trimmed...)
	}
	if req != nil {
		req.Drop("tool_use.input", `arguments were not a JSON object; sent as {"_raw": "<text>"}`)
	}
	b = append(b, `{"_raw":`...)
	b = appendJSONString(b, args)
	return append(b, '}')
}

func (e *anthRequestEncoder) appendToolResult(b []byte, p *Part) []byte {
	tr := p.ToolResult
	b = append(b, `{"type":"tool_result","tool_use_id":`...)
	b = appendJSONString(b, tr.CallID)
	n := 0
	for i := range tr.Content {
		c := &tr.Content[i]
		switch c.Type {
		case PartText:
			if c.Text == "" {
				continue
			}
		case PartImage, PartDocument:
			if !e.mediaOK(c) {
				continue
			}
		default:
			e.req.Drop("tool_result.content", string(c.Type)+" content in a tool result is not supported by Anthropic")
			continue
		}
		if n == 0 {
			b = append(b, `,"content":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = e.appendPart(b, c)
	}
	if n > 0 {
		b = append(b, ']')
	}
	if tr.IsError {
		b = append(b, `,"is_error":true`...)
	}
	return anthAppendCacheControl(b, p.CacheControl)
}

// appendMedia appends an image or document block; mediaOK has accepted p.
func (e *anthRequestEncoder) appendMedia(b []byte, p *Part) []byte {
	m := p.Media
	if p.Type == PartImage {
		b = append(b, `{"type":"image","source":`...)
	} else {
		b = append(b, `{"type":"document","source":`...)
	}
	data, mediaType := m.Data, m.MediaType
	if data == "" && strings.HasPrefix(m.URL, "data:") {
		mediaType, data, _ = anthSplitDataURL(m.URL)
	}
	switch {
	case data != "" && p.Type == PartImage:
		if mediaType == "" {
			mediaType = anthSniffImageType(data)
		}
		b = append(b, `{"type":"base64","media_type":`...)
		b = appendJSONString(b, mediaType)
		b = append(b, `,"data":`...)
		b = appendJSONString(b, data)
		b = append(b, '}')
	case data != "" && strings.HasPrefix(mediaType, "text/"):
		text, _ := base64.StdEncoding.DecodeString(data)
		b = append(b, `{"type":"text","media_type":"text/plain","data":`...)
		b = appendJSONString(b, string(text))
		b = append(b, '}')
	case data != "":
		b = append(b, `{"type":"base64","media_type":"application/pdf","data":`...)
		b = appendJSONString(b, data)
		b = append(b, '}')
	default:
		b = append(b, `{"type":"url","url":`...)
		b = appendJSONString(b, m.URL)
		b = append(b, '}')
	}
	if p.Type == PartDocument {
		title := m.Title
		if title == "" {
			title = m.Filename
		}
		if title != "" {
			b = append(b, `,"title":`...)
			b = appendJSONString(b, title)
		}
	}
	return anthAppendCacheControl(b, p.CacheControl)
}

// appendTools appends tools and tool_choice.
func (e *anthRequestEncoder) appendTools(b []byte) []byte {
	req := e.req
	tc := req.ToolChoice
	var allowed map[string]bool
	if tc != nil && len(tc.Allowed) > 0 && tc.Mode != ToolChoiceTool {
		// Anthropic cannot restrict which tools may be called; offering
		// only the allowed ones comes closest.
		allowed = make(map[string]bool, len(tc.Allowed))
		for _, name := range tc.Allowed {
			allowed[name] = true
		}
		req.Drop("tool_choice.allowed_tools", "approximated by sending only the allowed tools")
	}
	n := 0
	for i := range req.Tools {
		t := &req.Tools[i]
		if allowed != nil && !allowed[t.Name] {
			continue
		}
		if n == 0 {
			b = append(b, `,"tools":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"name":`...)
		b = appendJSONString(b, t.Name)
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendJSONString(b, t.Description)
		}
		b = append(b, `,"input_schema":`...)
		if len(bytes.TrimSpace(t.Schema)) == 0 || bytes.Equal(t.Schema, []byte("null")) {
			b = append(b, `{"type":"object","properties":{}}`...)
		} else {
			b = append(b, t.Schema...) // untouched
		}
		if t.Strict != nil {
			b = append(b, `,"strict":`...)
			b = appendJSONBool(b, *t.Strict)
		}
		b = anthAppendCacheControl(b, t.CacheControl)
	}
	if n > 0 {
		b = append(b, ']')
	}

	noParallel := req.ParallelToolCalls != nil && !*req.ParallelToolCalls
	if n == 0 {
		// Anthropic rejects a tool_choice without tools; without tools
		// there is nothing it could say anyway.
		return b
	}
	mode := ToolChoiceAuto
	name := ""
	if tc != nil {
		mode, name = tc.Mode, tc.Name
	} else if !noParallel {
		return b
	}
	switch mode {
	case ToolChoiceRequired:
		b = append(b, `,"tool_choice":{"type":"any"`...)
	case ToolChoiceTool:
		if name == "" {
			b = append(b, `,"tool_choice":{"type":"any"`...)
			break
		}
		b = append(b, `,"tool_choice":{"type":"tool","name":`...)
		b = appendJSONString(b, name)
	case ToolChoiceNone:
		// tool_choice none takes no disable_parallel_tool_use: no tool
		// is called at all.
		return append(b, `,"tool_choice":{"type":"none"}`...)
	default:
		b = append(b, `,"tool_choice":{"type":"auto"`...)
	}
	if noParallel {
		b = append(b, `,"disable_parallel_tool_use":true`...)
	}
	return append(b, '}')
}

var anthThinkingDisabled = []byte(`{"type":"disabled"}`)

// thinking returns the thinking object to send (nil for none) and the
// output_config effort, adjusting *maxTokens so that the budget fits.
func (e *anthRequestEncoder) thinking(maxTokens *int) (thinking []byte, effort string) {
	req := e.req
	r := req.Reasoning
	if r == nil {
		return nil, ""
	}
	mode, budget := r.Mode, r.BudgetTokens
	switch mode {
	case ReasoningDisabled:
		return anthThinkingDisabled, ""
	case ReasoningDefault:
		switch {
		case r.Effort == "":
			return nil, ""
		case r.Effort == "none":
			return anthThinkingDisabled, ""
		case anthEffortBudgets[r.Effort] > 0:
			// An effort without Anthropic's adaptive mode becomes a
			// budget: every thinking model accepts one.
			mode, budget = ReasoningEnabled, anthEffortBudgets[r.Effort]
		default:
			req.Drop("reasoning_effort", "unknown effort "+r.Effort)
			return nil, ""
		}
	case ReasoningEnabled:
		if budget <= 0 {
			budget = anthEffortBudgets[r.Effort]
			if budget == 0 {
				budget = anthEffortBudgets["medium"]
			}
		}
	case ReasoningAdaptive:
		if anthEfforts[r.Effort] {
			effort = r.Effort
		} else if r.Effort != "" {
			req.Drop("output_config.effort", "unknown effort "+r.Effort)
		}
	}

	if tc := req.ToolChoice; tc != nil && (tc.Mode == ToolChoiceRequired || tc.Mode == ToolChoiceTool) {
		req.Drop("thinking", "Anthropic does not allow thinking with a forced tool choice")
		return anthThinkingDisabled, ""
	}
	if e.unsignedToolTurn() {
		req.Drop("thinking", "history has tool calls without signed thinking blocks")
		return anthThinkingDisabled, ""
	}

	var b []byte
	if mode == ReasoningAdaptive {
		b = append(b, `{"type":"adaptive"`...)
	} else {
		// Anthropic requires 1024 <= budget_tokens < max_tokens. The
		// client's max_tokens bounds the whole answer, so the budget is
		// clamped under it rather than the limit raised; only when
		// max_tokens cannot hold even the minimum budget is it raised,
		// by that budget, keeping the room the client asked for.
		budget = max(budget, anthMinThinkingBudget)
		switch {
		case req.MaxTokens <= 0:
			// No limit given: room for the budget plus the default answer.
			*maxTokens = budget + anthDefaultMaxTokens
		case budget >= *maxTokens && *maxTokens > anthMinThinkingBudget:
			budget = *maxTokens - 1
		case budget >= *maxTokens:
			budget = anthMinThinkingBudget
			*maxTokens += budget
			req.Drop("max_tokens", "raised to make room for the minimum thinking budget")
		}
		b = append(b, `{"type":"enabled","budget_tokens":`...)
		b = appendJSONInt(b, int64(budget))
	}
	switch r.Display {
	case "":
	case "summarized", "omitted":
		b = append(b, `,"display":`...)
		b = appendJSONString(b, r.Display)
	default:
		req.Drop("thinking.display", "Anthropic knows only summarized and omitted")
	}
	return append(b, '}'), effort
}

// unsignedToolTurn reports whether the tool-use cycle in progress has an
// assistant turn that calls tools but does not start with a signed thinking
// block. With thinking on, Anthropic rejects such a history ("expected
// thinking or redacted_thinking"). The cycle in progress is everything after
// the last user turn that is more than tool results: thinking from turns
// that ended with a plain answer is not required.
func (e *anthRequestEncoder) unsignedToolTurn() bool {
	from := 0
	for i := len(e.turns) - 1; i >= 0; i-- {
		t := &e.turns[i]
		if t.role == RoleUser && !anthOnlyToolResults(t) {
			from = i + 1
			break
		}
	}
	for i := from; i < len(e.turns); i++ {
		t := &e.turns[i]
		if t.role != RoleAssistant {
			continue
		}
		hasCall := false
		for _, p := range t.parts {
			if p.Type == PartToolCall {
				hasCall = true
				break
			}
		}
		if !hasCall {
			continue
		}
		first := t.parts[0].Type
		if first != PartThinking && first != PartRedactedThinking {
			return true
		}
	}
	return false
}

func anthOnlyToolResults(t *anthTurn) bool {
	for _, p := range t.parts {
		if p.Type != PartToolResult {
			return false
		}
	}
	return true
}

// appendOutputConfig appends output_config: the effort of adaptive
// thinking and a JSON schema for structured output.
func (e *anthRequestEncoder) appendOutputConfig(b []byte, effort string) []byte {
	req := e.req
	var schema []byte
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if len(rf.Schema) > 0 {
				schema = rf.Schema
			} else {
				req.Drop("response_format", "json_schema without a schema")
			}
		case "json_object":
			req.Drop("response_format", "Anthropic has no JSON mode without a schema")
		}
	}
	if effort == "" && schema == nil {
		return b
	}
	b = append(b, `,"output_config":{`...)
	if effort != "" {
		b = append(b, `"effort":`...)
		b = appendJSONString(b, effort)
	}
	if schema != nil {
		b = appendJSONComma(b)
		b = append(b, `"format":{"type":"json_schema","schema":`...)
		b = append(b, schema...)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (e *anthRequestEncoder) appendStopSequences(b []byte) []byte {
	n := 0
	for _, s := range e.req.StopSequences {
		if strings.TrimSpace(s) == "" {
			e.req.Drop("stop_sequences", "Anthropic rejects whitespace-only stop sequences")
			continue
		}
		if n == 0 {
			b = append(b, `,"stop_sequences":[`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, s)
	}
	if n > 0 {
		b = append(b, ']')
	}
	return b
}

// appendSampling appends temperature, top_p and top_k. With thinking on,
// Anthropic accepts only the default temperature, no top_k and a top_p of
// at least 0.95.
func (e *anthRequestEncoder) appendSampling(b []byte, thinkingOn bool) []byte {
	req := e.req
	if t := req.Temperature; t != nil {
		v := *t
		switch {
		case thinkingOn && v != 1:
			req.Drop("temperature", "Anthropic requires the default temperature with thinking")
		case v > 1:
			req.Drop("temperature", "clamped to Anthropic's maximum of 1")
			v = 1
			fallthrough
		default:
			b = append(b, `,"temperature":`...)
			b = appendJSONFloat(b, v)
		}
	}
	if p := req.TopP; p != nil {
		if thinkingOn && *p < 0.95 {
			req.Drop("top_p", "Anthropic requires top_p >= 0.95 with thinking")
		} else {
			b = append(b, `,"top_p":`...)
			b = appendJSONFloat(b, *p)
		}
	}
	if k := req.TopK; k != nil {
		if thinkingOn {
			req.Drop("top_k", "Anthropic does not allow top_k with thinking")
		} else {
			b = append(b, `,"top_k":`...)
			b = appendJSONInt(b, int64(*k))
		}
	}
	return b
}

package translate

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// ProtocolBedrockConverse is AWS Bedrock's Converse API (Converse and
// ConverseStream), the model-neutral chat API Bedrock serves every model
// family through (Llama, Mistral, Nova, gpt-oss, DeepSeek, Claude). It is
// a backend protocol only: no client speaks it through louter.
const ProtocolBedrockConverse Protocol = "bedrock_converse"

// bedrockConverseCodec translates the IR to Converse requests and
// Converse's answers back. Converse differs from Anthropic's Messages, the
// closest of louter's protocols, in three ways, bridged so:
//
//   - Its JSON is camelCase and its content blocks are unions keyed by
//     kind ({"text":...}, {"toolUse":{...}}, {"image":{"format","source":
//     {"bytes"}}}, {"reasoningContent":{"reasoningText":{"text",
//     "signature"}}}), with the sampling settings in inferenceConfig and
//     the tools in toolConfig; thinking, which Converse has no field for,
//     goes in additionalModelRequestFields as Claude's "thinking" (other
//     model families ignore or refuse it, as Bedrock decides).
//   - The model and the stream mode are in the URL (/model/{id}/converse or
//     converse-stream), so the body names neither.
//   - A stream is AWS event-stream framed (re-framed as SSE by
//     caddymodule), one event per message named by its type
//     (messageStart, contentBlockStart, contentBlockDelta,
//     contentBlockStop, messageStop, metadata). A text or reasoning block
//     starts with its first delta, without a contentBlockStart; the usage
//     comes in metadata, after messageStop, so the decoder holds the stop
//     until then. Exceptions arrive as in InvokeModel's streams.
//
// What Converse cannot carry is dropped and recorded (Request.Drop):
// images by URL or file id, documents other than base64, tool_choice
// "none" (the tools are left out instead), seeds and penalties, and
// cache_control on models Bedrock caches no prompts for (elsewhere it
// becomes a cachePoint: bedrock_converse_cache.go).
type bedrockConverseCodec struct{}

func init() { Register(bedrockConverseCodec{}) }

// Protocol implements Codec.
func (bedrockConverseCodec) Protocol() Protocol { return ProtocolBedrockConverse }

// errConverseClient is returned by the client-side methods: no client
// speaks Converse through louter.
var errConverseClient = errors.New("translate: bedrock_converse is a backend protocol only")

// DecodeRequest implements Codec: Converse is not a client protocol.
func (bedrockConverseCodec) DecodeRequest([]byte) (*Request, error) {
	return nil, &Error{Status: http.StatusBadRequest, Kind: ErrInvalidRequest, Message: errConverseClient.Error()}
}

// EncodeResponse implements Codec: Converse is not a client protocol.
func (bedrockConverseCodec) EncodeResponse(*Response, *Request) ([]byte, error) {
	return nil, errConverseClient
}

// NewStreamEncoder implements Codec: Converse is not a client protocol,
// and its encoder writes nothing.
func (bedrockConverseCodec) NewStreamEncoder(*Request) StreamEncoder { return nopStreamEncoder{} }

type nopStreamEncoder struct{}

func (nopStreamEncoder) Encode(FrameWriter, *Event) {}

// BackendOnly implements BackendOnlyCodec.
func (bedrockConverseCodec) BackendOnly() {}

// EncodeError implements Codec: Bedrock's {"message":...}.
func (bedrockConverseCodec) EncodeError(e *Error) []byte { return bedrockCodec{}.EncodeError(e) }

// DecodeError implements Codec: Bedrock's {"message":...}.
func (bedrockConverseCodec) DecodeError(status int, body []byte) *Error {
	return bedrockCodec{}.DecodeError(status, body)
}

// InputUsageEarly implements UsageTimingCodec; InputUsageAtStart: a
// Converse stream reports its usage at the end, in metadata.
func (bedrockConverseCodec) InputUsageEarly() bool   { return false }
func (bedrockConverseCodec) InputUsageAtStart() bool { return false }

// Converse's request, as JSON.
type (
	cvRequest struct {
		Messages                     []cvMessage       `json:"messages"`
		System                       []cvBlock         `json:"system,omitempty"`
		InferenceConfig              *cvInference      `json:"inferenceConfig,omitempty"`
		ToolConfig                   *cvToolConfig     `json:"toolConfig,omitempty"`
		AdditionalModelRequestFields map[string]any    `json:"additionalModelRequestFields,omitempty"`
		RequestMetadata              map[string]string `json:"requestMetadata,omitempty"`
	}
	cvMessage struct {
		Role    Role      `json:"role"`
		Content []cvBlock `json:"content"`
	}
	cvBlock struct {
		Text             *string         `json:"text,omitempty"`
		Image            *cvMedia        `json:"image,omitempty"`
		Document         *cvMedia        `json:"document,omitempty"`
		ToolUse          *cvToolUse      `json:"toolUse,omitempty"`
		ToolResult       *cvToolResult   `json:"toolResult,omitempty"`
		ReasoningContent *cvReasoning    `json:"reasoningContent,omitempty"`
		JSON             json.RawMessage `json:"json,omitempty"`
		CachePoint       *cvCachePoint   `json:"cachePoint,omitempty"`
	}
	cvMedia struct {
		Format string       `json:"format"`
		Name   string       `json:"name,omitempty"`
		Source cvMediaBytes `json:"source"`
	}
	cvMediaBytes struct {
		Bytes string `json:"bytes"`
	}
	cvToolUse struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	}
	cvToolResult struct {
		ToolUseID string    `json:"toolUseId"`
		Content   []cvBlock `json:"content"`
		Status    string    `json:"status,omitempty"`
	}
	cvReasoning struct {
		ReasoningText   *cvReasoningText `json:"reasoningText,omitempty"`
		RedactedContent string           `json:"redactedContent,omitempty"`
	}
	cvReasoningText struct {
		Text      string `json:"text"`
		Signature string `json:"signature,omitempty"`
	}
	cvInference struct {
		MaxTokens     int      `json:"maxTokens,omitempty"`
		Temperature   *float64 `json:"temperature,omitempty"`
		TopP          *float64 `json:"topP,omitempty"`
		StopSequences []string `json:"stopSequences,omitempty"`
	}
	cvToolConfig struct {
		Tools      []cvTool       `json:"tools"`
		ToolChoice map[string]any `json:"toolChoice,omitempty"`
	}
	// cvTool is a union: a tool, or the cache point after the tools
	// before it.
	cvTool struct {
		ToolSpec   *cvToolSpec   `json:"toolSpec,omitempty"`
		CachePoint *cvCachePoint `json:"cachePoint,omitempty"`
	}
	cvToolSpec struct {
		Name        string        `json:"name"`
		Description string        `json:"description,omitempty"`
		InputSchema cvInputSchema `json:"inputSchema"`
		Strict      *bool         `json:"strict,omitempty"`
	}
	cvInputSchema struct {
		JSON json.RawMessage `json:"json"`
	}
)

// EncodeRequest implements Codec.
func (bedrockConverseCodec) EncodeRequest(req *Request) ([]byte, error) {
	out := cvRequest{Messages: make([]cvMessage, 0, len(req.Messages))}
	cache := cvCachingFor(req.Model)
	for _, p := range req.System {
		if p.Type == PartText {
			out.System = cache.appendPoint(req, append(out.System, cvText(p.Text)), p.CacheControl)
		}
	}
	hasToolParts := false
	lead := leadingSystem(req.Messages)
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == RoleSystem {
			// Converse has one system prompt: a system message that
			// opens the conversation joins it, a later one is user
			// text at its position (system_messages.go).
			cm := cvMessage{Role: RoleUser}
			for _, p := range m.Parts {
				switch {
				case p.Type != PartText || p.Text == "":
				case i < lead:
					out.System = cache.appendPoint(req, append(out.System, cvText(p.Text)), p.CacheControl)
				default:
					cm.Content = cache.appendPoint(req, append(cm.Content, cvText(systemTurnText(p.Text))), p.CacheControl)
				}
			}
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == RoleUser {
				out.Messages[n-1].Content = append(out.Messages[n-1].Content, cm.Content...)
			} else if len(cm.Content) > 0 {
				out.Messages = append(out.Messages, cm)
			}
			continue
		}
		cm := cvMessage{Role: m.Role}
		for j := range m.Parts {
			b, ok := cvPart(req, &m.Parts[j])
			if ok {
				cm.Content = cache.appendPoint(req, append(cm.Content, b), partCacheControl(&m.Parts[j]))
				hasToolParts = hasToolParts || b.ToolUse != nil || b.ToolResult != nil
			}
		}
		if len(cm.Content) == 0 {
			continue
		}
		// Converse wants the roles to alternate; consecutive messages of
		// one role (a tool result followed by a user text) are merged.
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == cm.Role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, cm.Content...)
			continue
		}
		out.Messages = append(out.Messages, cm)
	}

	inf := cvInference{MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.StopSequences}
	if inf.MaxTokens != 0 || inf.Temperature != nil || inf.TopP != nil || len(inf.StopSequences) > 0 {
		out.InferenceConfig = &inf
	}
	extra := map[string]any{}
	if req.TopK != nil {
		extra["top_k"] = *req.TopK
	}
	if r := req.Reasoning; r != nil {
		switch r.Mode {
		case ReasoningEnabled:
			extra["thinking"] = map[string]any{"type": "enabled", "budget_tokens": r.BudgetTokens}
		case ReasoningAdaptive:
			extra["thinking"] = map[string]any{"type": "adaptive"}
		}
	}
	if len(extra) > 0 {
		out.AdditionalModelRequestFields = extra
	}
	for _, field := range [...]struct {
		set  bool
		name string
	}{{req.Seed != nil, "seed"}, {req.PresencePenalty != nil, "presence_penalty"}, {req.FrequencyPenalty != nil, "frequency_penalty"}} {
		if field.set {
			req.Drop(field.name, "Bedrock Converse has no such setting")
		}
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type != "text" {
		req.Drop("response_format", "Bedrock Converse has no structured output setting louter maps")
	}

	noneChoice := req.ToolChoice != nil && req.ToolChoice.Mode == ToolChoiceNone
	if len(req.Tools) > 0 && !noneChoice {
		tc := &cvToolConfig{}
		for _, t := range req.Tools {
			schema := t.Schema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			tc.Tools = append(tc.Tools, cvTool{ToolSpec: &cvToolSpec{Name: t.Name, Description: t.Description, InputSchema: cvInputSchema{schema}, Strict: t.Strict}})
			if p := cache.point(req, t.CacheControl, true); p != nil {
				tc.Tools = append(tc.Tools, cvTool{CachePoint: p})
			}
		}
		if c := req.ToolChoice; c != nil {
			switch c.Mode {
			case ToolChoiceAuto:
				tc.ToolChoice = map[string]any{"auto": map[string]any{}}
			case ToolChoiceRequired:
				tc.ToolChoice = map[string]any{"any": map[string]any{}}
			case ToolChoiceTool:
				tc.ToolChoice = map[string]any{"tool": map[string]any{"name": c.Name}}
			}
		}
		out.ToolConfig = tc
	} else if hasToolParts {
		// Converse refuses toolUse and toolResult blocks without a
		// toolConfig: a history with tool calls but no tools offered now
		// (tool_choice none) gets one placeholder tool.
		out.ToolConfig = &cvToolConfig{Tools: []cvTool{{ToolSpec: &cvToolSpec{Name: "louter_no_tools",
			Description: "Placeholder: no tool may be called now.", InputSchema: cvInputSchema{json.RawMessage(`{"type":"object","properties":{}}`)}}}}}
	}
	if noneChoice && len(req.Tools) > 0 {
		req.Drop("tool_choice", `Bedrock Converse has no "none": the tools were left out`)
	}
	return json.Marshal(out)
}

func cvText(s string) cvBlock { return cvBlock{Text: &s} }

// cvPart is one IR part as a Converse content block; false when Converse
// cannot carry it (recorded with req.Drop).
func cvPart(req *Request, p *Part) (cvBlock, bool) {
	switch p.Type {
	case PartText:
		if p.Text == "" {
			return cvBlock{}, false // Converse refuses empty text blocks
		}
		return cvText(p.Text), true
	case PartImage, PartDocument:
		return cvMediaBlock(req, p)
	case PartToolCall:
		args := json.RawMessage(p.ToolCall.Arguments)
		if len(strings.TrimSpace(p.ToolCall.Arguments)) == 0 || !json.Valid(args) {
			args = json.RawMessage(`{}`)
		}
		return cvBlock{ToolUse: &cvToolUse{ToolUseID: p.ToolCall.ID, Name: p.ToolCall.Name, Input: args}}, true
	case PartToolResult:
		r := p.ToolResult
		tr := &cvToolResult{ToolUseID: r.CallID, Content: []cvBlock{}}
		for i := range r.Content {
			if b, ok := cvPart(req, &r.Content[i]); ok && (b.Text != nil || b.Image != nil || b.Document != nil) {
				tr.Content = append(tr.Content, b)
			}
		}
		if r.IsError {
			tr.Status = "error"
		}
		if len(tr.Content) == 0 {
			tr.Content = append(tr.Content, cvText("(no output)")) // an error result must have content
		}
		return cvBlock{ToolResult: tr}, true
	case PartThinking:
		if p.Signature == "" {
			// Thinking without a signature is not the backend's own: as
			// Anthropic's API, Bedrock would refuse it.
			req.Drop("thinking", "unsigned thinking cannot be sent back to Bedrock")
			return cvBlock{}, false
		}
		return cvBlock{ReasoningContent: &cvReasoning{ReasoningText: &cvReasoningText{Text: p.Text, Signature: p.Signature}}}, true
	case PartRedactedThinking:
		return cvBlock{ReasoningContent: &cvReasoning{RedactedContent: p.Signature}}, true
	}
	return cvBlock{}, false
}

// cvMediaBlock is an image or a document, which Converse takes as base64
// bytes only.
func cvMediaBlock(req *Request, p *Part) (cvBlock, bool) {
	m := p.Media
	if m == nil || m.Data == "" {
		req.Drop(string(p.Type), "Bedrock Converse takes images and documents as data, not by URL or file id")
		return cvBlock{}, false
	}
	sub := m.MediaType
	if i := strings.IndexByte(sub, '/'); i >= 0 {
		sub = sub[i+1:]
	}
	if p.Type == PartImage {
		if sub == "jpg" {
			sub = "jpeg"
		}
		return cvBlock{Image: &cvMedia{Format: sub, Source: cvMediaBytes{m.Data}}}, true
	}
	format := map[string]string{"pdf": "pdf", "plain": "txt", "csv": "csv", "html": "html", "markdown": "md"}[sub]
	if format == "" {
		req.Drop("document", "Bedrock Converse does not take documents of type "+m.MediaType)
		return cvBlock{}, false
	}
	name := m.Filename
	if name == "" {
		name = "document"
	}
	return cvBlock{Document: &cvMedia{Format: format, Name: cvDocName(name), Source: cvMediaBytes{m.Data}}}, true
}

// cvDocName keeps the characters Converse allows in a document name
// (alphanumerics, whitespace, hyphens, parentheses, square brackets).
func cvDocName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '-' || c == '(' || c == ')' || c == '[' || c == ']') {
			b[i] = '-'
		}
	}
	return string(b)
}

// cvStop maps Converse's stopReason.
func cvStop(s string) StopReason {
	switch s {
	case "tool_use":
		return StopToolUse
	case "max_tokens":
		return StopMaxTokens
	case "stop_sequence":
		return StopSequence
	case "guardrail_intervened", "content_filtered":
		return StopRefusal
	case "model_context_window_exceeded":
		return StopContextWindow
	}
	return StopEndTurn
}

// cvUsage reads Converse's usage, whose inputTokens leave out the cached
// tokens the IR's InputTokens include.
func cvUsage(u gjson.Result) Usage {
	read, write := int(u.Get("cacheReadInputTokens").Int()), int(u.Get("cacheWriteInputTokens").Int())
	return Usage{InputTokens: int(u.Get("inputTokens").Int()) + read + write, OutputTokens: int(u.Get("outputTokens").Int()),
		CacheReadTokens: read, CacheWriteTokens: write}
}

// DecodeResponse implements Codec.
func (bedrockConverseCodec) DecodeResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Error{Status: http.StatusBadGateway, Kind: ErrAPI, Message: "bedrock converse: the answer is not JSON"}
	}
	root := gjson.ParseBytes(body)
	resp := &Response{ID: newID("msg_bdrk_"), StopReason: cvStop(root.Get("stopReason").Str), Usage: cvUsage(root.Get("usage"))}
	for _, b := range root.Get("output.message.content").Array() {
		switch {
		case b.Get("text").Exists():
			resp.Parts = append(resp.Parts, Part{Type: PartText, Text: b.Get("text").Str})
		case b.Get("toolUse").Exists():
			tu := b.Get("toolUse")
			args := tu.Get("input").Raw
			if args == "" {
				args = "{}"
			}
			resp.Parts = append(resp.Parts, Part{Type: PartToolCall, ToolCall: &ToolCall{ID: tu.Get("toolUseId").Str, Name: tu.Get("name").Str, Arguments: args}})
		case b.Get("reasoningContent.reasoningText").Exists():
			rt := b.Get("reasoningContent.reasoningText")
			resp.Parts = append(resp.Parts, Part{Type: PartThinking, Text: rt.Get("text").Str, Signature: rt.Get("signature").Str})
		case b.Get("reasoningContent.redactedContent").Exists():
			resp.Parts = append(resp.Parts, Part{Type: PartRedactedThinking, Signature: b.Get("reasoningContent.redactedContent").Str})
		}
	}
	if resp.StopReason == StopEndTurn && resp.HasToolCalls() {
		resp.StopReason = StopToolUse
	}
	return resp, nil
}

// NewStreamDecoder implements Codec.
func (bedrockConverseCodec) NewStreamDecoder() StreamDecoder {
	return &cvStreamDecoder{index: map[int64]int{}}
}

// cvStreamDecoder turns ConverseStream's events into IR events.
type cvStreamDecoder struct {
	started, ended bool
	index          map[int64]int // Converse's contentBlockIndex → the IR's
	open           int           // the IR index of the open block, -1 for none
	openType       BlockType
	next           int
	stop           StopReason
	stopped        bool
}

// Decode implements StreamDecoder.
func (d *cvStreamDecoder) Decode(dst []Event, name string, data []byte) []Event {
	if d.ended {
		return dst
	}
	if exc, ok := strings.CutPrefix(name, AWSExceptionPrefix); ok {
		d.ended = true
		return append(dst, Event{Type: EventError, Err: AWSStreamError(exc, data)})
	}
	if !d.started {
		d.started, d.open = true, -1
		dst = append(dst, Event{Type: EventMessageStart, ID: newID("msg_bdrk_")})
	}
	ev := gjson.ParseBytes(data)
	switch name {
	case "contentBlockStart":
		if tu := ev.Get("start.toolUse"); tu.Exists() {
			dst = d.openBlock(dst, ev.Get("contentBlockIndex").Int(), BlockToolCall, tu.Get("toolUseId").Str, tu.Get("name").Str)
		}
	case "contentBlockDelta":
		i, delta := ev.Get("contentBlockIndex").Int(), ev.Get("delta")
		switch {
		case delta.Get("text").Exists():
			dst = d.openBlock(dst, i, BlockText, "", "")
			dst = append(dst, Event{Type: EventBlockDelta, Index: d.open, Block: BlockText, Text: delta.Get("text").Str})
		case delta.Get("toolUse").Exists():
			dst = d.openBlock(dst, i, BlockToolCall, "", "")
			dst = append(dst, Event{Type: EventBlockDelta, Index: d.open, Block: BlockToolCall, Text: delta.Get("toolUse.input").Str})
		case delta.Get("reasoningContent.redactedContent").Exists():
			dst = d.closeBlock(dst)
			dst = append(dst, Event{Type: EventBlockStart, Index: d.next, Block: BlockRedactedThinking, Signature: delta.Get("reasoningContent.redactedContent").Str},
				Event{Type: EventBlockStop, Index: d.next, Block: BlockRedactedThinking})
			d.next++
		case delta.Get("reasoningContent").Exists():
			dst = d.openBlock(dst, i, BlockThinking, "", "")
			rc := delta.Get("reasoningContent")
			if t := rc.Get("text"); t.Exists() {
				dst = append(dst, Event{Type: EventBlockDelta, Index: d.open, Block: BlockThinking, Text: t.Str})
			}
			if s := rc.Get("signature"); s.Exists() {
				dst = append(dst, Event{Type: EventBlockDelta, Index: d.open, Block: BlockThinking, Signature: s.Str})
			}
		}
	case "contentBlockStop":
		if ir, ok := d.index[ev.Get("contentBlockIndex").Int()]; ok && ir == d.open {
			dst = d.closeBlock(dst)
		}
	case "messageStop":
		dst = d.closeBlock(dst)
		d.stop, d.stopped = cvStop(ev.Get("stopReason").Str), true
	case "metadata":
		u := cvUsage(ev.Get("usage"))
		dst = append(dst, Event{Type: EventUsage, Usage: &u})
		if d.stopped {
			d.ended = true
			dst = append(dst, Event{Type: EventMessageStop, Stop: d.stop, Usage: &u})
		}
	}
	return dst
}

// openBlock makes Converse's block i the open one, starting it (and
// closing another) if it is not.
func (d *cvStreamDecoder) openBlock(dst []Event, i int64, t BlockType, id, name string) []Event {
	if ir, ok := d.index[i]; ok && ir == d.open {
		return dst
	}
	dst = d.closeBlock(dst)
	d.index[i], d.open, d.openType = d.next, d.next, t
	d.next++
	return append(dst, Event{Type: EventBlockStart, Index: d.open, Block: t, ID: id, Name: name})
}

func (d *cvStreamDecoder) closeBlock(dst []Event) []Event {
	if d.open < 0 {
		return dst
	}
	dst = append(dst, Event{Type: EventBlockStop, Index: d.open, Block: d.openType})
	d.open = -1
	return dst
}

// End implements StreamDecoder.
func (d *cvStreamDecoder) End(dst []Event) []Event {
	if d.ended {
		return dst
	}
	d.ended = true
	if d.stopped {
		// No metadata: the stop without its usage.
		return append(dst, Event{Type: EventMessageStop, Stop: d.stop})
	}
	return append(dst, Event{Type: EventError, Err: &Error{Status: http.StatusBadGateway, Kind: ErrAPI,
		Message: "bedrock converse: the stream ended before messageStop"}})
}

// Interface guards.
var (
	_ Codec            = bedrockConverseCodec{}
	_ UsageTimingCodec = bedrockConverseCodec{}
	_ BackendOnlyCodec = bedrockConverseCodec{}
)

package translate

import (
	"bytes"
	"encoding/base64"
	"strings"
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
			b = e.appendText(b, p)
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
	if cm := req.ContextManagement; cm != nil && cm.Raw != nil {
		// The client's edits, for a backend that applies them
		// (EditContext left them in place).
		b = append(b, `,"context_management":`...)
		b = append(b, cm.Raw...)
	}
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
// without repeated growth: a regrowth near the end copies the whole body
// again and leaves a buffer twice its size. Texts count as the escaped form
// that will be copied, when there is one.
func (e *anthRequestEncoder) sizeHint() int {
	n := 1024
	add := func(p *Part) {
		n += jsonTextSize(p.Text, p.textForm) + len(p.Signature) + 64
		if p.Media != nil {
			n += len(p.Media.Data) + len(p.Media.URL)
		}
		if p.ToolCall != nil {
			n += len(p.ToolCall.Arguments) + len(p.ToolCall.ID) + len(p.ToolCall.Name)
		}
		if p.ToolResult != nil {
			for i := range p.ToolResult.Content {
				c := &p.ToolResult.Content[i]
				n += jsonTextSize(c.Text, c.textForm) + 32
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
		t := &e.req.Tools[i]
		n += len(t.Schema) + jsonTextSize(t.Description, t.descForm) + len(t.CacheControl) + 64
	}
	return n
}

// jsonTextSize estimates the size of s written as JSON string contents:
// its form's when the form will be copied, else the text's with room for
// escapes (code and tool output are full of newlines, tabs and quotes).
func jsonTextSize(s string, f jsonForm) int {
	if f.use(s) {
		return len(f.esc)
	}
	return len(s) + len(s)/8
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
	// Server tool blocks another provider made go as text
	// (server_tool_results.go).
	msgs := withServerToolsAsText(req.Messages, anthropicCodec{}.KeepsServerTool)
	for mi := range msgs {
		m := &msgs[mi]
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
	case PartServerToolCall, PartServerToolResult:
		return p.Server != nil
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

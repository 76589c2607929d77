package translate

import (
	"net/http"

	"github.com/tidwall/gjson"
)

// anthStopReasons are the stop_reason values Anthropic defines; they are
// the IR's canonical names.
var anthStopReasons = map[string]StopReason{
	"end_turn":                      StopEndTurn,
	"max_tokens":                    StopMaxTokens,
	"stop_sequence":                 StopSequence,
	"tool_use":                      StopToolUse,
	"refusal":                       StopRefusal,
	"pause_turn":                    StopPauseTurn,
	"model_context_window_exceeded": StopContextWindow,
	"compaction":                    StopCompaction,
}

// anthDecodeStop maps a wire stop_reason to the IR. An absent one stays
// empty (the caller decides); one newer than this codec is a natural end.
func anthDecodeStop(s string) StopReason {
	if s == "" {
		return ""
	}
	if r, ok := anthStopReasons[s]; ok {
		return r
	}
	return StopEndTurn
}

// anthStopReason maps an IR stop reason to the wire. Anthropic has no
// "error" stop: the error itself travels separately.
func anthStopReason(r StopReason) string {
	if r != StopError {
		if _, ok := anthStopReasons[string(r)]; ok {
			return string(r)
		}
	}
	return string(StopEndTurn)
}

// anthUsage holds Anthropic's usage counters as the wire gives them:
// input_tokens excludes the cached input.
type anthUsage struct {
	input, cacheWrite, cacheRead, output, thinking int
}

// merge takes the counters present in a usage object; absent and null ones
// keep their value (message_delta usage carries only what changed, and
// counts are cumulative). It reports whether the object had any counter.
func (u *anthUsage) merge(v gjson.Result) bool {
	seen := false
	v.ForEach(func(k, n gjson.Result) bool {
		if k.Str == "output_tokens_details" {
			if t := n.Get("thinking_tokens"); t.Type == gjson.Number {
				u.thinking, seen = usageCount(t), true
			}
			return true
		}
		if n.Type != gjson.Number {
			return true
		}
		switch k.Str {
		case "input_tokens":
			u.input, seen = usageCount(n), true
		case "output_tokens":
			u.output, seen = usageCount(n), true
		case "cache_creation_input_tokens":
			u.cacheWrite, seen = usageCount(n), true
		case "cache_read_input_tokens":
			u.cacheRead, seen = usageCount(n), true
		}
		return true
	})
	return seen
}

// ir converts to the IR, whose InputTokens includes cached input.
func (u anthUsage) ir() Usage {
	return Usage{
		InputTokens:      u.input + u.cacheWrite + u.cacheRead,
		OutputTokens:     u.output,
		CacheReadTokens:  u.cacheRead,
		CacheWriteTokens: u.cacheWrite,
		ReasoningTokens:  u.thinking,
	}
}

// appendAnthUsage appends a usage object with the counters Claude Code and
// the SDKs read.
func appendAnthUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendJSONInt(b, int64(u.UncachedInputTokens()))
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = appendJSONInt(b, int64(u.CacheWriteTokens))
	b = append(b, `,"cache_read_input_tokens":`...)
	b = appendJSONInt(b, int64(u.CacheReadTokens))
	b = append(b, `,"output_tokens":`...)
	b = appendJSONInt(b, int64(u.OutputTokens))
	return append(b, '}')
}

// DecodeResponse implements Codec.
func (c anthropicCodec) DecodeResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Error{Status: http.StatusBadGateway, Kind: ErrAPI, Message: "anthropic backend sent a response that is not valid JSON"}
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, &Error{Status: http.StatusBadGateway, Kind: ErrAPI, Message: "anthropic backend sent a response that is not a JSON object"}
	}
	if root.Get("type").Str == "error" {
		// An error envelope with a success status.
		return nil, c.DecodeError(0, body)
	}
	resp := &Response{}
	var stop string
	var usage anthUsage
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			resp.ID = v.String()
		case "model":
			resp.Model = v.String()
		case "stop_reason":
			stop = v.String()
		case "stop_sequence":
			resp.StopSequence = v.String()
		case "usage":
			usage.merge(v)
		case "content":
			v.ForEach(func(_, b gjson.Result) bool {
				if p, ok := anthResponsePart(b); ok {
					resp.Parts = append(resp.Parts, p)
				}
				return true
			})
		}
		return true
	})
	resp.Usage = usage.ir()
	resp.StopReason = anthDecodeStop(stop)
	// Same rule as the stream Emitter: a natural end with tool calls is a
	// tool-use stop, so a response and its streamed twin agree.
	if resp.HasToolCalls() && (resp.StopReason == "" || resp.StopReason == StopEndTurn || resp.StopReason == StopSequence) {
		resp.StopReason = StopToolUse
	}
	if resp.StopReason == "" {
		resp.StopReason = StopEndTurn
	}
	return resp, nil
}

// anthResponsePart decodes one content block of a response. Web search
// and fetch blocks become server tool parts (anthropic_server_tool_blocks.go);
// the blocks of server tools louter does not translate are skipped.
func anthResponsePart(b gjson.Result) (Part, bool) {
	f := anthCollectBlock(b)
	switch f.typ.Str {
	case "server_tool_use", "web_search_tool_result", "web_fetch_tool_result":
		return anthServerToolPart(b)
	case "text":
		return Part{Type: PartText, Text: f.text.String(), Citations: anthCitations(b.Get("citations"))}, true
	case "thinking":
		return Part{Type: PartThinking, Text: f.thinking.String(), Signature: f.signature.String()}, true
	case "redacted_thinking":
		return Part{Type: PartRedactedThinking, Signature: f.data.String()}, true
	case "tool_use":
		id := f.id.String()
		if id == "" {
			id = newID("toolu_")
		}
		args := "{}"
		if f.input.Exists() && f.input.Type != gjson.Null {
			args = f.input.Raw
		}
		return Part{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: f.name.String(), Arguments: args}}, true
	}
	return Part{}, false
}

// EncodeResponse implements Codec.
func (anthropicCodec) EncodeResponse(resp *Response, req *Request) ([]byte, error) {
	model := resp.Model
	if req != nil && req.Model != "" {
		model = req.Model
	}
	id := ownID(resp.ID, "msg_")
	b := make([]byte, 0, 256+anthPartsSize(resp.Parts))
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"content":[`...)
	if req != nil {
		b = appendCompactionBlock(b, req.ContextManagement)
	}
	for i := range resp.Parts {
		b = appendAnthResponseBlock(b, &resp.Parts[i], req)
	}
	stop := anthStopReason(resp.StopReason)
	if resp.Refusal != "" {
		b = appendJSONComma(b)
		b = append(b, `{"type":"text","text":`...)
		b = appendJSONString(b, resp.Refusal)
		b = append(b, '}')
		stop = string(StopRefusal)
	}
	b = append(b, `],"stop_reason":`...)
	b = appendJSONString(b, stop)
	b = append(b, `,"stop_sequence":`...)
	b = appendJSONStringOrNull(b, resp.StopSequence)
	b = append(b, `,"usage":`...)
	b = appendAnthUsage(b, &resp.Usage)
	if req != nil {
		b = appendAppliedEdits(b, req.ContextManagement)
	}
	return append(b, '}'), nil
}

// appendAppliedEdits appends ,"context_management":{"applied_edits":[...]}
// when louter applied the request's context edits (EditContext): Claude
// Code's context meter and its notices read what was cleared there, on
// the message and on a stream's message_delta.
func appendAppliedEdits(b []byte, cm *ContextManagement) []byte {
	if cm == nil || !cm.Reported {
		return b
	}
	b = append(b, `,"context_management":{"applied_edits":[`...)
	for i, a := range cm.Applied {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = appendJSONString(b, a.Type)
		b = append(b, `,"cleared_input_tokens":`...)
		b = appendJSONInt(b, int64(a.ClearedInputTokens))
		switch a.Type {
		case EditClearThinking:
			b = append(b, `,"cleared_thinking_turns":`...)
			b = appendJSONInt(b, int64(a.ClearedThinkingTurns))
		case EditClearToolUses:
			b = append(b, `,"cleared_tool_uses":`...)
			b = appendJSONInt(b, int64(a.ClearedToolUses))
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendCompactionBlock appends the compaction block louter made
// (ContextManagement.Compacted), the first of the answer's content, as
// Anthropic's server puts it there: {"type":"compaction","content":summary}.
func appendCompactionBlock(b []byte, cm *ContextManagement) []byte {
	if cm == nil || cm.Compacted == nil {
		return b
	}
	b = append(b, `{"type":"compaction","content":`...)
	b = appendJSONString(b, cm.Compacted.Summary)
	return append(b, '}')
}

func anthPartsSize(parts []Part) int {
	n := 0
	for i := range parts {
		n += len(parts[i].Text) + len(parts[i].Signature) + 64
		if tc := parts[i].ToolCall; tc != nil {
			n += len(tc.Arguments)
		}
	}
	return n
}

// appendAnthResponseBlock appends one content block of a response, with a
// leading comma when needed. Parts a response cannot hold are skipped.
func appendAnthResponseBlock(b []byte, p *Part, req *Request) []byte {
	switch p.Type {
	case PartText:
		b = appendJSONComma(b)
		b = append(b, `{"type":"text","text":`...)
		b = appendJSONString(b, p.Text)
		if len(p.Citations) > 0 {
			b = append(b, `,"citations":[`...)
			for i := range p.Citations {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendAnthCitation(b, &p.Citations[i], p.Text)
			}
			b = append(b, ']')
		}
	case PartThinking:
		// The signature is empty when the backend was not Anthropic; the
		// client shows the thinking and sends it back to louter as is.
		b = appendJSONComma(b)
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendJSONString(b, p.Text)
		b = append(b, `,"signature":`...)
		b = appendJSONString(b, p.Signature)
	case PartRedactedThinking:
		b = appendJSONComma(b)
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendJSONString(b, p.Signature)
	case PartServerToolCall, PartServerToolResult:
		if p.Server == nil {
			return b
		}
		return appendAnthServerToolBlock(appendJSONComma(b), p)
	case PartToolCall:
		tc := p.ToolCall
		if tc == nil {
			return b
		}
		id := tc.ID
		if id == "" {
			id = newID("toolu_")
		}
		b = appendJSONComma(b)
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, tc.Name)
		b = append(b, `,"input":`...)
		b = anthAppendToolInput(b, tc.Arguments, req)
	default:
		return b
	}
	return append(b, '}')
}

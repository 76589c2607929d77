package translate

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// Prompt caching through Converse. Anthropic marks the end of a cached
// prefix with cache_control on a block; Converse with a cachePoint block
// of its own placed right after the content to cache, in system, in a
// message's content or among the tools. Bedrock caches prompts for Claude
// and Amazon Nova models only (Nova: system and messages, not tools), and
// answers a cachePoint sent to any other model with a 403 ("... did not
// allow prompt caching"), so elsewhere cache_control is dropped, recorded.

// cvCachePoint is Converse's CachePointBlock.
type cvCachePoint struct {
	Type string `json:"type"`
	// TTL is the client's own ("5m" or "1h"); Bedrock's default when empty.
	TTL string `json:"ttl,omitempty"`
}

// cvCaching says where Bedrock takes cache points for one model.
type cvCaching struct{ prompt, tools bool }

// cvCachingFor reads a model id, an inference profile's id, or an ARN
// that names either (…/us.anthropic.claude-…). An application inference
// profile's ARN names no model: it gets no cache points, which costs the
// cache but never the request.
func cvCachingFor(model string) cvCaching {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "anthropic.claude"):
		// The Claude models that predate Bedrock's prompt caching (Claude
		// 3.5 Sonnet v2 had it only in a closed preview).
		for _, old := range [...]string{"claude-instant", "claude-v2", "claude-3-haiku", "claude-3-sonnet", "claude-3-opus", "claude-3-5-sonnet"} {
			if strings.Contains(m, old) {
				return cvCaching{}
			}
		}
		return cvCaching{prompt: true, tools: true}
	case strings.Contains(m, "amazon.nova-"):
		return cvCaching{prompt: true}
	}
	return cvCaching{}
}

const (
	cvDropCacheModel = "Bedrock caches prompts only for Claude and Amazon Nova models"
	cvDropCacheTools = "Bedrock caches no tool definitions for this model"
)

// point is the cachePoint block that follows a block marked with cc, or
// nil: unmarked, or the model takes no cache point there (recorded).
func (c cvCaching) point(req *Request, cc json.RawMessage, tool bool) *cvCachePoint {
	if len(cc) == 0 {
		return nil
	}
	switch {
	case !c.prompt:
		req.Drop("cache_control", cvDropCacheModel)
		return nil
	case tool && !c.tools:
		req.Drop("cache_control", cvDropCacheTools)
		return nil
	}
	p := &cvCachePoint{Type: "default"}
	if ttl := gjson.GetBytes(cc, "ttl").Str; ttl == "5m" || ttl == "1h" {
		p.TTL = ttl
	}
	return p
}

// appendPoint appends the cachePoint block that follows a block marked
// with cc, if any.
func (c cvCaching) appendPoint(req *Request, blocks []cvBlock, cc json.RawMessage) []cvBlock {
	if p := c.point(req, cc, false); p != nil {
		blocks = append(blocks, cvBlock{CachePoint: p})
	}
	return blocks
}

// partCacheControl is a part's cache_control, or for a tool result the
// last one among its content: Converse takes no cache point inside a
// toolResult, and one after it caches what the marked block would have.
func partCacheControl(p *Part) json.RawMessage {
	if len(p.CacheControl) > 0 || p.Type != PartToolResult || p.ToolResult == nil {
		return p.CacheControl
	}
	for i := len(p.ToolResult.Content) - 1; i >= 0; i-- {
		if cc := p.ToolResult.Content[i].CacheControl; len(cc) > 0 {
			return cc
		}
	}
	return nil
}

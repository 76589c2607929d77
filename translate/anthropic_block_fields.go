package translate

import "github.com/tidwall/gjson"

// The members of a content block in an Anthropic response or stream event,
// read with gjson. The request decoder has its own single-pass reader
// (anthropic_request_decode_blocks.go).

// anthBlockFields collects a content block's members in one pass over the
// object: text blocks can be tens of kilobytes, and a gjson Get per field
// would rescan them each time. The last of a repeated member wins.
type anthBlockFields struct {
	typ, text, source, cacheControl, citations   gjson.Result
	id, name, input, toolUseID, content, isError gjson.Result
	thinking, signature, data, title, context    gjson.Result
}

func anthCollectBlock(b gjson.Result) anthBlockFields {
	var f anthBlockFields
	b.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.typ = v
		case "text":
			f.text = v
		case "source":
			f.source = v
		case "cache_control":
			f.cacheControl = v
		case "citations":
			f.citations = v
		case "id":
			f.id = v
		case "name":
			f.name = v
		case "input":
			f.input = v
		case "tool_use_id":
			f.toolUseID = v
		case "content":
			f.content = v
		case "is_error":
			f.isError = v
		case "thinking":
			f.thinking = v
		case "signature":
			f.signature = v
		case "data":
			f.data = v
		case "title":
			f.title = v
		case "context":
			f.context = v
		}
		return true
	})
	return f
}

package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// Anthropic server tools (web_search_20250305, web_fetch_20250910, code
// execution, ...) run on Anthropic's side: a backend of another protocol
// cannot run them, so the decoder leaves them out of the tool list and
// records the drop. That is what the model would see had the tool not been
// offered. A request that forces one, though — Claude Code's WebSearch tool
// sends a request whose only tool is web_search, with tool_choice naming
// it — cannot be answered faithfully at all: refusing it with a 400 naming
// the tool lets the agent report that the search failed, where a model
// without the tool would make results up.

// checkForcedServerTool refuses a request whose tool_choice names a
// server tool of its tools list, which a translated request cannot run.
func checkForcedServerTool(body []byte, req *Request) *Error {
	tc := req.ToolChoice
	if tc == nil || tc.Mode != ToolChoiceTool {
		return nil
	}
	for _, t := range req.Tools {
		if t.Name == tc.Name {
			return nil
		}
	}
	var e *Error
	gjson.GetBytes(body, "tools").ForEach(func(i, t gjson.Result) bool {
		typ := t.Get("type").String()
		if t.Get("name").String() != tc.Name || typ == "" || typ == "custom" {
			return true
		}
		at := "tools." + strconv.Itoa(int(i.Int()))
		e = &Error{Status: 400, Kind: ErrInvalidRequest, Param: at,
			Message: at + ": tool_choice forces the Anthropic server tool " + typ + " (" + tc.Name + "), which is not available on this backend: louter runs server tools only on Anthropic backends"}
		return false
	})
	return e
}

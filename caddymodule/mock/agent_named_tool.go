package mock

import (
	"regexp"
	"strings"

	"github.com/louter/louter/translate"
)

// The agent scenario's second script: asked to call a named tool
// ("Call the tool "NAME" ..."), it calls that tool, with arguments its
// schema admits, and then reports the tool's result. A tool the request
// does not declare yet is first looked up with the agent's tool search
// tool (Claude Code's ToolSearch, "select:NAME"), as a model does with the
// deferred tools, MCP servers' among them, that Claude Code names only in
// its system prompt; so the script shows whether the backend gets the
// tool once the search loaded it.

// namedToolPrompt finds the tool a prompt asks to call.
var namedToolPrompt = regexp.MustCompile("(?i)\\bcall the tool [\"`]([^\"`\\s]+)[\"`]")

// toolSearchNames are the tool search tools the script uses, lower case.
var toolSearchNames = map[string]bool{"toolsearch": true, "tool_search": true}

// namedToolTurn answers a request whose prompt names a tool to call, or
// returns nil when the prompt names none.
func namedToolTurn(x *exchange) *reply {
	name := promptedToolName(x.req)
	if name == "" {
		return nil
	}
	if called(x.req, name) {
		if result, ok := lastToolResults(x.req); ok {
			return x.textReply("The tool " + name + " returned: " + result)
		}
		return x.textReply("The tool " + name + " was called.")
	}
	for i := range x.req.Tools {
		if t := &x.req.Tools[i]; t.Name == name {
			return &reply{blocks: []block{x.toolCall(t.Name, synthesizeArguments(t.Schema))}, stop: translate.StopToolUse}
		}
	}
	for i := range x.req.Tools {
		if t := &x.req.Tools[i]; toolSearchNames[strings.ToLower(t.Name)] && !called(x.req, t.Name) {
			args := `{"query":` + string(appendJSONString(nil, "select:"+name))
			if _, declared := propertyType(t.Schema, "max_results"); declared {
				args += `,"max_results":5`
			}
			return &reply{blocks: []block{x.toolCall(t.Name, args+"}")}, stop: translate.StopToolUse}
		}
	}
	return x.textReply("The tool " + name + " is not available.")
}

// promptedToolName returns the tool named by the latest user text that
// names one (a tool result's message has none), skipping Claude Code's
// system reminders.
func promptedToolName(req *translate.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := &req.Messages[i]; m.Role == translate.RoleUser {
			if sub := namedToolPrompt.FindStringSubmatch(messageText(m, true)); sub != nil {
				return sub[1]
			}
		}
	}
	return ""
}

// called reports whether an assistant message of the request calls the
// named tool.
func called(req *translate.Request, name string) bool {
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != translate.RoleAssistant {
			continue
		}
		for j := range m.Parts {
			if p := &m.Parts[j]; p.Type == translate.PartToolCall && p.ToolCall != nil && p.ToolCall.Name == name {
				return true
			}
		}
	}
	return false
}

package mock

import (
	"regexp"
	"strings"

	"github.com/louter/louter/translate"
)

// The agent scenario lets real coding agents (Claude Code, Codex, Gemini
// CLI, Cursor-style clients) complete a turn end to end against the mock:
// asked to run a quoted command, it calls the agent's shell tool; given the
// tool's result, it reports what the command printed. Asked to call a
// named tool instead, it does so (agent_named_tool.go). Given its own
// report back after the command, as in the summary of a compacted
// history, it repeats it rather than running the command again.

// shellToolNames are the shell tools of the agents the scenario drives,
// lower case.
var shellToolNames = map[string]bool{
	"bash":              true, // Claude Code
	"shell":             true, // older Codex
	"exec_command":      true, // Codex
	"run_shell_command": true, // Gemini CLI
	"run_terminal_cmd":  true, // Cursor
}

// quotedCommand finds a double-quoted or back-quoted command in a prompt.
var quotedCommand = regexp.MustCompile("\"([^\"\\n]+)\"|`([^`\\n]+)`")

func agentScenario(x *exchange) *reply {
	if r := namedToolTurn(x); r != nil {
		return r
	}
	if result, ok := lastToolResults(x.req); ok {
		return x.textReply(commandReport + result)
	}
	if report := reportedCommand(x.req); report != "" {
		return x.textReply(report)
	}
	if tool := shellTool(x.req.Tools); tool != nil {
		if cmd := userCommand(x.req); cmd != "" {
			return &reply{blocks: []block{x.toolCall(tool.Name, shellArguments(tool, cmd))}, stop: translate.StopToolUse}
		}
	}
	if rf := x.req.ResponseFormat; rf != nil && rf.Type == "json_schema" && len(rf.Schema) > 0 {
		// A structured-output side call, such as Gemini CLI's model
		// router: an answer that satisfies the schema.
		return &reply{blocks: []block{{kind: translate.PartText, deltas: []string{synthesizeArguments(rf.Schema)}}}, stop: translate.StopEndTurn}
	}
	return x.textReply(x.greeting())
}

// commandReport starts the scenario's report of what a command printed.
const commandReport = "The command printed: "

// reportedCommand returns the scenario's report of a command found in the
// last user message after the prompt that asked for it (the summary of a
// compacted history carries it there), or "".
func reportedCommand(req *translate.Request) string {
	m := lastMessage(req, translate.RoleUser)
	if m == nil {
		return ""
	}
	for i := len(m.Parts) - 1; i >= 0; i-- {
		p := &m.Parts[i]
		if p.Type != translate.PartText {
			continue
		}
		if j := strings.LastIndex(p.Text, commandReport); j >= 0 {
			return strings.TrimSpace(p.Text[j:])
		}
		if quotedCommand.MatchString(p.Text) {
			return "" // the prompt comes first: the command has not run
		}
	}
	return ""
}

// lastToolResults returns the text of the tool results in the last
// non-system message, and whether it held any.
func lastToolResults(req *translate.Request) (string, bool) {
	var last *translate.Message
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != translate.RoleSystem {
			last = &req.Messages[i]
			break
		}
	}
	if last == nil {
		return "", false
	}
	var texts []string
	found := false
	for i := range last.Parts {
		p := &last.Parts[i]
		if p.Type != translate.PartToolResult || p.ToolResult == nil {
			continue
		}
		found = true
		for j := range p.ToolResult.Content {
			if c := &p.ToolResult.Content[j]; c.Type == translate.PartText {
				texts = append(texts, strings.TrimSpace(c.Text))
			}
		}
	}
	return strings.Join(texts, "\n"), found
}

// shellTool returns the first tool of the request that is a known shell
// tool, or nil.
func shellTool(tools []translate.Tool) *translate.Tool {
	for i := range tools {
		if shellToolNames[strings.ToLower(tools[i].Name)] {
			return &tools[i]
		}
	}
	return nil
}

// userCommand returns the first quoted command of the last user message,
// searching its text parts from the last (the prompt) backwards and skipping
// Claude Code's system reminders.
func userCommand(req *translate.Request) string {
	m := lastMessage(req, translate.RoleUser)
	if m == nil {
		return ""
	}
	for i := len(m.Parts) - 1; i >= 0; i-- {
		p := &m.Parts[i]
		if p.Type != translate.PartText || strings.HasPrefix(strings.TrimSpace(p.Text), systemReminderPrefix) {
			continue
		}
		if sub := quotedCommand.FindStringSubmatch(p.Text); sub != nil {
			return sub[1] + sub[2] // one of the two groups is empty
		}
	}
	return ""
}

// shellArguments builds the arguments of a shell tool call. The command goes
// in "cmd" for Codex's exec_command and in "command" otherwise, as an argv
// array when the schema declares it so; Claude Code's Bash, and any tool
// whose schema declares one, also gets a description.
func shellArguments(t *translate.Tool, cmd string) string {
	lower := strings.ToLower(t.Name)
	key := "command"
	if lower == "exec_command" {
		key = "cmd"
	}
	b := append([]byte{'{'}, `"`+key+`":`...)
	if typ, _ := propertyType(t.Schema, key); typ == "array" {
		b = append(b, `["bash","-lc",`...)
		b = appendJSONString(b, cmd)
		b = append(b, ']')
	} else {
		b = appendJSONString(b, cmd)
	}
	if _, declared := propertyType(t.Schema, "description"); lower == "bash" || declared {
		b = append(b, `,"description":"Run the command"`...)
	}
	return string(append(b, '}'))
}

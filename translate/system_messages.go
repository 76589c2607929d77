package translate

// A system message in the middle of the conversation (Anthropic's beta
// role:"system" message, mid-conversation-system-2026-04-07, which Claude
// Code sends to tell the model of a change of context; OpenAI's system or
// developer message after the first turn) says something from the point
// where it stands: what came before was said without it. OpenAI Chat and
// the Responses API take it at that position. Gemini and Bedrock Converse
// have one system prompt per request, so moving the text there would tell
// the model it held from the start; it goes instead as a user turn's text
// at its position, marked as the system's (systemTurnText), which is how
// the model would have read it. System messages before the first user or
// assistant turn are the system prompt's continuation and join it.

// leadingSystem returns how many of msgs, from the first, are system
// messages: those that join the system prompt.
func leadingSystem(msgs []Message) int {
	n := 0
	for n < len(msgs) && msgs[n].Role == RoleSystem {
		n++
	}
	return n
}

// systemTurnText is the text a mid-conversation system message's text
// part becomes in a user turn.
func systemTurnText(text string) string {
	return "<system>\n" + text + "\n</system>"
}

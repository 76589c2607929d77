package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestMidConversationSystem: Claude Code's role:"system" message in the
// middle of messages (beta mid-conversation-system-2026-04-07) reaches
// every backend at its position: a system message where the protocol has
// one, a user turn's text marked as the system's where it has only one
// system prompt; a system message opening the conversation joins the
// system prompt.
func TestMidConversationSystem(t *testing.T) {
	const body = `{"model":"m","max_tokens":9,"system":"You are Claude Code.","messages":[
		{"role":"system","content":"Opening note."},
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"hello"},
		{"role":"system","content":[{"type":"text","text":"The user switched to plan mode."}]},
		{"role":"user","content":"go on"}]}`
	const marked = "<system>\nThe user switched to plan mode.\n</system>"
	for _, tt := range []struct {
		backend Protocol
		checks  map[string]string // gjson path: value
	}{
		{ProtocolOpenAIChat, map[string]string{
			"messages.#":         `6`,
			"messages.1.content": `Opening note.`,
			"messages.4.role":    `system`,
			"messages.4.content": `The user switched to plan mode.`,
			"messages.5.content": `go on`,
		}},
		{ProtocolOpenAIResponses, map[string]string{
			"input.3.role":           `developer`,
			"input.3.content.0.text": `The user switched to plan mode.`,
			"input.4.content.0.text": `go on`,
		}},
		{ProtocolGemini, map[string]string{
			"systemInstruction.parts.#":      `2`,
			"systemInstruction.parts.1.text": `Opening note.`,
			"contents.#":                     `3`,
			"contents.2.role":                `user`,
			"contents.2.parts.0.text":        marked,
			"contents.2.parts.1.text":        `go on`,
		}},
		{ProtocolBedrockConverse, map[string]string{
			"system.#":                  `2`,
			"system.1.text":             `Opening note.`,
			"messages.#":                `3`,
			"messages.2.role":           `user`,
			"messages.2.content.0.text": marked,
			"messages.2.content.1.text": `go on`,
		}},
	} {
		t.Run(string(tt.backend), func(t *testing.T) {
			backend, ok := Lookup(tt.backend)
			if !ok {
				t.Fatalf("no codec for %s", tt.backend)
			}
			out, _, err := TranslateRequest([]byte(body), nil, &RequestRoute{Client: anthropicCodec{}, Backend: backend, BackendModel: "m"})
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.checks {
				if got := gjson.GetBytes(out, path).String(); got != want {
					t.Errorf("%s = %s, want %s\nbody: %s", path, got, want, out)
				}
			}
		})
	}
}

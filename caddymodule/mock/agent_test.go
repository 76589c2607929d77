package mock

import (
	"net/http"
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

// The agent scenario given a compacted history: the summary after the
// prompt carries its report of the command, which it repeats instead of
// running the command again; a prompt after a report is a new request.
func TestAgentScenarioCompactedHistory(t *testing.T) {
	const (
		prompt  = `{"type":"text","text":"Run the shell command \"echo louter-ok\" and tell me its output."}`
		summary = `{"type":"text","text":"Summary of the conversation so far:\n\nThe command printed: louter-ok\n"}`
	)
	tests := []struct {
		name, parts string
		wantText    string // else a call to Bash
	}{
		{"summary after the prompt", prompt + "," + summary, "The command printed: louter-ok"},
		{"prompt after a summary", summary + "," + prompt, ""},
		{"prompt alone", prompt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"claude-test","max_tokens":100,"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}],` +
				`"messages":[{"role":"user","content":[` + tt.parts + `]}]}`
			d := decodeBody(t, translate.ProtocolAnthropic, serve(t, newMock(t, nil), newRequest(http.MethodPost, "/v1/messages", body)), false)
			if d.err != nil {
				t.Fatal(d.err)
			}
			calls, text := toolCalls(d.resp), partsText(d.resp, translate.PartText)
			if tt.wantText != "" && (text != tt.wantText || len(calls) != 0) {
				t.Errorf("text %q, calls %+v; want text %q", text, calls, tt.wantText)
			}
			if tt.wantText == "" && (len(calls) != 1 || calls[0].Name != "Bash" || !strings.Contains(calls[0].Arguments, "echo louter-ok")) {
				t.Errorf("text %q, calls %+v; want a call to Bash", text, calls)
			}
		})
	}
}

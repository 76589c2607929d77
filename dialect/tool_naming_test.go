package dialect_test

import (
	"reflect"
	"testing"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// TestToolNamingRestoresOnly: for a backend other than OpenAI Chat, the
// dialect decoder configured with translate.ToolNaming only restores the
// shortened tool names: thinking, signatures, redacted thinking and text
// that looks like markup pass through unchanged, streamed and whole.
func TestToolNamingRestoresOnly(t *testing.T) {
	const long = "mcp__claude_ai_Atlassian_Rovo__getAccessibleAtlassianResourcesForCurrentUser"
	for _, p := range []translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolOpenAIResponses, translate.ProtocolGemini} {
		naming := translate.ToolNaming(p, nil)
		short := naming.BackendToolName(long)
		req := &translate.Request{Tools: []translate.Tool{{Name: long}, {Name: "get_time"}}}
		cfg := dialect.Config{Dialect: naming, Request: req}
		text := `<think>not reasoning</think> <tool_call>{"name":"get_time","arguments":{}}</tool_call>`
		backend := &translate.Response{ID: "m1", Model: "x", StopReason: translate.StopToolUse, Parts: []translate.Part{
			{Type: translate.PartThinking, Text: "hmm", Signature: "sig"},
			{Type: translate.PartRedactedThinking, Signature: "opaque"},
			{Type: translate.PartText, Text: text},
			{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_1", Name: short, Arguments: `{"q":1}`}},
		}}
		want := *backend
		want.Parts = append([]translate.Part(nil), backend.Parts...)
		want.Parts[3] = translate.Part{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "toolu_1", Name: long, Arguments: `{"q":1}`}}

		got := dialect.Response(backend, cfg)
		if !reflect.DeepEqual(got.Parts, want.Parts) || got.StopReason != translate.StopToolUse {
			t.Errorf("%s whole: %s", p, dialectDumpParts(got.Parts))
		}
		evs := dialectRun(translate.ResponseEvents(nil, backend), cfg)
		var acc translate.Accumulator
		for i := range evs {
			acc.Add(&evs[i])
		}
		streamed, rerr := acc.Result()
		if rerr != nil {
			t.Fatal(rerr)
		}
		if !reflect.DeepEqual(streamed.Parts, want.Parts) {
			t.Errorf("%s streamed: %s", p, dialectDumpParts(streamed.Parts))
		}
		// Without a shortened name there is nothing to restore: no wrapper.
		plain := &translate.Request{Tools: []translate.Tool{{Name: "get_time"}}}
		inner := &dialectReplay{}
		if dec := dialect.NewDecoder(inner, dialect.Config{Dialect: naming, Request: plain}); dec != inner {
			t.Errorf("%s: a request without long names is wrapped", p)
		}
	}
}

package dialect_test

import (
	"strings"
	"testing"

	"github.com/louter/louter/dialect"
	"github.com/louter/louter/translate"
)

// TestContentParserPasses: Passes says a piece of content would come back
// whole as text only where Feed does give it back so; in particular not
// while the start of a marker is held (a call split across deltas), not
// for a piece holding a '<', and not before the content's opening is
// known.
func TestContentParserPasses(t *testing.T) {
	tools := dialect.ContentConfig{Tools: dialectTools}
	for _, tc := range []struct {
		name   string
		cfg    dialect.ContentConfig
		before []string // fed first
		piece  string
		passes bool
	}{
		{"start of the content", tools, nil, "Hello", false},
		{"text", tools, []string{"Hello"}, " world", true},
		{"a marker's start held", tools, []string{"Let me run it. <tool"}, "_call>", false},
		{"a '<' in the piece", tools, []string{"Hello"}, " a < b", false},
		{"inside a call", tools, []string{"Hi <tool_call>\n{\"name\":"}, "\"get_time\"", false},
		{"after a call", tools, []string{"Hi <tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n</tool_call>"}, "bye", false},
		{"inside <think>", tools, []string{"<think>"}, "hmm", false},
		{"plain, no markers", dialect.ContentConfig{ToolCalls: translate.ToolCallsNative, Reasoning: translate.ReasoningFormatFields}, nil, "a < b", true},
	} {
		p := dialect.NewContentParser(tc.cfg)
		for _, s := range tc.before {
			p.Feed(nil, s)
		}
		if got := p.Passes(tc.piece); got != tc.passes {
			t.Errorf("%s: Passes(%q) = %v, want %v", tc.name, tc.piece, got, tc.passes)
		}
		if !tc.passes {
			continue
		}
		// Where it passes, Feed would give the piece back whole.
		segs := p.Feed(nil, tc.piece)
		if len(segs) != 1 || segs[0].Kind != dialect.SegmentText || segs[0].Text != tc.piece {
			t.Errorf("%s: Feed(%q) = %+v, not the piece as text", tc.name, tc.piece, segs)
		}
	}
}

// TestDialectTextFastPathSplitCall: text deltas that pass straight
// through do not keep a call whose marker is split across deltas from
// being parsed, nor a stream's error from ending it.
func TestDialectTextFastPathSplitCall(t *testing.T) {
	cfg := dialect.Config{Request: &translate.Request{Tools: dialectTools}}
	text := func(s string) translate.Event {
		return translate.Event{Type: translate.EventBlockDelta, Block: translate.BlockText, Text: s}
	}
	head := []translate.Event{
		{Type: translate.EventMessageStart, ID: "chatcmpl-1", Model: "m"},
		{Type: translate.EventBlockStart, Block: translate.BlockText},
		text("Let me"), text(" check. <"), text("tool_call>\n{\"name\": \"get_time\", "), text("\"arguments\": {}}\n</tool_call"), text(">"),
	}
	stop := []translate.Event{
		{Type: translate.EventBlockStop, Block: translate.BlockText},
		{Type: translate.EventMessageStop, Stop: translate.StopToolUse},
	}
	evs := dialectRun(append(head, stop...), cfg)
	var prose strings.Builder
	calls := 0
	for _, ev := range evs {
		switch {
		case ev.Type == translate.EventBlockStart && ev.Block == translate.BlockToolCall:
			calls++
			if ev.Name != "get_time" {
				t.Errorf("call of %q", ev.Name)
			}
		case ev.Type == translate.EventBlockDelta && ev.Block == translate.BlockText:
			prose.WriteString(ev.Text)
		}
	}
	if calls != 1 || prose.String() != "Let me check. " {
		t.Fatalf("%d calls, text %q:\n%s", calls, prose.String(), dialectDumpEvents(evs))
	}

	// An error after text that went straight through ends the stream.
	failed := dialectRun(append(head[:4:4], translate.Event{Type: translate.EventError, Err: &translate.Error{Status: 500, Message: "boom"}}), cfg)
	if last := failed[len(failed)-1]; last.Type != translate.EventError {
		t.Fatalf("the stream ends with %s:\n%s", last.Type, dialectDumpEvents(failed))
	}
}

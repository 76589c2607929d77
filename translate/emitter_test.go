package translate

import (
	"fmt"
	"strings"
	"testing"
)

// evString renders events compactly for comparison.
func evString(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		switch e.Type {
		case EventMessageStart:
			fmt.Fprintf(&b, "start(%s) ", e.ID)
		case EventBlockStart:
			fmt.Fprintf(&b, "open%d:%s%s ", e.Index, e.Block, e.Name)
		case EventBlockDelta:
			if e.Signature != "" {
				fmt.Fprintf(&b, "sig%d=%s ", e.Index, e.Signature)
			} else {
				fmt.Fprintf(&b, "d%d=%s ", e.Index, e.Text)
			}
		case EventBlockStop:
			fmt.Fprintf(&b, "close%d ", e.Index)
		case EventUsage:
			fmt.Fprintf(&b, "usage(%d/%d) ", e.Usage.InputTokens, e.Usage.OutputTokens)
		case EventMessageStop:
			fmt.Fprintf(&b, "stop(%s) ", e.Stop)
		case EventError:
			fmt.Fprintf(&b, "error(%d) ", e.Err.Status)
		}
	}
	return strings.TrimSpace(b.String())
}

func TestEmitter(t *testing.T) {
	tests := []struct {
		name string
		run  func(e *Emitter, d []Event) []Event
		want string
	}{
		{
			name: "text then stop",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Start(d, "m1", "x", nil)
				d = e.Text(d, "a")
				d = e.Text(d, "")
				d = e.Text(d, "b")
				return e.Stop(d, StopEndTurn, "", nil)
			},
			want: "start(m1) open0:text d0=a d0=b close0 stop(end_turn)",
		},
		{
			name: "implicit start, thinking, signature, text",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Thinking(d, "hm")
				d = e.Signature(d, "SIG")
				d = e.Text(d, "ok")
				return e.Stop(d, "", "", nil)
			},
			want: "start() open0:thinking d0=hm sig0=SIG close0 open1:text d1=ok close1 stop(end_turn)",
		},
		{
			name: "zero-argument tool call gets {} and tool use is derived",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Text(d, "calling")
				d = e.ToolStart(d, "c1", "ls")
				d = e.ToolStart(d, "c2", "pwd")
				d = e.ToolArgs(d, `{"a"`)
				d = e.ToolArgs(d, `:1}`)
				return e.Stop(d, StopEndTurn, "", nil)
			},
			want: "start() open0:text d0=calling close0 open1:tool_callls d1={} close1 open2:tool_callpwd d2={\"a\" d2=:1} close2 stop(tool_use)",
		},
		{
			name: "max tokens mid tool call keeps the reason",
			run: func(e *Emitter, d []Event) []Event {
				d = e.ToolStart(d, "c1", "f")
				d = e.ToolArgs(d, `{"x":`)
				return e.Stop(d, StopMaxTokens, "", nil)
			},
			want: "start() open0:tool_callf d0={\"x\": close0 stop(max_tokens)",
		},
		{
			name: "nothing after the end",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Text(d, "a")
				d = e.Stop(d, StopEndTurn, "", nil)
				d = e.Text(d, "late")
				d = e.Fail(d, BadRequest("late"))
				return e.Stop(d, StopEndTurn, "", nil)
			},
			want: "start() open0:text d0=a close0 stop(end_turn)",
		},
		{
			name: "cut stream ends in an error",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Text(d, "par")
				return e.End(d)
			},
			want: "start() open0:text d0=par error(502)",
		},
		{
			name: "usage carried to the stop",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Start(d, "m", "x", &Usage{InputTokens: 5})
				d = e.SetUsage(d, Usage{InputTokens: 5, OutputTokens: 3})
				d = e.Stop(d, StopEndTurn, "", nil)
				if u := d[len(d)-1].Usage; u == nil || u.OutputTokens != 3 {
					panic("usage not carried")
				}
				return d
			},
			want: "start(m) usage(5/3) stop(end_turn)",
		},
		{
			name: "stray tool args without a tool call are ignored",
			run: func(e *Emitter, d []Event) []Event {
				d = e.ToolArgs(d, "x")
				return e.Stop(d, StopEndTurn, "", nil)
			},
			want: "start() stop(end_turn)",
		},
		{
			name: "redacted thinking is a whole block",
			run: func(e *Emitter, d []Event) []Event {
				d = e.Redacted(d, "OPAQUE")
				return e.Stop(d, StopEndTurn, "", nil)
			},
			want: "start() open0:redacted_thinking close0 stop(end_turn)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Emitter
			got := evString(tt.run(&e, nil))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAccumulatorRoundTrip(t *testing.T) {
	resp := &Response{
		ID:    "msg_1",
		Model: "m",
		Parts: []Part{
			{Type: PartThinking, Text: "think", Signature: "sig"},
			{Type: PartRedactedThinking, Signature: "opaque"},
			{Type: PartText, Text: "hello"},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "t1", Name: "f", Arguments: `{"a":1}`}},
			{Type: PartToolCall, ToolCall: &ToolCall{ID: "t2", Name: "g", Arguments: "{}"}},
		},
		StopReason: StopToolUse,
		Usage:      Usage{InputTokens: 10, OutputTokens: 4, CacheReadTokens: 2},
	}
	var acc Accumulator
	for _, ev := range ResponseEvents(nil, resp) {
		acc.Add(&ev)
	}
	got, err := acc.Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got.Parts) == "" || len(got.Parts) != len(resp.Parts) {
		t.Fatalf("parts: got %d, want %d", len(got.Parts), len(resp.Parts))
	}
	for i := range resp.Parts {
		w, g := resp.Parts[i], got.Parts[i]
		if w.Type != g.Type || w.Text != g.Text || w.Signature != g.Signature {
			t.Errorf("part %d: got %+v, want %+v", i, g, w)
		}
		if w.ToolCall != nil && *w.ToolCall != *g.ToolCall {
			t.Errorf("part %d tool call: got %+v, want %+v", i, *g.ToolCall, *w.ToolCall)
		}
	}
	if got.ID != resp.ID || got.StopReason != resp.StopReason || got.Usage != resp.Usage {
		t.Errorf("got %+v", got)
	}
}

func TestAccumulatorIncomplete(t *testing.T) {
	var acc Accumulator
	var e Emitter
	for _, ev := range e.Text(nil, "partial") {
		acc.Add(&ev)
	}
	if _, err := acc.Result(); err == nil || err.Status != 502 {
		t.Fatalf("an unfinished stream must be an error, got %v", err)
	}
	acc = Accumulator{}
	for _, ev := range e.Fail(nil, NewError(429, "slow down")) {
		acc.Add(&ev)
	}
	if _, err := acc.Result(); err == nil || err.Kind != ErrRateLimit {
		t.Fatalf("error event: got %v", err)
	}
}

// TestEmitterDeltaClearsReusedSlot feeds the emitter a slice whose spare
// capacity holds an earlier call's events, as decoders reuse one slice per
// upstream event: a delta written in such a slot must carry nothing of
// the event that was there.
func TestEmitterDeltaClearsReusedSlot(t *testing.T) {
	stale := Event{Type: EventMessageStop, Index: 7, Block: BlockRedactedThinking, ID: "id", Model: "m", Name: "n",
		Text: "old", Signature: "sig", Server: &ServerToolUse{}, Citation: &Citation{URL: "u"}, Usage: &Usage{InputTokens: 1},
		Stop: StopMaxTokens, StopSequence: "s", Err: &Error{Message: "e"}}
	for _, tc := range []struct {
		name  string
		block BlockType
		emit  func(e *Emitter, dst []Event) []Event
	}{
		{"text", BlockText, func(e *Emitter, dst []Event) []Event { return e.Text(dst, "t") }},
		{"thinking", BlockThinking, func(e *Emitter, dst []Event) []Event { return e.Thinking(dst, "t") }},
		{"tool args", BlockToolCall, func(e *Emitter, dst []Event) []Event { return e.ToolArgs(dst, "t") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e Emitter
			dst := e.Start(nil, "", "", nil)
			dst = e.openBlock(dst, tc.block, "", "", "")
			buf := make([]Event, 1, 4)
			for i := range buf[:cap(buf)] {
				buf[:cap(buf)][i] = stale
			}
			got := tc.emit(&e, buf[:0])
			want := Event{Type: EventBlockDelta, Index: 0, Block: tc.block, Text: "t"}
			if len(got) != 1 || got[0] != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			// At capacity, the slot is a new one.
			full := append(make([]Event, 0, 1), stale)
			if got := tc.emit(&e, full); len(got) != 2 || got[1] != want {
				t.Errorf("appended past capacity: got %+v, want %+v", got[1:], want)
			}
		})
	}
}

package translate

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// compactRoute translates body (an Anthropic request) for an OpenAI Chat
// backend with summarize.
func compactRoute(t *testing.T, body string, summarize Summarizer) ([]byte, *Request, error) {
	t.Helper()
	client, _ := Lookup(ProtocolAnthropic)
	backend, _ := Lookup(ProtocolOpenAIChat)
	return TranslateRequest([]byte(body), nil, &RequestRoute{Client: client, Backend: backend, Model: "m", BackendModel: "m", Summarize: summarize})
}

// streamFrames is an encoded stream, frame by frame.
type streamFrames struct{ names, data []string }

func (f *streamFrames) WriteFrame(name string, data []byte) {
	f.names = append(f.names, name)
	f.data = append(f.data, string(data))
}

func TestCompactEditPastTrigger(t *testing.T) {
	cm := `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000},"instructions":"Keep file paths."}]}`
	var hist *Request
	var asked string
	summarize := func(h *Request, instructions string) (string, error) {
		hist, asked = h, instructions
		return "SUMMARY: read /f0../f2", nil
	}
	out, creq, err := compactRoute(t, toolSession(3, 4000, cm, "Read"), summarize)
	if err != nil {
		t.Fatal(err)
	}
	// The summary is asked for the history before the newest user turn
	// ("yes"), with the edit's instructions.
	if hist == nil || len(hist.Messages) != 8 || hist.ContextManagement != nil || asked != "Keep file paths." {
		t.Fatalf("summarised %d messages (%+v), instructions %q", len(hist.Messages), hist.ContextManagement, asked)
	}
	if last := hist.Messages[len(hist.Messages)-1]; last.Role != RoleAssistant || last.Parts[0].Text != "done?" {
		t.Errorf("history ends with %+v, want the assistant's done?", last)
	}
	// The backend gets the summary in place of that history.
	msgs := gjson.GetBytes(out, "messages").Array()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Raw, "SUMMARY: read /f0../f2") || !strings.Contains(msgs[0].Raw, "yes") || strings.Contains(string(out), "xxxx") {
		t.Errorf("backend messages = %s", gjson.GetBytes(out, "messages").Raw)
	}
	cmg := creq.ContextManagement
	if cmg.Compacted == nil || len(cmg.Applied) != 1 || cmg.Applied[0].Type != EditCompact || cmg.Applied[0].ClearedInputTokens < 2000 {
		t.Fatalf("context management = %+v", cmg)
	}

	// The answer: the compaction block first, applied_edits naming the edit.
	c, _ := Lookup(ProtocolAnthropic)
	resp, err := c.EncodeResponse(&Response{ID: "msg_1", Model: "m", Parts: []Part{{Type: PartText, Text: "ok"}}, StopReason: StopEndTurn}, creq)
	if err != nil {
		t.Fatal(err)
	}
	g := gjson.ParseBytes(resp)
	if got := g.Get("content").Raw; got != `[{"type":"compaction","content":"SUMMARY: read /f0../f2"},{"type":"text","text":"ok"}]` {
		t.Errorf("content = %s", got)
	}
	want := `[{"type":"compact_20260112","cleared_input_tokens":` + g.Get("context_management.applied_edits.0.cleared_input_tokens").Raw + `}]`
	if got := g.Get("context_management.applied_edits").Raw; got != want || g.Get("context_management.applied_edits.0.cleared_input_tokens").Int() < 2000 {
		t.Errorf("applied_edits = %s", got)
	}

	// A stream: the block before the model's, which are numbered on.
	var f streamFrames
	enc := c.NewStreamEncoder(creq)
	for _, ev := range []Event{
		{Type: EventMessageStart, ID: "msg_1"},
		{Type: EventBlockStart, Index: 0, Block: BlockText},
		{Type: EventBlockDelta, Index: 0, Block: BlockText, Text: "ok"},
		{Type: EventBlockStop, Index: 0},
		{Type: EventMessageStop, Stop: StopEndTurn},
	} {
		enc.Encode(&f, &ev)
	}
	if got := strings.Join(f.names, " "); got != "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop" {
		t.Fatalf("frames = %s", got)
	}
	for i, want := range []string{
		`{"type":"content_block_start","index":0,"content_block":{"type":"compaction","content":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"SUMMARY: read /f0../f2"}}`,
		`{"type":"content_block_stop","index":0}`,
	} {
		if f.data[1+i] != want {
			t.Errorf("frame %d = %s, want %s", 1+i, f.data[1+i], want)
		}
	}
	if gjson.Get(f.data[4], "index").Int() != 1 || gjson.Get(f.data[5], "index").Int() != 1 {
		t.Errorf("the model's block: %s %s, want index 1", f.data[4], f.data[5])
	}
	if gjson.Get(f.data[7], "context_management.applied_edits.0.type").Str != EditCompact {
		t.Errorf("message_delta = %s", f.data[7])
	}
}

func TestCompactEditPause(t *testing.T) {
	cm := `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000},"pause_after_compaction":true}]}`
	_, creq, err := compactRoute(t, toolSession(3, 4000, cm, "Read"), func(*Request, string) (string, error) { return "S", nil })
	if err != nil {
		t.Fatal(err)
	}
	if !creq.ContextManagement.Paused || creq.ContextManagement.Compacted == nil {
		t.Fatalf("context management = %+v, want a paused compaction", creq.ContextManagement)
	}
	// The answer the caller makes of it: the block alone, stop reason
	// compaction.
	c, _ := Lookup(ProtocolAnthropic)
	resp, err := c.EncodeResponse(&Response{StopReason: StopCompaction}, creq)
	if err != nil {
		t.Fatal(err)
	}
	if g := gjson.ParseBytes(resp); g.Get("content").Raw != `[{"type":"compaction","content":"S"}]` || g.Get("stop_reason").Str != "compaction" {
		t.Errorf("answer = %s", resp)
	}
	// pause_after_compaction false: no pause.
	cm = strings.Replace(cm, "true", "false", 1)
	if _, creq, err = compactRoute(t, toolSession(3, 4000, cm, "Read"), func(*Request, string) (string, error) { return "S", nil }); err != nil || creq.ContextManagement.Paused {
		t.Errorf("pause false: %v, %+v", err, creq.ContextManagement)
	}
}

func TestCompactEditRefusals(t *testing.T) {
	summarized := false
	ok := func(*Request, string) (string, error) { summarized = true; return "S", nil }
	failed := &Error{Status: 429, Kind: ErrRateLimit, Message: "slow down"}
	for _, tt := range []struct {
		name, cm  string
		summarize Summarizer
		status    int
		param     string
	}{
		{"no summarizer", `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}]}`, nil, 400, "context_management.edits.0"},
		{"pause not a boolean", `{"edits":[{"type":"compact_20260112","pause_after_compaction":"yes"}]}`, ok, 400, "context_management.edits.0.pause_after_compaction"},
		{"instructions not a string", `{"edits":[{"type":"compact_20260112","instructions":1}]}`, ok, 400, "context_management.edits.0.instructions"},
		{"the summary failed", `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}]}`, func(*Request, string) (string, error) { return "", failed }, 429, ""},
		{"the summary failed otherwise", `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}]}`, func(*Request, string) (string, error) { return "", errors.New("boom") }, 502, "context_management.edits.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			summarized = false
			_, _, err := compactRoute(t, toolSession(3, 4000, tt.cm, "Read"), tt.summarize)
			var e *Error
			if !errors.As(err, &e) || e.Status != tt.status || e.Param != tt.param {
				t.Fatalf("error = %v, want %d for %q", err, tt.status, tt.param)
			}
			if summarized {
				t.Error("the model was asked for a summary")
			}
		})
	}
	// Below the trigger, and with no history before the newest user turn,
	// nothing is summarised or reported.
	for _, body := range []string{
		toolSession(3, 10, `{"edits":[{"type":"compact_20260112"}]}`, "Read"),
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("x", 8000) + `"}],"context_management":{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}]}}`,
	} {
		summarized = false
		_, creq, err := compactRoute(t, body, ok)
		if err != nil || summarized || creq.ContextManagement.Compacted != nil || len(creq.ContextManagement.Applied) != 0 {
			t.Errorf("err %v, summarised %v, %+v", err, summarized, creq.ContextManagement)
		}
	}
}

// TestCountContext: a token count applies the clearing edits as the
// request would, and leaves a compaction past its trigger out instead of
// refusing it (no model is asked for a summary); the request before the
// edits is returned for the original count, unchanged by them.
func TestCountContext(t *testing.T) {
	c, _ := Lookup(ProtocolAnthropic)
	const (
		compact   = `{"type":"compact_20260112","trigger":{"type":"input_tokens","value":1000}}`
		clearUses = `{"type":"clear_tool_uses_20250919","trigger":{"type":"tool_uses","value":2},"keep":{"type":"tool_uses","value":1}}`
		clearAll  = `{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":0}}`
	)
	for _, tt := range []struct {
		name, edits   string
		calls         string // clearedCalls after the edits
		applied       int    // edits reported
		thinkingKept  int
		refusedByEdit bool // EditContext without a summarizer refuses it
	}{
		{"compaction past its trigger", compact, "kkk", 0, 3, true},
		{"clearing, then compaction", clearAll + "," + clearUses + "," + compact, "cck", 2, 0, true},
		{"clearing alone", clearUses, "cck", 1, 3, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(toolSession(3, 4000, `{"edits":[`+tt.edits+`]}`, "Read"))
			req, err := c.DecodeRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			full := roughTokens(req)
			original, e := CountContext(req, ProtocolOpenAIChat, ContextAuto, nil)
			if e != nil || original == nil {
				t.Fatalf("CountContext: %v, %v", original, e)
			}
			cm := req.ContextManagement
			if got := clearedCalls(req); got != tt.calls || len(cm.Applied) != tt.applied || cm.Compacted != nil || cm.Raw != nil {
				t.Errorf("calls %s, applied %+v, compacted %v: want %s and %d edits, no compaction", got, cm.Applied, cm.Compacted, tt.calls, tt.applied)
			}
			if n := thinkingBlocks(req); n != tt.thinkingKept {
				t.Errorf("%d thinking blocks kept, want %d", n, tt.thinkingKept)
			}
			if got := clearedCalls(original); got != "kkk" || thinkingBlocks(original) != 3 || roughTokens(original) != full {
				t.Errorf("the original request was edited: calls %s", got)
			}
			// The request itself would have been refused without a
			// summarizer.
			again, _ := c.DecodeRequest(body)
			if e := EditContext(again, ProtocolOpenAIChat, ContextAuto, nil, nil); (e != nil) != tt.refusedByEdit {
				t.Errorf("EditContext: %v, want refused %v", e, tt.refusedByEdit)
			}
		})
	}
	// No original where louter applies no edits.
	for _, tt := range []struct {
		body    string
		backend Protocol
	}{
		{toolSession(3, 4000, "", "Read"), ProtocolOpenAIChat},
		{toolSession(3, 4000, `{"edits":[`+clearUses+`]}`, "Read"), ProtocolAnthropic},
	} {
		req, _ := c.DecodeRequest([]byte(tt.body))
		if original, e := CountContext(req, tt.backend, ContextAuto, nil); original != nil || e != nil {
			t.Errorf("%s backend: original %v, %v; want none", tt.backend, original, e)
		}
	}
}

func thinkingBlocks(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Type == PartThinking {
				n++
			}
		}
	}
	return n
}

package tokencount

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/louter/louter/translate"
)

func TestCountText(t *testing.T) {
	tests := []struct {
		text string
		enc  Encoding
		want int
	}{
		{"", O200kBase, 0},
		{"hello world", O200kBase, 2},
		{"hello world", Cl100kBase, 2},
		{"antidisestablishmentarianism", Cl100kBase, 6},
	}
	for _, tt := range tests {
		if got := CountText(tt.text, tt.enc); got != tt.want {
			t.Errorf("CountText(%q, %s) = %d, want %d", tt.text, tt.enc, got, tt.want)
		}
	}
}

// TestCountWhatTheBackendSees checks that each kind of part adds to the
// count, and that reasoning of finished turns does not.
func TestCountWhatTheBackendSees(t *testing.T) {
	text := func(s string) translate.Part { return translate.Part{Type: translate.PartText, Text: s} }
	base := &translate.Request{Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{text("hi")}}}}
	sentence := "The quick brown fox jumps over the lazy dog."
	tests := []struct {
		name string
		edit func(r *translate.Request)
		more bool // the count must grow
	}{
		{"system", func(r *translate.Request) { r.System = []translate.Part{text(sentence)} }, true},
		{"tool definition", func(r *translate.Request) {
			r.Tools = []translate.Tool{{Name: "Read", Description: sentence, Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
		}, true},
		{"tool call and result", func(r *translate.Request) {
			r.Messages = append(r.Messages,
				translate.Message{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartToolCall, ToolCall: &translate.ToolCall{ID: "1", Name: "Read", Arguments: `{"path":"/etc/hosts"}`}}}},
				translate.Message{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartToolResult, ToolResult: &translate.ToolResult{CallID: "1", Content: []translate.Part{text(sentence)}}}}})
		}, true},
		{"image", func(r *translate.Request) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, translate.Part{Type: translate.PartImage, Media: &translate.Media{URL: "https://example.com/a.png"}})
		}, true},
		{"thinking of the turn in progress", func(r *translate.Request) {
			r.Messages = append(r.Messages, translate.Message{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartThinking, Text: sentence}}})
		}, true},
	}
	for name, backend := range map[string]*Framing{"anthropic": Anthropic, "openai": OpenAI, "gemini": Gemini} {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				req := *base
				req.Messages = append([]translate.Message(nil), base.Messages...)
				req.Messages[0].Parts = append([]translate.Part(nil), base.Messages[0].Parts...)
				before, beforeEst := Count(&req, backend, "m"), Estimate(&req, backend)
				tt.edit(&req)
				after, afterEst := Count(&req, backend, "m"), Estimate(&req, backend)
				if tt.more && (after <= before || afterEst <= beforeEst) {
					t.Errorf("count %d → %d, estimate %d → %d: want both to grow", before, after, beforeEst, afterEst)
				}
			})
		}
	}
}

func TestFinishedTurnsReasoningIsNotCounted(t *testing.T) {
	think := translate.Part{Type: translate.PartThinking, Text: "Let me think about this at some length before answering."}
	msgs := func(withThinking bool) []translate.Message {
		a := translate.Message{Role: translate.RoleAssistant, Parts: []translate.Part{{Type: translate.PartText, Text: "done"}}}
		if withThinking {
			a.Parts = append([]translate.Part{think}, a.Parts...)
		}
		return []translate.Message{
			{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: "q1"}}},
			a,
			{Role: translate.RoleUser, Parts: []translate.Part{{Type: translate.PartText, Text: "q2"}}},
		}
	}
	with := Count(&translate.Request{Messages: msgs(true)}, Anthropic, "")
	without := Count(&translate.Request{Messages: msgs(false)}, Anthropic, "")
	if with != without {
		t.Errorf("an earlier turn's thinking changed the count: %d vs %d", with, without)
	}
}

func TestEncodingFor(t *testing.T) {
	tests := []struct {
		name    string
		backend *Framing
		model   string
		want    *bpe
	}{
		{"openai", OpenAI, "gpt-4-turbo", cl100k},
		{"openai", OpenAI, "gpt-3.5-turbo", cl100k},
		{"openai", OpenAI, "gpt-4o-mini", o200k},
		{"openai", OpenAI, "gpt-4.1", o200k},
		{"openai", OpenAI, "gpt-5", o200k},
		{"anthropic", Anthropic, "gpt-4", o200k},
		{"gemini", Gemini, "gemini-2.5-pro", o200k},
	}
	for _, tt := range tests {
		if got := encodingFor(tt.backend, tt.model); got != tt.want {
			t.Errorf("encodingFor(%s, %s) = %s, want %s", tt.name, tt.model, got.enc, tt.want.enc)
		}
	}
}

// TestEstimatorsDoNotAllocate: the estimators may run on a chat request.
func TestEstimatorsDoNotAllocate(t *testing.T) {
	files := loadCorpus(t)
	req := files[0].req
	for name, f := range map[string]func(){
		"Estimate": func() { Estimate(req, OpenAI) },
		"Quick":    func() { Quick(req, OpenAI) },
	} {
		if n := testing.AllocsPerRun(10, f); n != 0 {
			t.Errorf("%s allocates %.0f times per request", name, n)
		}
	}
}

// TestCountConcurrently: the counters are shared by every request (run
// with -race).
func TestCountConcurrently(t *testing.T) {
	files := loadCorpus(t)
	req := files[len(files)-1].req // the captured Claude Code request
	want := Count(req, Anthropic, "")
	var wg sync.WaitGroup
	got := make([]int, 4)
	for i := range got {
		wg.Go(func() { got[i] = Count(req, Anthropic, "") })
	}
	wg.Wait()
	for i, n := range got {
		if n != want {
			t.Errorf("goroutine %d counted %d, want %d", i, n, want)
		}
	}
}

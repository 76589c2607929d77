package tokencount

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// bigRequest is a Claude-Code-sized request (~100 KB): the corpus's agent
// session with the turns of two more sessions (Go sources, JSON tool
// results) appended.
func bigRequest(b *testing.B) (*translate.Request, int) {
	b.Helper()
	body, err := os.ReadFile(corpusDir + "/agent_go_session.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"go_sources.json", "json_tool_results.json"} {
		more, err := os.ReadFile(corpusDir + "/" + name)
		if err != nil {
			b.Fatal(err)
		}
		msgs := gjson.GetBytes(body, "messages")
		extra := gjson.GetBytes(more, "messages")
		out := append([]byte(nil), body[:msgs.Index+len(msgs.Raw)-1]...)
		out = append(out, ',')
		out = append(out, bytes.TrimPrefix([]byte(extra.Raw), []byte("["))...)
		body = append(out, body[msgs.Index+len(msgs.Raw):]...)
	}
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	return req, len(body)
}

func BenchmarkCount(b *testing.B) {
	req, size := bigRequest(b)
	Count(req, Anthropic, "") // builds the vocabulary
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Count(req, Anthropic, "")
	}
}

func BenchmarkEstimate(b *testing.B) {
	req, size := bigRequest(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Estimate(req, Anthropic)
	}
}

func BenchmarkQuick(b *testing.B) {
	req, size := bigRequest(b)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Quick(req, Anthropic)
	}
}

// TestVocabularyOnce reports what building o200k_base's table costs the
// first count (go test -run TestVocabularyOnce -v): it happens once per
// process, and only in a process that counts.
func TestVocabularyOnce(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	CountText("warm up", O200kBase)
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("first o200k_base count: %v, heap %+d MiB", elapsed, (int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20)
	if CountText("warm up", O200kBase) != 2 {
		t.Errorf("o200k_base counts %q as %d tokens, want 2", "warm up", CountText("warm up", O200kBase))
	}
}

// BenchmarkQuickClaudeCode is Quick on issue 17's workload, a real ~100 KB
// Claude Code request (testdata/bench): what a translated stream's
// message_start and a route's tokens_above condition cost.
func BenchmarkQuickClaudeCode(b *testing.B) {
	body, err := os.ReadFile("../testdata/bench/claude_code_100k.json")
	if err != nil {
		b.Fatal(err)
	}
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	req, err := anth.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Quick(req, OpenAI)
	}
}

package translate

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextArenaKeep: every string the arena hands out keeps its bytes
// while later ones fill its chunk and the chunks after it, and the
// caller's buffer can be reused at once.
func TestTextArenaKeep(t *testing.T) {
	const chunk = 64
	var a textArena
	var got, want []string
	buf := make([]byte, 0, 64)
	for i := range 200 {
		n := i % 23 // 0 to 22: some over a quarter of the chunk
		buf = buf[:0]
		for j := range n {
			buf = append(buf, byte('a'+(i+j)%26))
		}
		want = append(want, string(buf))
		got = append(got, a.keep(buf, chunk))
		for j := range buf {
			buf[j] = '#' // the caller reuses its buffer
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestOpenAIChatStreamDeltaAllocs: a stream's text deltas share arena
// chunks instead of costing an allocation each.
func TestOpenAIChatStreamDeltaAllocs(t *testing.T) {
	d := openAIChatCodec{}.NewStreamDecoder()
	chunk := func(text string) []byte {
		return fmt.Appendf(nil, `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, text)
	}
	var dst []Event
	dst = d.Decode(dst[:0], "", chunk("start"))
	chunks := make([][]byte, 64)
	var want strings.Builder
	for i := range chunks {
		s := fmt.Sprintf(" word%d\n", i)
		want.WriteString(s)
		chunks[i] = chunk(s)
	}
	var text strings.Builder
	allocs := testing.AllocsPerRun(1, func() {
		for _, c := range chunks {
			dst = d.Decode(dst[:0], "", c)
			for _, ev := range dst {
				text.WriteString(ev.Text)
			}
		}
	})
	if text.String() != want.String()+want.String() { // AllocsPerRun runs it once more to warm up
		t.Fatalf("text = %q", text.String())
	}
	if allocs > 8 {
		t.Errorf("64 text deltas cost %v allocations, want at most 8", allocs)
	}
}

package streamtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/louter/louter/stream"
	"github.com/louter/louter/translate"
)

// dropEvent is an SSEParser that leaves out its n-th event (from 0).
type dropEvent struct {
	stream.SSEParser
	n, seen int
}

func (d *dropEvent) filter(fn func(string, []byte)) func(string, []byte) {
	return func(name string, data []byte) {
		if d.seen++; d.seen-1 != d.n {
			fn(name, data)
		}
	}
}

func (d *dropEvent) Feed(p []byte, fn func(string, []byte)) error {
	return d.SSEParser.Feed(p, d.filter(fn))
}
func (d *dropEvent) Close(fn func(string, []byte)) error { return d.SSEParser.Close(d.filter(fn)) }

// TestTranscodeMemo checks the memo the split tests rely on: a run whose
// framer hands the decoder something else than the reference run goes live
// at that call and gets what a plain transcoder gives.
func TestTranscodeMemo(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captured", "openai_chat_parallel_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	from := translate.ProtocolOpenAIChat
	for _, to := range translate.ClientProtocols() {
		memo, ref := NewTranscodeMemo(SSEFramer, SSEOutput, newStreamDecoder(from), newStreamEncoder(to), body)
		if got, live := memo.RunLive(SSEFramer(), SSEOutput(), [][]byte{body[:100], body[100:]}); !bytes.Equal(got, ref) || live != -1 {
			t.Errorf("%s: same events: went live at %d, output equal %v", to, live, bytes.Equal(got, ref))
		}
		for _, n := range []int{1, 3, 12, 22} { // each changes the output
			got, live := memo.RunLive(&dropEvent{n: n}, SSEOutput(), [][]byte{body})
			if live != n {
				t.Errorf("%s without event %d: went live at decoder call %d", to, n, live)
			}
			plain := stream.NewTranscoder(&dropEvent{n: n}, newStreamDecoder(from)(), newStreamEncoder(to)(), SSEOutput())
			want := append(bytes.Clone(plain.Write(body)), plain.Close()...)
			if !bytes.Equal(Normalize(got), Normalize(want)) {
				t.Errorf("%s without event %d:\n%s\n--- plain transcoder\n%s", to, n, Normalize(got), Normalize(want))
			}
			if bytes.Equal(Normalize(got), Normalize(ref)) {
				t.Errorf("%s without event %d: output unchanged, the test proves nothing", to, n)
			}
		}
	}
}

// keepingDecoder keeps each event's bytes past the call, the bug the
// reference run's poisoning shows.
type keepingDecoder struct{ last []byte }

func (k *keepingDecoder) Decode(dst []translate.Event, _ string, data []byte) []translate.Event {
	if k.last != nil {
		dst = append(dst, translate.Event{Type: translate.EventBlockDelta, Block: translate.BlockText, Text: string(k.last)})
	}
	k.last = data
	return dst
}

func (k *keepingDecoder) End(dst []translate.Event) []translate.Event { return dst }

func TestTranscodeMemoPoisons(t *testing.T) {
	body := []byte("data: one\n\ndata: two\n\n")
	memo, _ := NewTranscodeMemo(SSEFramer, SSEOutput, func() translate.StreamDecoder { return &keepingDecoder{} }, newStreamEncoder(translate.ProtocolAnthropic), body)
	if got := memo.decodes[1].events[0].Text; got == "one" {
		t.Errorf("kept bytes read %q after the call: not poisoned", got)
	}
}

// newStreamDecoder and newStreamEncoder return the codec factories a Memo
// needs.
func newStreamDecoder(p translate.Protocol) func() translate.StreamDecoder {
	c, _ := translate.Lookup(p)
	return c.NewStreamDecoder
}

func newStreamEncoder(p translate.Protocol) func() translate.StreamEncoder {
	c, _ := translate.Lookup(p)
	return func() translate.StreamEncoder {
		return c.NewStreamEncoder(&translate.Request{Model: "client-model", Stream: true, IncludeUsage: true})
	}
}

package stream

import (
	"strings"
	"testing"

	"github.com/louter/louter/translate"
)

// TestOutputReleaseBetweenWrites frames events, releasing the output after
// each write as the handler does, and checks that every write's bytes are
// whole and that a released output holds no buffer.
func TestOutputReleaseBetweenWrites(t *testing.T) {
	tests := []struct {
		name   string
		out    Output
		frames [][]string // data of the frames of each write
		want   []string   // the bytes of each write
	}{
		{"sse", &SSEOutput{}, [][]string{{"a", "b"}, {}, {"c"}}, []string{"data: a\n\ndata: b\n\n", "", "data: c\n\n"}},
		{"json array", &JSONArrayOutput{}, [][]string{{"1", "2"}, {}, {"3"}}, []string{"[1\n,\r\n2\n", "", ",\r\n3\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, frames := range tt.frames {
				tt.out.Reset()
				for _, f := range frames {
					tt.out.WriteFrame("", []byte(f))
				}
				if got := string(tt.out.Bytes()); got != tt.want[i] {
					t.Errorf("write %d: got %q, want %q", i, got, tt.want[i])
				}
				ReleaseOutput(tt.out)
				if b := tt.out.Bytes(); b != nil {
					t.Errorf("write %d: a released output still holds %q", i, b)
				}
			}
		})
	}
}

// TestPassWatcherRelease cuts a stream inside its events and releases the
// watcher after each write: the bytes forwarded must still be the stream,
// whole events at a time.
func TestPassWatcherRelease(t *testing.T) {
	const body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	for _, cut := range []int{1, 7, 30, 61, len(body) - 3} {
		w := NewPassWatcher(translate.ProtocolOpenAIChat, false)
		var got strings.Builder
		for _, chunk := range []string{body[:cut], body[cut:]} {
			got.Write(w.Write([]byte(chunk)))
			w.Release()
			if w.joined != nil {
				t.Fatalf("cut %d: a released watcher still holds a buffer", cut)
			}
		}
		tail, err := w.Close()
		got.Write(tail)
		if err != nil || got.String() != body {
			t.Errorf("cut %d: forwarded %q, error %v; want the whole stream", cut, got.String(), err)
		}
	}
}

// BenchmarkOutputWrite frames one event a write, as a paced stream does,
// with the buffer kept between writes or lent back after each: the cost of
// holding no buffer while waiting.
func BenchmarkOutputWrite(b *testing.B) {
	data := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word1 "}}`)
	for _, release := range []bool{false, true} {
		name := "kept"
		if release {
			name = "released"
		}
		b.Run(name, func(b *testing.B) {
			var o SSEOutput
			b.ReportAllocs()
			for b.Loop() {
				o.Reset()
				o.WriteFrame("content_block_delta", data)
				if release {
					o.Release()
				}
			}
		})
	}
}

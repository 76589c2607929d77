package stream_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/louter/louter/translate"
)

var passFuzzProtocols = [...]translate.Protocol{translate.ProtocolAnthropic, translate.ProtocolOpenAIChat, translate.ProtocolOpenAIResponses, translate.ProtocolGemini}

// FuzzPassWatcher holds the passthrough watcher to its promise on any
// input, cut anywhere: it never panics; the client gets a prefix of the
// body, the whole body when the stream ended properly, and otherwise one
// error event after the prefix, which the protocol's decoder reads as an
// error; and how the body was cut into writes changes nothing.
func FuzzPassWatcher(f *testing.F) {
	for i, file := range []string{"anthropic/stream_text_ping.sse", "anthropic/stream_cut.sse", "openai_chat/malformed_chunk.sse", "openai_chat/cut_stream.sse", "openai_responses/text.sse", "gemini/stream_text.sse", "gemini/stream_array.json"} {
		body, err := os.ReadFile(filepath.Join("..", "testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		mode := uint8([]int{0, 0, 1, 1, 2, 3, 3 | 4}[i])
		f.Add(body, mode, uint8(5))
	}
	f.Add([]byte("data: [DONE]"), uint8(1), uint8(1))
	f.Add([]byte("[{\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n]"), uint8(3|4), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, mode, size uint8) {
		proto := passFuzzProtocols[mode&3]
		jsonArray := mode&4 != 0 && proto == translate.ProtocolGemini // the only protocol that streams arrays
		whole, n, err := passWatch(proto, jsonArray, body, 0)
		if !bytes.Equal(whole[:n], body[:n]) {
			t.Fatalf("forwarded bytes differ from the body's first %d", n)
		}
		if err == nil {
			if n != len(body) || len(whole) != len(body) {
				t.Fatalf("a complete stream lost bytes: %d of %d forwarded", n, len(body))
			}
		} else {
			tail := whole[n:]
			if len(tail) == 0 {
				t.Fatal("a broken stream got no error event")
			}
			events := decodeAll(t, proto, jsonArray, tail)
			if len(events) == 0 || events[0].Type != translate.EventError {
				t.Fatalf("the appended tail is not an error event: %q", tail)
			}
		}
		// The tail may hold a fresh response id, and garbage after a
		// JSON array's end may be seen before or after the end,
		// depending on the writes; so only the forwarded part and
		// whether there was an error are compared.
		got, m, err2 := passWatch(proto, jsonArray, body, int(size%32)+1)
		if m != n || !bytes.Equal(got[:m], whole[:n]) || (err == nil) != (err2 == nil) {
			t.Fatalf("writes of %d bytes change the client stream", size%32+1)
		}
	})
}

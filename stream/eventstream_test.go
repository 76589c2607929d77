package stream

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// encodeMessages writes event-stream messages with the SDK's encoder: each
// item is {message-type, event/exception type, payload}.
func encodeMessages(t testing.TB, msgs ...[3]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range msgs {
		var h eventstream.Headers
		h.Set(":message-type", eventstream.StringValue(m[0]))
		switch m[0] {
		case "event":
			h.Set(":event-type", eventstream.StringValue(m[1]))
		case "exception":
			h.Set(":exception-type", eventstream.StringValue(m[1]))
		case "error":
			h.Set(":error-code", eventstream.StringValue(m[1]))
			h.Set(":error-message", eventstream.StringValue(m[2]))
		}
		h.Set(":content-type", eventstream.StringValue("application/json"))
		if err := enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(m[2])}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

var threeMessages = [][3]string{
	{"event", "chunk", `{"bytes":"eyJ0eXBlIjoicGluZyJ9","p":"abc"}`},
	{"event", "contentBlockDelta", "{\"contentBlockIndex\":0,\r\n\"delta\":{\"text\":\"Hi\"}}"},
	{"exception", "throttlingException", `{"message":"slow down"}`},
}

const threeMessagesSSE = "event: chunk\ndata: {\"bytes\":\"eyJ0eXBlIjoicGluZyJ9\",\"p\":\"abc\"}\n\n" +
	"event: contentBlockDelta\ndata: {\"contentBlockIndex\":0,\ndata: \"delta\":{\"text\":\"Hi\"}}\n\n" +
	"event: exception:throttlingException\ndata: {\"message\":\"slow down\"}\n\n"

// splitReader returns the body in two reads, split at i, then EOF.
type splitReader struct {
	parts [][]byte
}

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

// TestEventStreamSSESplitAnywhere re-frames a three-message body split at
// every byte offset into two reads, and read one byte at a time: the SSE
// must be the same whatever the split.
func TestEventStreamSSESplitAnywhere(t *testing.T) {
	body := encodeMessages(t, threeMessages...)
	for i := 0; i <= len(body); i++ {
		r := &splitReader{parts: [][]byte{bytes.Clone(body[:i]), bytes.Clone(body[i:])}}
		got, err := io.ReadAll(NewEventStreamSSE(io.NopCloser(r), 0))
		if err != nil || string(got) != threeMessagesSSE {
			t.Fatalf("split at %d: %v\n%q", i, err, got)
		}
	}
	got, err := io.ReadAll(NewEventStreamSSE(io.NopCloser(iotest.OneByteReader(bytes.NewReader(body))), 0))
	if err != nil || string(got) != threeMessagesSSE {
		t.Fatalf("one byte at a time: %v\n%q", err, got)
	}
}

// TestEventStreamSSEParses feeds the re-framed SSE to the SSE parser, the
// way the transcoder reads it: the event names and payloads survive.
func TestEventStreamSSEParses(t *testing.T) {
	got, _ := io.ReadAll(NewEventStreamSSE(io.NopCloser(bytes.NewReader(encodeMessages(t, threeMessages...))), 0))
	var p SSEParser
	var names, datas []string
	fn := func(name string, data []byte) { names, datas = append(names, name), append(datas, string(data)) }
	if err := p.Feed(got, fn); err != nil {
		t.Fatal(err)
	}
	want := []string{"chunk", "contentBlockDelta", "exception:throttlingException"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names %q", names)
	}
	if datas[1] != "{\"contentBlockIndex\":0,\n\"delta\":{\"text\":\"Hi\"}}" {
		t.Errorf("data %q", datas[1])
	}
}

// TestEventStreamSSEBroken: a corrupt checksum, a body cut inside a
// message, an oversized message and an error message each end the stream
// with one EventStreamError event, never a hang or a silent end.
func TestEventStreamSSEBroken(t *testing.T) {
	good := encodeMessages(t, threeMessages[0])
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-10] ^= 0xff // a payload byte: the message CRC fails
	badPrelude := bytes.Clone(good)
	badPrelude[9] ^= 0xff // the prelude CRC
	for _, tt := range []struct {
		name string
		body []byte
		max  int
		want string
	}{
		{"payload crc", append(bytes.Clone(good), corrupt...), 0, "checksum"},
		{"prelude crc", badPrelude, 0, "checksum"},
		{"cut", append(bytes.Clone(good), good[:len(good)-3]...), 0, "unexpected EOF"},
		{"cut in prelude", append(bytes.Clone(good), good[:5]...), 0, "unexpected EOF"},
		{"too large", good, 20, "size limit"},
		{"error message", encodeMessages(t, [3]string{"error", "InternalFailure", "boom"}), 0, `"code":"InternalFailure","message":"boom"`},
	} {
		got, err := io.ReadAll(NewEventStreamSSE(io.NopCloser(bytes.NewReader(tt.body)), tt.max))
		s := string(got)
		if err != nil || !strings.Contains(s, "event: "+EventStreamError+"\n") || !strings.Contains(s, tt.want) ||
			strings.Count(s, EventStreamError) != 1 || !strings.HasSuffix(s, "\n\n") {
			t.Errorf("%s: %v\n%q", tt.name, err, s)
		}
	}
}

// FuzzEventStreamSSE: any body ends (no hang, no panic), with bounded
// output, and every event the reader yields parses as SSE.
func FuzzEventStreamSSE(f *testing.F) {
	f.Add(encodeMessages(f, threeMessages...))
	f.Add(encodeMessages(f, [3]string{"error", "X", "y"}))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := io.ReadAll(NewEventStreamSSE(io.NopCloser(bytes.NewReader(body)), 1<<16))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 4*len(body)+1024 {
			t.Fatalf("%d bytes of SSE from %d", len(got), len(body))
		}
		var p SSEParser
		if err := p.Feed(got, func(string, []byte) {}); err != nil {
			t.Fatal(err)
		}
	})
}

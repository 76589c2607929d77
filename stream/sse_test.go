package stream

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type frame struct{ Name, Data string }

// collect feeds the chunks as a reader does, from one buffer overwritten
// between Feeds, so that data the parser keeps a view of past a Feed
// instead of a copy reads as garbage.
func collect(t *testing.T, p *SSEParser, chunks ...string) []frame {
	t.Helper()
	var got []frame
	fn := func(name string, data []byte) { got = append(got, frame{name, string(data)}) }
	var buf []byte
	scribble := func() {
		for i := range buf {
			buf[i] = 'X'
		}
	}
	for _, c := range chunks {
		buf = append(buf[:0], c...)
		if err := p.Feed(buf, fn); err != nil {
			t.Fatalf("Feed: %v", err)
		}
		scribble()
	}
	if err := p.Close(fn); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return got
}

func TestSSEParserFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []frame
	}{
		{"data only", "data: {\"a\":1}\n\n", []frame{{"", `{"a":1}`}}},
		{"named event", "event: message_start\ndata: {}\n\n", []frame{{"message_start", "{}"}}},
		{"no space after colon", "data:{}\n\n", []frame{{"", "{}"}}},
		{"CRLF", "event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []frame{{"x", "1"}, {"", "2"}}},
		{"CR only", "data: 1\r\rdata: 2\r\r", []frame{{"", "1"}, {"", "2"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\n\n", []frame{{"", "a\nb"}}},
		{"comments and id/retry ignored", ": ping\nid: 7\nretry: 100\ndata: x\n\n", []frame{{"", "x"}}},
		{"event without data is not dispatched", "event: ping\n\ndata: y\n\n", []frame{{"", "y"}}},
		{"name resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []frame{{"a", "1"}, {"", "2"}}},
		{"final line cut mid-line is discarded", "data: [DONE]\n\ndata: {\"a\":", []frame{{"", "[DONE]"}}},
		{"final event without blank line", "data: [DONE]\n", []frame{{"", "[DONE]"}}},
		{"bare JSON error line", "{\"error\":{\"code\":500}}\n\n", []frame{{"", `{"error":{"code":500}}`}}},
		{"empty body", "", nil},
		{"data with colons", "data: {\"k\":\"a:b\"}\n\n", []frame{{"", `{"k":"a:b"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, &SSEParser{}, tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSSEParserSplitAnywhere feeds a body split at every byte boundary, and
// byte by byte, and expects the events of the whole body every time.
func TestSSEParserSplitAnywhere(t *testing.T) {
	body := "event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"h\\u00e9llo\"}}]}\n\n" +
		"data: line1\rdata: line2\r\r" +
		"data: [DONE]\n\n"
	want := collect(t, &SSEParser{}, body)
	if len(want) != 4 {
		t.Fatalf("whole body gave %d events, want 4: %q", len(want), want)
	}
	for i := 0; i <= len(body); i++ {
		got := collect(t, &SSEParser{}, body[:i], body[i:])
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: got %q, want %q", i, got, want)
		}
	}
	bytewise := make([]string, len(body))
	for i := range body {
		bytewise[i] = body[i : i+1]
	}
	if got := collect(t, &SSEParser{}, bytewise...); !reflect.DeepEqual(got, want) {
		t.Fatalf("byte by byte: got %q, want %q", got, want)
	}
}

// TestSSEParserChunkReused splits at every byte boundary a body whose
// events' data the parser views in the chunk (a single data line), copies
// when a Feed ends inside the event, or joins with more data lines or a
// bare JSON line that follow (collect overwrites each chunk once fed).
func TestSSEParserChunkReused(t *testing.T) {
	body := "data: {\"a\":1}\n\n" +
		"data: first\ndata: second\n\n" +
		"data: x\n{\"bare\":\"y:z\"}\n\n" +
		"event: e\ndata:\ndata: after empty\n\n" +
		"data: [DONE]\n\n"
	want := []frame{{"", `{"a":1}`}, {"", "first\nsecond"}, {"", "x\n{\"bare\":\"y:z\"}"}, {"e", "\nafter empty"}, {"", "[DONE]"}}
	for i := 0; i <= len(body); i++ {
		if got := collect(t, &SSEParser{}, body[:i], body[i:]); !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: got %q, want %q", i, got, want)
		}
	}
}

func TestSSEParserEventTooLarge(t *testing.T) {
	p := &SSEParser{MaxEventSize: 64}
	noop := func(string, []byte) {}
	if err := p.Feed([]byte("data: "+strings.Repeat("x", 100)), noop); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("unterminated long line: err = %v, want ErrEventTooLarge", err)
	}
	p = &SSEParser{MaxEventSize: 64}
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = p.Feed([]byte("data: 0123456789\n"), noop)
	}
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many data lines: err = %v, want ErrEventTooLarge", err)
	}
}

// TestSSEParserMemoryFlat checks that a long stream does not grow the
// parser's buffers beyond the largest event.
func TestSSEParserMemoryFlat(t *testing.T) {
	p := &SSEParser{}
	n := 0
	fn := func(string, []byte) { n++ }
	for i := 0; i < 10000; i++ {
		if err := p.Feed(fmt.Appendf(nil, "data: {\"i\":%d}\n\n", i), fn); err != nil {
			t.Fatal(err)
		}
	}
	if n != 10000 {
		t.Fatalf("dispatched %d events, want 10000", n)
	}
	if c := cap(p.data) + cap(p.line) + cap(p.name); c > 256 {
		t.Fatalf("parser holds %d bytes of buffers after 10000 small events", c)
	}
}

func TestAppendSSE(t *testing.T) {
	tests := []struct {
		name, event, data, want string
	}{
		{"named", "message_stop", `{"type":"message_stop"}`, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"unnamed", "", "[DONE]", "data: [DONE]\n\n"},
		{"multi-line", "", "a\nb", "data: a\ndata: b\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendSSE(nil, tt.event, []byte(tt.data)))
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			// What we write, we read back.
			back := collect(t, &SSEParser{}, got)
			if len(back) != 1 || back[0].Name != tt.event || back[0].Data != tt.data {
				t.Errorf("round trip: %q", back)
			}
		})
	}
}

// TestSSEOutputRelease checks that an output released to the pool frames
// correctly again, and that a pooled buffer comes back empty.
func TestSSEOutputRelease(t *testing.T) {
	var o SSEOutput
	o.WriteFrame("a", []byte("1"))
	o.Release()
	if o.Bytes() != nil {
		t.Fatalf("bytes after release: %q", o.Bytes())
	}
	var p SSEOutput
	p.WriteFrame("", []byte("x\ny"))
	o.WriteFrame("b", []byte("2"))
	if got := string(o.Bytes()); got != "event: b\ndata: 2\n\n" {
		t.Fatalf("reused output: %q", got)
	}
	if got := string(p.Bytes()); got != "data: x\ndata: y\n\n" {
		t.Fatalf("other output: %q", got)
	}
	big := make([]byte, 10, maxPooledOutput+1)
	returnOutput(&big) // too large: not kept
	if b := borrowOutput(); len(*b) != 0 || cap(*b) > maxPooledOutput {
		t.Fatalf("pooled buffer len %d cap %d", len(*b), cap(*b))
	}
}

package record

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testExchange(id string, body string) *Exchange {
	c := NewCapture(time.Unix(1700000000, 0), id, Endpoint{Protocol: "anthropic", Path: "/v1/messages"}, 0, nil)
	c.ClientRequest("POST", "/v1/messages", "", nil, []byte(body))
	return c.Finish(false, nil, "")
}

func TestWriterRotatesAndPrunes(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(WriterConfig{Dir: dir, MaxSize: 600, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 300)
	for i := range 10 {
		if !w.Submit(testExchange("ex"+string(rune('a'+i)), `{"text":"`+pad+`"}`)) {
			t.Fatalf("record %d dropped", i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("%d files kept, want 3 (max_files): %v", len(files), files)
	}
	// Each record is over half of max_size: one per file, the newest kept.
	var ids []string
	for _, f := range files {
		xs, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) != 1 {
			t.Fatalf("%s holds %d records, want 1", f, len(xs))
		}
		ids = append(ids, xs[0].ID)
		if got := string(xs[0].ClientRequest.Body); got != `{"text":"`+pad+`"}` {
			t.Errorf("body read back as %.40s", got)
		}
	}
	if strings.Join(ids, ",") != "exh,exi,exj" {
		t.Errorf("kept %v, want the three newest", ids)
	}
	if w.Written() != 10 || w.Dropped() != 0 {
		t.Errorf("written %d dropped %d", w.Written(), w.Dropped())
	}
}

func TestWriterDropsWhenQueueFull(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var warned []string
	w, err := NewWriter(WriterConfig{Dir: t.TempDir(), QueueSize: 1,
		Scrub: func(line []byte, _ []string) []byte {
			if bytes.Contains(line, []byte(`"first"`)) {
				close(entered)
				<-release // a slow disk
			}
			return line
		},
		Warn: func(msg string, n int64, _ error) { warned = append(warned, msg) },
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Submit(testExchange("first", `{}`))
	<-entered
	if !w.Submit(testExchange("second", `{}`)) {
		t.Fatal("the queue's one slot refused a record")
	}
	if w.Submit(testExchange("third", `{}`)) {
		t.Fatal("a full queue took a record")
	}
	close(release)
	w.Close()
	if w.Dropped() != 1 || w.Written() != 2 {
		t.Errorf("dropped %d written %d, want 1 and 2", w.Dropped(), w.Written())
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "queue full") {
		t.Errorf("warnings %q", warned)
	}
}

func TestWriterScrubsLine(t *testing.T) {
	dir := t.TempDir()
	w, _ := NewWriter(WriterConfig{Dir: dir, Scrub: func(line []byte, known []string) []byte {
		for _, k := range known {
			line = bytes.ReplaceAll(line, []byte(k), []byte("[redacted]"))
		}
		return line
	}})
	x := testExchange("s", `{"q":"a&b<c>","k":"secret-value-123"}`)
	x.secrets = []string{"secret-value-123"}
	w.Submit(x)
	w.Close()
	files, _ := Files(dir)
	b, _ := os.ReadFile(files[0])
	if bytes.Contains(b, []byte("secret-value-123")) || !bytes.Contains(b, []byte(`a&b<c>`)) {
		t.Errorf("line %s", b)
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory passed")
	}
}

func TestCaptureCapsMemory(t *testing.T) {
	c := NewCapture(time.Now(), "cap", Endpoint{}, 100, func(string) bool { return true })
	c.BackendRequest(&Backend{Name: "b"}, "POST", "/v1/chat/completions", "", nil, []byte(`{"model":"m"}`))
	h := http.Header{"Content-Type": {"text/event-stream"}}
	c.BackendHeader(200, h)
	for range 10 {
		c.BackendWrite([]byte("data: {\"n\":\"0123456789\"}\n\n"))
	}
	x := c.Finish(true, nil, "")
	r := x.BackendResponse
	if !x.Truncated || r.EventsDropped == 0 || len(r.Events)+r.EventsDropped != 10 {
		t.Fatalf("truncated %v, %d kept, %d dropped", x.Truncated, len(r.Events), r.EventsDropped)
	}
	if r.Header["Content-Type"][0] != "text/event-stream" {
		t.Errorf("header %v", r.Header)
	}
}

func TestCaptureSplitsEventsAcrossWrites(t *testing.T) {
	c := NewCapture(time.Now(), "split", Endpoint{}, 0, nil)
	c.ClientHeader(200, http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}})
	c.ClientWrite([]byte("event: a\ndata: {\"x\""))
	c.ClientWrite([]byte(":1}\n\ndata: [DONE]\n\n"))
	xs, err := Read(bytes.NewReader(c.Finish(true, nil, "").appendJSON(nil)))
	if err != nil {
		t.Fatal(err)
	}
	ev := xs[0].ClientResponse.Events
	if len(ev) != 2 || ev[0].Name != "a" || string(ev[0].Data) != `{"x":1}` || ev[1].Text != "[DONE]" {
		t.Fatalf("events %+v", ev)
	}
}

func TestCaptureIgnoresWritesAfterFinish(t *testing.T) {
	c := NewCapture(time.Now(), "late", Endpoint{}, 0, nil)
	x := c.Finish(false, nil, "")
	c.ClientWrite([]byte("late"))
	c.BackendHeader(200, nil)
	if x.ClientResponse != nil || x.BackendResponse != nil {
		t.Errorf("a write after Finish was recorded: %+v %+v", x.ClientResponse, x.BackendResponse)
	}
}

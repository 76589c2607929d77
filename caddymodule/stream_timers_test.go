package caddymodule

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/louter/louter/translate"
)

func TestUnmarshalCaddyfileStreamTimers(t *testing.T) {
	tests := []struct {
		name                       string
		lines                      string
		keepalive, idle, firstByte caddy.Duration
		wantErr                    string
	}{
		{name: "unset", lines: ""},
		{name: "durations", lines: "keepalive_interval 50ms\nstream_idle_timeout 2m\nfirst_byte_timeout 1m30s", keepalive: caddy.Duration(50 * time.Millisecond), idle: caddy.Duration(2 * time.Minute), firstByte: caddy.Duration(90 * time.Second)},
		{name: "off", lines: "keepalive_interval off\nstream_idle_timeout off\nfirst_byte_timeout off", keepalive: -1, idle: -1, firstByte: -1},
		{name: "days", lines: "stream_idle_timeout 1d", idle: caddy.Duration(24 * time.Hour)},
		{name: "no value", lines: "keepalive_interval", wantErr: "wrong argument count"},
		{name: "two values", lines: "stream_idle_timeout 1m 2m", wantErr: "wrong argument count"},
		{name: "not a duration", lines: "first_byte_timeout soon", wantErr: `invalid first_byte_timeout "soon"`},
		{name: "zero", lines: "keepalive_interval 0s", wantErr: "want a positive duration or off"},
		{name: "negative", lines: "stream_idle_timeout -5s", wantErr: "want a positive duration or off"},
		{name: "twice", lines: "keepalive_interval 1s\nkeepalive_interval 2s", wantErr: "keepalive_interval already specified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Louter
			err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("louter {\n" + tt.lines + "\n}"))
			if wantError(t, err, tt.wantErr) {
				return
			}
			if l.KeepaliveInterval != tt.keepalive || l.StreamIdleTimeout != tt.idle || l.FirstByteTimeout != tt.firstByte {
				t.Errorf("got keepalive %v, idle %v, first byte %v", l.KeepaliveInterval, l.StreamIdleTimeout, l.FirstByteTimeout)
			}
		})
	}
}

// TestProvisionStreamTimers: zero takes the default, off stays off, and an
// off timer is never armed.
func TestProvisionStreamTimers(t *testing.T) {
	l := Louter{FirstByteTimeout: -1}
	l.provisionStreamTimers()
	if l.KeepaliveInterval != caddy.Duration(15*time.Second) || l.StreamIdleTimeout != caddy.Duration(5*time.Minute) || l.FirstByteTimeout != -1 {
		t.Fatalf("defaults: %+v", l)
	}
	off := Louter{KeepaliveInterval: -1, StreamIdleTimeout: -1, FirstByteTimeout: -1}
	off.provisionStreamTimers()
	rw := newResponseWriter(newFlushRecorder())
	rw.client = fakeCodec{fakeA}
	r := newRequest("POST", "/v1/chat", "{}")
	if ur, timers := off.startStreamTimers(rw, r); timers != nil || ur != r {
		t.Fatal("timers armed although all are off")
	}
}

func TestBodyReadError(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 4567}
	tests := []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"read_body deadline", &net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: os.ErrDeadlineExceeded}, http.StatusRequestTimeout, "louter: the request body was not received in time"},
		{"client gone mid-body", io.ErrUnexpectedEOF, http.StatusBadRequest, "louter: the request body ended before it was complete"},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: errors.New("connection reset by peer")}, http.StatusBadRequest, "louter: the request body could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := bodyReadError(tt.err)
			if e.Status != tt.status || e.Message != tt.msg {
				t.Fatalf("got %d %q, want %d %q", e.Status, e.Message, tt.status, tt.msg)
			}
			if strings.Contains(e.Message, "10.1.2.3") {
				t.Fatal("the message names the connection's address")
			}
		})
	}
}

// TestKeepaliveAtEventBoundary: a keep-alive that falls due while the
// backend has sent half an event goes out before that event, never inside
// it, and a passthrough stream loses its declared length (the watcher may
// add an error event).
func TestKeepaliveAtEventBoundary(t *testing.T) {
	rec, rw, timers := handFiredTimers(t)
	due := func() { // as if an interval had passed without a write
		rw.mu.Lock()
		timers.lastClient = -time.Hour - time.Second // an interval before the clock's start
		rw.mu.Unlock()
		timers.fire()
	}
	due() // before the status: nothing may be sent
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Content-Length", "999")
	rw.WriteHeader(200)
	const first = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"
	const second = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	const ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	if _, err := rw.Write([]byte(first + second[:20])); err != nil {
		t.Fatal(err)
	}
	due()
	if _, err := rw.Write([]byte(second[20:])); err != nil {
		t.Fatal(err)
	}
	due() // the stream has ended: no keep-alive after its end
	rw.finish()
	if got, want := rec.Body.String(), first+ping+second; got != want {
		t.Fatalf("client got\n%q\nwant\n%q", got, want)
	}
	if rec.Header().Get("Content-Length") != "" {
		t.Fatal("a passthrough stream kept its Content-Length")
	}
}

// TestStreamTimersNextDeadline: once the response began, a first-byte
// limit alone leaves the timer idle rather than polling.
func TestStreamTimersNextDeadline(t *testing.T) {
	rw := &responseWriter{mode: modeStream}
	tests := []struct {
		name                      string
		interval, idle, firstByte time.Duration
		mode                      writeMode
		want                      time.Duration
		ok                        bool
	}{
		{"first byte before the status", 0, 0, time.Second, modeUnset, time.Second, true},
		{"first byte after the status", 0, 0, time.Second, modeStream, 0, false},
		{"idle after the status", 0, time.Minute, time.Second, modeStream, time.Minute, true},
		{"keep-alive polls before the status", 15 * time.Second, 0, time.Minute, modeUnset, 15 * time.Second, true},
		{"nearest wins", 15 * time.Second, time.Minute, 0, modeStream, 15 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw.mode = tt.mode
			st := &streamTimers{rw: rw, interval: tt.interval, idle: tt.idle, firstByte: tt.firstByte, start: time.Now()}
			d, ok := st.next(0)
			if d != tt.want || ok != tt.ok {
				t.Fatalf("next = %v, %v; want %v, %v", d, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestStreamTimersStampClientWrites: a client write is stamped with the
// clock's reading of the backend write it comes from, and a keep-alive
// with that of the firing that sent it, so one keep-alive is not followed
// by another at the next firing.
func TestStreamTimersStampClientWrites(t *testing.T) {
	rec, rw, timers := handFiredTimers(t)
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.WriteHeader(200)
	time.Sleep(time.Millisecond) // the write's reading is past the start
	if _, err := rw.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n")); err != nil {
		t.Fatal(err)
	}
	rw.mu.Lock()
	if timers.lastClient <= 0 || timers.lastClient != timers.lastBackend {
		t.Fatalf("client write stamped %v, backend write %v: want the same reading", timers.lastClient, timers.lastBackend)
	}
	timers.lastClient = -time.Hour - time.Second // an interval ago
	rw.mu.Unlock()
	timers.fire()
	rw.mu.Lock()
	if timers.lastClient != timers.now || timers.lastClient <= timers.lastBackend {
		t.Errorf("keep-alive stamped %v, the firing read %v, the backend wrote at %v", timers.lastClient, timers.now, timers.lastBackend)
	}
	rw.mu.Unlock()
	timers.fire() // the keep-alive just sent counts as a client write
	if n := strings.Count(rec.Body.String(), "event: ping"); n != 1 {
		t.Fatalf("%d keep-alives, want 1:\n%s", n, rec.Body.String())
	}
}

// handFiredTimers is the writer of an Anthropic passthrough stream with
// keep-alives every hour and no other timer, which the test fires by
// hand: the real timer is swapped for one that does nothing, or the Reset
// of a due keep-alive (its deadline passed) would also fire it on the
// timer's goroutine, at any point of the test's writes.
func handFiredTimers(t *testing.T) (*flushRecorder, *responseWriter, *streamTimers) {
	rec := newFlushRecorder()
	rw := newResponseWriter(rec)
	anth, _ := translate.Lookup(translate.ProtocolAnthropic)
	rw.client, rw.backend, rw.logger = anth, &Backend{name: "anth", codec: anth}, zap.NewNop()
	rw.passthrough, rw.wantStream, rw.clientReq = true, true, &translate.Request{Stream: true}
	l := &Louter{KeepaliveInterval: caddy.Duration(time.Hour), StreamIdleTimeout: -1, FirstByteTimeout: -1}
	_, timers := l.startStreamTimers(rw, newRequest("POST", "/v1/messages", "{}"))
	if timers == nil {
		t.Fatal("no timers")
	}
	t.Cleanup(timers.stop)
	rw.mu.Lock()
	timers.timer.Stop()
	timers.timer = time.AfterFunc(time.Hour, func() {})
	rw.mu.Unlock()
	return rec, rw, timers
}

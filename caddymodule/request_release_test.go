package caddymodule

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// bodySpy is a request body that notes, weakly, the buffer louter reads
// the body into (readBody reads into one buffer of the Content-Length).
type bodySpy struct {
	r    io.Reader
	buf  weak.Pointer[byte]
	seen bool
}

func (s *bodySpy) Read(p []byte) (int, error) {
	if !s.seen && len(p) > 0 {
		s.buf, s.seen = weak.Make(&p[0]), true
	}
	return s.r.Read(p)
}

func (s *bodySpy) Close() error { return nil }

// stallingUpstream answers like reverse_proxy with head, then waits for
// resume before writing tail. It notes, weakly, the body it was sent.
func stallingUpstream(sentBody *weak.Pointer[byte], stalled, resume chan struct{}, head, tail []string) upstreamFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rc, err := r.GetBody()
		if err != nil {
			return err
		}
		if rd, ok := rc.(*upstreamBodyReader); ok && len(rd.b) > 0 {
			*sentBody = weak.Make(&rd.b[0])
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return err
		}
		for k, v := range sseHeader() {
			w.Header()[k] = v
		}
		w.WriteHeader(http.StatusOK)
		for _, c := range head {
			if _, err := w.Write([]byte(c)); err != nil {
				return err
			}
			_ = http.NewResponseController(w).Flush()
		}
		close(stalled)
		<-resume
		for _, c := range tail {
			if _, err := w.Write([]byte(c)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestRequestReleasedAfterFirstContent checks issue 17's memory goal: once
// the first content event of a stream has reached the client, louter no
// longer holds the client's body, nor the body it sent the backend, while
// the stream goes on — translated or passed through, with a fallback
// chain (which holds the request until then) or without.
func TestRequestReleasedAfterFirstContent(t *testing.T) {
	events := benchOpenAIEvents()
	long := strings.Repeat("all work and no play ", 16<<10) // ~336 KB
	tests := []struct {
		name     string
		path     string
		body     string
		fallback bool
	}{
		{"translated", "/v1/messages", `{"model":"to-openai-1","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, false},
		{"translated, fallback chain", "/v1/messages", `{"model":"to-openai-1","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, true},
		{"passthrough", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, false},
		{"passthrough, fallback chain", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent weak.Pointer[byte]
			stalled, resume := make(chan struct{}), make(chan struct{})
			up := stallingUpstream(&sent, stalled, resume, events[:3], events[3:]) // a role chunk, then content
			var fbs []RouteFallback
			if tt.fallback {
				fbs = []RouteFallback{{Backend: "anth"}}
			}
			l := newLouter(t, &Louter{
				Backends: map[string]*Backend{
					"oai":  {Protocol: translate.ProtocolOpenAIChat, APIKey: "oai-key"},
					"anth": {Protocol: translate.ProtocolAnthropic, APIKey: "anth-key"},
				},
				Models: []ModelRoute{
					{Match: "to-openai*", Backend: "oai", Rename: "gpt-4o", Fallbacks: fbs},
					{Match: "gpt*", Backend: "oai", Fallbacks: fbs},
				},
			}, map[string]caddyhttp.MiddlewareHandler{"oai": up, "anth": up})

			r := newRequest(http.MethodPost, tt.path, tt.body)
			spy := &bodySpy{r: strings.NewReader(tt.body)}
			r.Body = spy
			rec := newFlushRecorder()
			done := make(chan error, 1)
			go func() { done <- l.ServeHTTP(rec, r, &nextRecorder{}) }()
			<-stalled

			if !spy.seen || sent.Value() == nil {
				t.Fatal("the bodies were not observed")
			}
			released := false
			for i := 0; i < 10 && !released; i++ {
				runtime.GC()
				released = spy.buf.Value() == nil && sent.Value() == nil
			}
			clientHeld, sentHeld := spy.buf.Value() != nil, sent.Value() != nil
			close(resume)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !released {
				t.Errorf("mid-stream, after the first content: client body held %v, sent body held %v", clientHeld, sentHeld)
			}
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "word199") {
				t.Fatalf("status %d, body %.300s", rec.Code, rec.Body)
			}
		})
	}
}

// TestSlimRequestKeepsResponsesEcho checks that a Responses client's
// request keeps, once slimmed, what the final response object echoes (the
// tools with their descriptions and schemas, the tool choice, the text
// format), copied out of the body; and that other clients' requests lose
// them.
func TestSlimRequestKeepsResponsesEcho(t *testing.T) {
	body := []byte(`{"model":"m","input":"hi","tool_choice":{"type":"function","name":"run"},` +
		`"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"}}},` +
		`"tools":[{"type":"function","name":"run","description":"Runs a command.","strict":true,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`)
	inBody := func(s string) bool {
		if s == "" {
			return false
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		b := uintptr(unsafe.Pointer(&body[0]))
		return p >= b && p < b+uintptr(len(body))
	}
	for _, echo := range []bool{true, false} {
		c, _ := translate.Lookup(translate.ProtocolOpenAIResponses)
		req, err := c.DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		slimRequest(req, echo)
		if len(req.Tools) != 1 || req.Tools[0].Name != "run" || inBody(req.Tools[0].Name) {
			t.Fatalf("echo=%v: tools %+v", echo, req.Tools)
		}
		tool := req.Tools[0]
		if !echo {
			if tool.Description != "" || tool.Schema != nil || req.ToolChoice != nil || req.ResponseFormat != nil {
				t.Errorf("echo=false kept %+v, %+v, %+v", tool, req.ToolChoice, req.ResponseFormat)
			}
			continue
		}
		if tool.Description != "Runs a command." || inBody(tool.Description) || string(tool.Schema) != `{"type":"object","properties":{"cmd":{"type":"string"}}}` || inBody(string(tool.Schema)) || tool.Strict == nil || !*tool.Strict {
			t.Errorf("echo=true tool %+v", tool)
		}
		if req.ToolChoice == nil || req.ToolChoice.Name != "run" || inBody(req.ToolChoice.Name) {
			t.Errorf("echo=true tool choice %+v", req.ToolChoice)
		}
		if rf := req.ResponseFormat; rf == nil || rf.Name != "out" || inBody(rf.Name) || string(rf.Schema) != `{"type":"object"}` || inBody(string(rf.Schema)) {
			t.Errorf("echo=true text format %+v", req.ResponseFormat)
		}
	}
}

package caddymodule

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/translate"
)

// utf8Endpoint is a request template of one client endpoint, with NAME and
// VALUE where a test puts a member's name and a string's content, raw.
type utf8Endpoint struct {
	name     string
	protocol translate.Protocol
	path     string
	body     string
}

// utf8Endpoints cover the four chat protocols (translated to the other
// backend), both token-counting endpoints and the embeddings passthrough.
var utf8Endpoints = []utf8Endpoint{
	{"anthropic", translate.ProtocolAnthropic, "/v1/messages",
		`{"model":"to-openai-1","max_tokens":5,"messages":[{"role":"user","content":"VALUE"}],"NAME":1}`},
	{"openai_chat", translate.ProtocolOpenAIChat, "/v1/chat/completions",
		`{"model":"to-anthropic-1","messages":[{"role":"user","content":"VALUE"}],"NAME":1}`},
	{"openai_responses", translate.ProtocolOpenAIResponses, "/v1/responses",
		`{"model":"to-anthropic-1","input":"VALUE","NAME":1}`},
	{"gemini", translate.ProtocolGemini, "/v1beta/models/to-openai-1:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"VALUE"}]}],"NAME":1}`},
	{"anthropic count_tokens", translate.ProtocolAnthropic, "/v1/messages/count_tokens",
		`{"model":"to-anthropic-1","messages":[{"role":"user","content":"VALUE"}],"NAME":1}`},
	{"gemini countTokens", translate.ProtocolGemini, "/v1beta/models/to-openai-1:countTokens",
		`{"contents":[{"role":"user","parts":[{"text":"VALUE"}]}],"NAME":1}`},
	{"embeddings", translate.ProtocolOpenAIChat, "/v1/embeddings",
		`{"model":"gpt-4o","input":"VALUE","NAME":1}`},
}

func (e utf8Endpoint) fill(name, value []byte) string {
	return strings.NewReplacer("NAME", string(name), "VALUE", string(value)).Replace(e.body)
}

// clientErrorShaped reports whether body is an error in protocol p's shape.
func clientErrorShaped(p translate.Protocol, body string) bool {
	switch p {
	case translate.ProtocolAnthropic:
		return gjson.Get(body, "type").Str == "error" && gjson.Get(body, "error.type").Str != "" && gjson.Get(body, "error.message").Exists()
	case translate.ProtocolGemini:
		return gjson.Get(body, "error.status").Str != "" && gjson.Get(body, "error.code").Int() >= 400 && gjson.Get(body, "error.message").Exists()
	}
	return gjson.Get(body, "error.type").Str != "" && gjson.Get(body, "error.message").Exists()
}

// utf8Louter is realLouter whose backends answer every request with an
// error, noting that they were asked.
func utf8Louter(t testing.TB, asked *int) *Louter {
	return realLouter(t, func(w http.ResponseWriter, r *http.Request) error {
		*asked++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"no"}}`))
		return nil
	})
}

// Invalid UTF-8 in a member's name or in a string, on every endpoint that
// reads a body, is a 400 in the client's protocol naming the problem; no
// backend is asked, and the handler does not panic (a name used to become a
// Prometheus label, which panics on invalid UTF-8).
func TestInvalidUTF8Refused(t *testing.T) {
	asked := 0
	l := utf8Louter(t, &asked)
	for _, ep := range utf8Endpoints {
		for _, tt := range []struct {
			what, name, value string
		}{
			{"name", "too\xf5s", "hi"},
			{"value", "x", "h\xc3i"},
		} {
			body := ep.fill([]byte(tt.name), []byte(tt.value))
			rec := newFlushRecorder()
			asked = 0
			_, panicked := serve(l, rec, newRequest("POST", ep.path, body), nil)
			got := rec.Body.String()
			switch {
			case panicked != nil:
				t.Errorf("%s, invalid %s: panic %v", ep.name, tt.what, panicked)
			case rec.Code != http.StatusBadRequest || !clientErrorShaped(ep.protocol, got):
				t.Errorf("%s, invalid %s: %d %s, want a 400 in the %s shape", ep.name, tt.what, rec.Code, got, ep.protocol)
			case !strings.Contains(got, "not valid UTF-8") || !utf8.ValidString(got):
				t.Errorf("%s, invalid %s: %s does not name the problem (or is not UTF-8 itself)", ep.name, tt.what, got)
			case asked != 0:
				t.Errorf("%s, invalid %s: a backend was asked", ep.name, tt.what)
			}
		}
	}
}

// A member the client named that its protocol does not define is counted
// in louter_dropped_fields_total as "unknown", not under the client's name:
// the label set is the codecs' field names, whatever clients send.
func TestDroppedFieldLabelNotClientNamed(t *testing.T) {
	asked := 0
	l := utf8Louter(t, &asked)
	for _, ep := range utf8Endpoints[:3] { // the chat protocols that record unknown members
		rec := newFlushRecorder()
		serve(l, rec, newRequest("POST", ep.path, ep.fill([]byte("client_chosen_label_xyz"), []byte("hi"))), nil)
		if rec.Code == 0 || asked == 0 {
			t.Fatalf("%s: %d %s, want the backend asked", ep.name, rec.Code, rec.Body)
		}
	}
	if n := testutil.CollectAndCount(l.metrics.dropped); n != 3 {
		t.Errorf("%d dropped-field series, want 3 (one per client protocol)", n)
	}
	for _, ep := range utf8Endpoints[:3] {
		backend := map[bool]string{true: "oai", false: "anth"}[ep.protocol == translate.ProtocolAnthropic]
		if n := testutil.ToFloat64(l.metrics.dropped.WithLabelValues(string(ep.protocol), backend, "unknown")); n != 1 {
			t.Errorf("%s: %v drops counted as unknown, want 1", ep.name, n)
		}
	}
}

// FuzzInvalidUTF8Request feeds bytes into a member name and a string of a
// request of every endpoint: the handler never panics and always answers;
// a body that is not valid UTF-8 gets a 4xx in the client's protocol and
// reaches no backend.
func FuzzInvalidUTF8Request(f *testing.F) {
	for i := range utf8Endpoints {
		f.Add(uint8(i), []byte("too\xf5s"), []byte("hi"))
		f.Add(uint8(i), []byte("x"), []byte("h\xc3i\xed\xa0\x80"))
		f.Add(uint8(i), []byte("ok"), []byte("héllo"))
	}
	asked := 0
	l := utf8Louter(f, &asked)
	f.Fuzz(func(t *testing.T, which uint8, name, value []byte) {
		ep := utf8Endpoints[int(which)%len(utf8Endpoints)]
		body := ep.fill(name, value)
		rec := newFlushRecorder()
		asked = 0
		_, panicked := serve(l, rec, newRequest("POST", ep.path, body), nil)
		if panicked != nil {
			t.Fatalf("%s %q: panic %v", ep.name, body, panicked)
		}
		if rec.Code == 0 || rec.Body.Len() == 0 {
			t.Fatalf("%s %q: no answer", ep.name, body)
		}
		if utf8.ValidString(body) {
			return
		}
		if rec.Code < 400 || rec.Code >= 500 || !clientErrorShaped(ep.protocol, rec.Body.String()) {
			t.Fatalf("%s %q: %d %s, want a 4xx in the %s shape", ep.name, body, rec.Code, rec.Body, ep.protocol)
		}
		if asked != 0 {
			t.Fatalf("%s %q: a backend was asked", ep.name, body)
		}
	})
}

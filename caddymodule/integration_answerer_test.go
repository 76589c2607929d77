package caddymodule_test

// The answerer seam (answerer.go) proved by a feature that exists only in
// tests (answerer_canned_test.go): through a real Caddy, a request of every
// client protocol louter serves for chat, streaming and not, is answered
// by the canned answerer in the client's own shape without the backend
// being asked, seen by the feature's observer and counted by the metrics
// and the spend series as answered by "answer:canned"; a request the
// answerers pass still reaches the backend; the guard's refusal is an
// error in the client's protocol.

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
)

const answererCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		identity {http.request.header.X-Test-User}
		client alice {
			key_sha256 {ALICE}
		}
		backend anth {
			protocol anthropic
			api_key anth-backend-key
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model * anth
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock {
		name answerer-mock
	}
}
:{PORT2} {
	bind 127.0.0.1
	metrics
}
`

// answererCall is one chat call of a client protocol: its path and body
// for a prompt, and how to read the text of its answer.
type answererCall struct {
	protocol string
	stream   bool
	path     func(stream bool) string
	body     func(prompt string, stream bool) string
	header   []string
	// text reads a JSON answer's text; a stream is read by streamText.
	text string
	// end is what the client protocol's stream ends with.
	end string
}

func answererCalls() []answererCall {
	const model = "claude-answerer"
	streamMember := func(s bool) string {
		if s {
			return `,"stream":true`
		}
		return ""
	}
	fixed := func(p string) func(bool) string { return func(bool) string { return p } }
	calls := []answererCall{
		{
			protocol: "anthropic", path: fixed("/v1/messages"),
			body: func(p string, s bool) string {
				return `{"model":"` + model + `","max_tokens":64,"messages":[{"role":"user","content":"` + p + `"}]` + streamMember(s) + `}`
			},
			header: []string{"Anthropic-Version", "2023-06-01"},
			text:   "content.0.text", end: "event: message_stop",
		},
		{
			protocol: "openai_chat", path: fixed("/v1/chat/completions"),
			body: func(p string, s bool) string {
				return `{"model":"` + model + `","messages":[{"role":"user","content":"` + p + `"}]` + streamMember(s) + `}`
			},
			text: "choices.0.message.content", end: "data: [DONE]",
		},
		{
			protocol: "openai_responses", path: fixed("/v1/responses"),
			body: func(p string, s bool) string {
				return `{"model":"` + model + `","input":"` + p + `","store":false` + streamMember(s) + `}`
			},
			text: `output.#(type=="message").content.0.text`, end: "event: response.completed",
		},
		{
			protocol: "gemini",
			path: func(s bool) string {
				if s {
					return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
				}
				return "/v1beta/models/" + model + ":generateContent"
			},
			body: func(p string, _ bool) string {
				return `{"contents":[{"role":"user","parts":[{"text":"` + p + `"}]}]}`
			},
			text: "candidates.0.content.parts.0.text", end: `"finishReason":"STOP"`,
		},
		{
			protocol: "gemini_interactions", path: fixed("/v1beta/interactions"),
			body: func(p string, s bool) string {
				return `{"model":"` + model + `","input":"` + p + `","store":false` + streamMember(s) + `}`
			},
			text: `steps.#(type=="model_output").content.0.text`, end: "event: interaction.complete",
		},
		{
			protocol: "toy", path: fixed("/toy/v1/chat"),
			body: func(p string, s bool) string {
				return `{"model":"` + model + `","prompt":"` + p + `"` + streamMember(s) + `}`
			},
			text: "text", end: "event: stop",
		},
	}
	var out []answererCall
	for _, c := range calls {
		for _, s := range []bool{false, true} {
			c.stream = s
			out = append(out, c)
		}
	}
	return out
}

func (c answererCall) name() string {
	if c.stream {
		return c.protocol + "/stream"
	}
	return c.protocol + "/json"
}

func (c answererCall) send(t *testing.T, e *env, prompt string) (int, http.Header, string) {
	t.Helper()
	h := append([]string{"X-Test-User", "alice"}, c.header...)
	resp := testcaddy.Send(t, http.MethodPost, e.louter+c.path(c.stream), c.body(prompt, c.stream), h...)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestIntegrationAnswererAnswersEveryClientProtocol(t *testing.T) {
	cfg := strings.NewReplacer("{ALICE}", sha256Hex("alice-key")).Replace(answererCaddyfile)
	ports := testcaddy.Start(t, cfg)
	e := &env{t: t, louter: testcaddy.URL(ports[0])}
	for _, p := range ports[1:3] {
		testcaddy.WaitListening(t, p)
	}
	e.mocks = []string{testcaddy.URL(ports[1])}
	metricsURL := testcaddy.URL(ports[2]) + "/metrics"
	caddymodule.AnsweredAttempts()

	for _, c := range answererCalls() {
		t.Run(c.name(), func(t *testing.T) {
			e.clearJournals()
			before := testcaddy.Scrape(t, metricsURL)
			status, header, body := c.send(t, e, caddymodule.CannedMarker)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if c.stream {
				if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
					t.Errorf("Content-Type %q, want an event stream", ct)
				}
				if got := streamText(body); !strings.Contains(got, caddymodule.CannedText) {
					t.Errorf("the stream's text is %q, want the canned answer; stream:\n%s", got, body)
				}
				if !strings.Contains(body, c.end) {
					t.Errorf("the stream does not end as %s streams end (%q):\n%s", c.protocol, c.end, body)
				}
			} else if got := gjson.Get(body, c.text).String(); got != caddymodule.CannedText {
				t.Errorf("%s = %q, want the canned answer; body: %s", c.text, got, body)
			}
			if reqs := e.backendRequests(); len(reqs) != 0 {
				t.Errorf("the backend received %d requests, want none", len(reqs))
			}
			seen := caddymodule.AnsweredAttempts()
			if len(seen) != 1 {
				t.Fatalf("the observer saw %d answered attempts, want 1: %+v", len(seen), seen)
			}
			a := seen[0]
			if a.Backend != "answer:canned" || a.Protocol != c.protocol || a.Status != 200 || !a.Final || a.Stream != c.stream {
				t.Errorf("the observer saw %+v", a)
			}
			if c.stream && (a.Events == 0 || !a.FirstContent || a.Responses != 0) {
				t.Errorf("a streamed answer: the observer saw %d events, first content %v, %d responses", a.Events, a.FirstContent, a.Responses)
			}
			if !c.stream && (a.Responses != 1 || a.Events != 0) {
				t.Errorf("a JSON answer: the observer saw %d responses, %d events", a.Responses, a.Events)
			}
			after := testcaddy.Scrape(t, metricsURL)
			delta := func(name string, labels ...string) float64 {
				return testcaddy.Sum(after, name, labels...) - testcaddy.Sum(before, name, labels...)
			}
			labels := []string{`backend="answer:canned"`, `client="` + c.protocol + `"`, `client_name="alice"`, `outcome="ok"`}
			if d := delta("louter_requests_total", labels...); d != 1 {
				t.Errorf("louter_requests_total{%s} went up by %v, want 1", strings.Join(labels, ","), d)
			}
			if d := delta("louter_tokens_total", `backend="answer:canned"`, `kind="output"`); d != 7 {
				t.Errorf("louter_tokens_total{backend=answer:canned,kind=output} went up by %v, want the answer's 7", d)
			}
			if d := delta("louter_spend_requests_total", `backend="answer:canned"`, `client_name="alice"`); d != 1 {
				t.Errorf("louter_spend_requests_total{backend=answer:canned} went up by %v, want 1", d)
			}
			if d := delta("louter_spend_tokens_total", `backend="answer:canned"`); d != 18 {
				t.Errorf("louter_spend_tokens_total{backend=answer:canned} went up by %v, want 18", d)
			}
		})
	}

	t.Run("passed", func(t *testing.T) {
		for _, c := range answererCalls() {
			e.clearJournals()
			status, _, body := c.send(t, e, "hello")
			if status != http.StatusOK {
				t.Errorf("%s: status %d: %s", c.name(), status, body)
			}
			if strings.Contains(body, caddymodule.CannedText) {
				t.Errorf("%s: a request without the marker got the canned answer", c.name())
			}
			if reqs := e.backendRequests(); len(reqs) != 1 {
				t.Errorf("%s: the backend received %d requests, want 1", c.name(), len(reqs))
			}
		}
		if seen := caddymodule.AnsweredAttempts(); len(seen) != 0 {
			t.Errorf("the observer saw answered attempts for passed requests: %+v", seen)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, c := range answererCalls() {
			e.clearJournals()
			before := testcaddy.Scrape(t, metricsURL)
			status, header, body := c.send(t, e, caddymodule.RefuseMarker)
			if status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400: %s", c.name(), status, body)
			}
			if ct := header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q, want application/json", c.name(), ct)
			}
			if !strings.Contains(body, caddymodule.GuardMessage) {
				t.Errorf("%s: the refusal does not say why: %s", c.name(), body)
			}
			if c.protocol == "anthropic" && gjson.Get(body, "error.type").String() != "invalid_request_error" {
				t.Errorf("%s: not an Anthropic error: %s", c.name(), body)
			}
			if c.protocol == "openai_chat" && gjson.Get(body, "error.param").String() != "messages" {
				t.Errorf("%s: the OpenAI error names no param: %s", c.name(), body)
			}
			if reqs := e.backendRequests(); len(reqs) != 0 {
				t.Errorf("%s: the backend received %d requests, want none", c.name(), len(reqs))
			}
			after := testcaddy.Scrape(t, metricsURL)
			if d := testcaddy.Sum(after, "louter_requests_total", `backend="answer:guard"`, `outcome="rejected"`) -
				testcaddy.Sum(before, "louter_requests_total", `backend="answer:guard"`, `outcome="rejected"`); d != 1 {
				t.Errorf("%s: louter_requests_total{backend=answer:guard,outcome=rejected} went up by %v, want 1", c.name(), d)
			}
		}
		if seen := caddymodule.AnsweredAttempts(); len(seen) != len(answererCalls()) {
			t.Errorf("the observer saw %d refused attempts, want %d", len(seen), len(answererCalls()))
		}
	})
}

// streamText is the text of a stream's deltas, whatever the protocol: the
// string members of each data line that may carry text.
func streamText(body string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !gjson.Valid(data) {
			continue
		}
		for _, path := range []string{"delta.text", "choices.0.delta.content", "delta", "candidates.0.content.parts.0.text", "v"} {
			if v := gjson.Get(data, path); v.Type == gjson.String {
				b.WriteString(v.Str)
				break
			}
		}
	}
	return b.String()
}

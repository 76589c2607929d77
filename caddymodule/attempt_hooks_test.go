package caddymodule

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// attemptTally is a gateway feature that exists only in this file: it
// counts what each attempt shows it, through the hooks alone, and checks
// the locking the hook contract promises.
type attemptTally struct {
	rw                                           *responseWriter
	backend                                      string
	headers, writes, events, responses, clientWr int
	firstContent, ends                           int
	final                                        bool
	contentBeforeEnd                             bool
	violations                                   []string
}

const allHooks = hookBackendHeader | hookBackendWrite | hookEvent | hookResponse | hookClientWrite | hookFirstContent | hookEnd

// locked notes a hook called without the writer's mutex held.
func (t *attemptTally) locked(rw *responseWriter, hook string) {
	if rw.mu.TryLock() {
		rw.mu.Unlock()
		t.violations = append(t.violations, hook+" without the writer's mutex")
	}
}

func (t *attemptTally) onBackendHeader(rw *responseWriter, _ int) {
	t.locked(rw, "onBackendHeader")
	t.headers++
}

func (t *attemptTally) onBackendWrite(rw *responseWriter, _ []byte) {
	t.locked(rw, "onBackendWrite")
	t.writes++
}

func (t *attemptTally) onEvent(rw *responseWriter, _ *translate.Event) {
	t.locked(rw, "onEvent")
	t.events++
}

func (t *attemptTally) onResponse(rw *responseWriter, _ *translate.Response) {
	t.locked(rw, "onResponse")
	t.responses++
}

func (t *attemptTally) onClientWrite(rw *responseWriter) {
	t.locked(rw, "onClientWrite")
	t.clientWr++
}

func (t *attemptTally) onFirstContent(rw *responseWriter) {
	t.locked(rw, "onFirstContent")
	t.firstContent++
	t.contentBeforeEnd = t.ends == 0
}

func (t *attemptTally) onEnd(_ *attemptOutcome, final bool) {
	if !t.rw.mu.TryLock() {
		t.violations = append(t.violations, "onEnd with the writer's mutex held")
	} else {
		t.rw.mu.Unlock()
	}
	t.ends++
	t.final = final
}

// tallyAttempts adds the tally feature to l, as a new feature would be
// added: a watcher, with no edit of the writer or of serveBackend. It
// returns the tallies of the attempts, in order.
func tallyAttempts(l *Louter) *[]*attemptTally {
	var tallies []*attemptTally
	l.watchers = append(l.watchers, func(_ *http.Request, rw *responseWriter) {
		t := &attemptTally{rw: rw, backend: rw.backend.name}
		tallies = append(tallies, t)
		rw.addObserver(t, allHooks)
	})
	return &tallies
}

// TestAttemptObserverAcrossFallback: an observer registered from outside
// sees each attempt of a fallback chain on its own — the failed one with
// its events, no client write, no first content and a final-false end;
// the answering one with its events, its client writes, one first content
// before its end and a final end — and a JSON answer's complete response.
func TestAttemptObserverAcrossFallback(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
	overloaded := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	fine := []string{
		start,
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"fine\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	jsonAnswer := `{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"fine"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	l := newLouter(t, &Louter{
		Backends: map[string]*Backend{
			"first":  {Protocol: translate.ProtocolAnthropic},
			"second": {Protocol: translate.ProtocolAnthropic},
			"json":   {Protocol: translate.ProtocolAnthropic},
		},
		Models: []ModelRoute{
			{Match: "m-*", Backend: "first", Fallbacks: []RouteFallback{{Backend: "second"}}},
			{Match: "j-*", Backend: "json"},
		},
	}, map[string]caddyhttp.MiddlewareHandler{
		"first":  proxyLike(200, sseHeader(), start, overloaded),
		"second": proxyLike(200, sseHeader(), fine...),
		"json":   proxyLike(200, jsonHeader(jsonAnswer), jsonAnswer),
	})
	tallies := tallyAttempts(l)

	rec := newFlushRecorder()
	body := `{"model":"m-1","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	if err := l.ServeHTTP(rec, newRequest("POST", "/v1/chat/completions", body), &nextRecorder{}); err != nil || rec.Code != 200 {
		t.Fatal(err, rec.Code)
	}
	if out := rec.Body.String(); !strings.Contains(out, "fine") || strings.Contains(out, "Overloaded") {
		t.Fatalf("client got:\n%s", out)
	}
	if len(*tallies) != 2 {
		t.Fatalf("%d attempts observed, want 2", len(*tallies))
	}
	failed, answered := (*tallies)[0], (*tallies)[1]
	if failed.backend != "first" || failed.headers != 1 || failed.writes == 0 || failed.events < 2 ||
		failed.clientWr != 0 || failed.firstContent != 0 || failed.ends != 1 || failed.final {
		t.Errorf("failed attempt: %+v", *failed)
	}
	if answered.backend != "second" || answered.headers != 1 || answered.writes == 0 || answered.events < 3 ||
		answered.clientWr == 0 || answered.firstContent != 1 || !answered.contentBeforeEnd || answered.ends != 1 || !answered.final ||
		answered.responses != 0 {
		t.Errorf("answering attempt: %+v", *answered)
	}

	rec = newFlushRecorder()
	body = `{"model":"j-1","messages":[{"role":"user","content":"hi"}]}`
	if err := l.ServeHTTP(rec, newRequest("POST", "/v1/chat/completions", body), &nextRecorder{}); err != nil || rec.Code != 200 {
		t.Fatal(err, rec.Code)
	}
	if len(*tallies) != 3 {
		t.Fatalf("%d attempts observed, want 3", len(*tallies))
	}
	// A JSON answer is one response and has no first content.
	if j := (*tallies)[2]; j.backend != "json" || j.responses != 1 || j.events != 0 || j.firstContent != 0 || j.clientWr != 1 || j.ends != 1 || !j.final {
		t.Errorf("JSON attempt: %+v", *j)
	}
	for _, tl := range *tallies {
		for _, v := range tl.violations {
			t.Errorf("%s: %s", tl.backend, v)
		}
	}
}

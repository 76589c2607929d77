package caddymodule

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/louter/louter/translate"
)

// outcomeSeen is what an observer can tell of an attemptOutcome, in a
// form a test compares: the times and the timeout's error as whether they
// are set.
type outcomeSeen struct {
	backend, model                  string
	mode                            answerMode
	status                          int
	committed, passthrough, stream  bool
	content                         bool // FirstContent is set
	usage                           translate.Usage
	hasUsage                        bool
	stop                            translate.StopReason
	failure                         string
	timeout, streamFailed, bad, cut bool
	clientGone                      bool
	final                           bool
}

func seeOutcome(o *attemptOutcome, final bool) outcomeSeen {
	return outcomeSeen{
		backend: o.Backend, model: o.Model, mode: o.Mode, status: o.Status,
		committed: o.Committed, passthrough: o.Passthrough, stream: o.Stream, content: !o.FirstContent.IsZero(),
		usage: o.Usage, hasUsage: o.HasUsage, stop: o.Stop, failure: o.Failure,
		timeout: o.Timeout != nil, streamFailed: o.StreamFailed, bad: o.BadResponse, cut: o.Cut,
		clientGone: o.ClientGone, final: final,
	}
}

// outcomeLog is a feature that exists only in this file: an observer of
// the attempts' ends alone, which keeps each outcome it is given and what
// it saw of it then.
type outcomeLog struct {
	nopObserver
	kept  []*attemptOutcome
	seen  []outcomeSeen
	final []bool
}

func (o *outcomeLog) onEnd(out *attemptOutcome, final bool) {
	o.kept = append(o.kept, out)
	o.seen = append(o.seen, seeOutcome(out, final))
	o.final = append(o.final, final)
}

// goneClient is a client whose connection fails at the first write of a
// body.
type goneClient struct{ *flushRecorder }

func (goneClient) Write([]byte) (int, error) { return 0, errors.New("the client went away") }

// TestAttemptOutcomeContract pins what the writer puts in the outcome it
// gives every observer's onEnd, for each way an attempt ends: a JSON
// answer, a stream, an error status, a passthrough, an undecodable answer,
// a cut connection, an idle and a first-byte timeout, a client that has
// gone, and a fallback chain's failed attempt (final false) and the one
// that answered. It also pins that the outcome may be kept: what it says
// after the request is what it said at onEnd.
func TestAttemptOutcomeContract(t *testing.T) {
	const (
		chatJSON   = `{"id":"c1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
		chatChunk1 = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
		chatChunk2 = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
		chatUsage  = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n"
		chatDone   = "data: [DONE]\n\n"
		rateLimit  = `{"error":{"message":"slow down","type":"rate_limit_error"}}`
		anthStart  = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":4,\"output_tokens\":0}}}\n\n"
	)
	anthStream := []string{
		anthStart,
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"fine\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	// stall sends what it is given, then waits for the stream timers to
	// cut the request, as reverse_proxy does when its context ends.
	stall := func(status int, header http.Header, chunks ...string) upstreamFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			if status != 0 {
				if err := proxyLike(status, header, chunks...)(w, r); err != nil {
					return err
				}
			}
			<-r.Context().Done()
			return r.Context().Err()
		}
	}
	const timeout = caddy.Duration(300 * time.Millisecond)

	var current upstreamFunc // the "oai" and "anth" backends' answer, set by each case
	l := newLouter(t, &Louter{
		KeepaliveInterval: -1, StreamIdleTimeout: timeout, FirstByteTimeout: timeout,
		Backends: map[string]*Backend{
			"oai":    {Protocol: translate.ProtocolOpenAIChat},
			"anth":   {Protocol: translate.ProtocolAnthropic},
			"first":  {Protocol: translate.ProtocolOpenAIChat},
			"second": {Protocol: translate.ProtocolOpenAIChat},
		},
		Models: []ModelRoute{
			{Match: "to-openai*", Backend: "oai", Rename: "gpt-4o"},
			{Match: "claude*", Backend: "anth"},
			{Match: "fb-*", Backend: "first", Fallbacks: []RouteFallback{{Backend: "second"}}},
		},
	}, map[string]caddyhttp.MiddlewareHandler{
		"oai":    upstreamFunc(func(w http.ResponseWriter, r *http.Request) error { return current(w, r) }),
		"anth":   upstreamFunc(func(w http.ResponseWriter, r *http.Request) error { return current(w, r) }),
		"first":  proxyLike(529, jsonHeader(rateLimit), rateLimit),
		"second": proxyLike(200, jsonHeader(chatJSON), chatJSON),
	})
	var log *outcomeLog
	l.watchers = append(l.watchers, func(_ *http.Request, rw *responseWriter) { rw.addObserver(log, hookEnd) })

	usage := translate.Usage{InputTokens: 3, OutputTokens: 2}
	tests := []struct {
		name     string
		model    string
		stream   bool
		upstream upstreamFunc
		gone     bool // the client's connection fails
		want     []outcomeSeen
	}{
		{"JSON", "to-openai-1", false, proxyLike(200, jsonHeader(chatJSON), chatJSON), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerJSON, status: 200, committed: true,
			usage: usage, hasUsage: true, stop: translate.StopEndTurn, final: true,
		}}},
		{"stream", "to-openai-1", true, proxyLike(200, sseHeader(), chatChunk1, chatChunk2, chatUsage, chatDone), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerStream, status: 200, committed: true, stream: true, content: true,
			usage: usage, hasUsage: true, stop: translate.StopEndTurn, final: true,
		}}},
		{"error status", "to-openai-1", false, proxyLike(429, jsonHeader(rateLimit), rateLimit), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerError, status: 429, committed: true,
			failure: upstreamRateLimited, final: true,
		}}},
		// A passthrough stream is watched for its usage, not decoded: its
		// stop reason is not known.
		{"passthrough stream", "claude-x", true, proxyLike(200, sseHeader(), anthStream...), false, []outcomeSeen{{
			backend: "anth", model: "claude-x", mode: answerStream, status: 200, committed: true, passthrough: true, stream: true, content: true,
			usage: translate.Usage{InputTokens: 4, OutputTokens: 1}, hasUsage: true, final: true,
		}}},
		{"undecodable answer", "to-openai-1", false, proxyLike(200, jsonHeader("not json"), "not json"), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerJSON, status: 200, committed: true,
			failure: upstreamBadResponse, bad: true, final: true,
		}}},
		{"cut mid-stream", "to-openai-1", true, abortingUpstream(200, sseHeader(), chatChunk1), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerStream, status: 200, committed: true, stream: true, content: true,
			failure: upstreamStreamCut, cut: true, streamFailed: true, final: true,
		}}},
		{"idle timeout", "to-openai-1", true, stall(200, sseHeader(), chatChunk1), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerStream, status: 200, committed: true, stream: true, content: true,
			failure: upstreamIdleTimeout, timeout: true, streamFailed: true, final: true,
		}}},
		{"first-byte timeout", "to-openai-1", true, stall(0, nil), false, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerNone, stream: true,
			failure: upstreamFirstByteTimeout, timeout: true, final: true,
		}}},
		// The stream stops at the failed write, unfinished: the exchange
		// record counts it canceled, not an upstream error.
		{"client gone", "to-openai-1", true, proxyLike(200, sseHeader(), chatChunk1, chatChunk2, chatUsage, chatDone), true, []outcomeSeen{{
			backend: "oai", model: "to-openai-1", mode: answerStream, status: 200, committed: true, stream: true, content: true,
			failure: upstreamStreamError, streamFailed: true, clientGone: true, final: true,
		}}},
		{"fallback", "fb-1", false, nil, false, []outcomeSeen{{
			backend: "first", model: "fb-1", mode: answerError, status: 529, failure: upstreamOverloaded, final: false,
		}, {
			backend: "second", model: "fb-1", mode: answerJSON, status: 200, committed: true,
			usage: usage, hasUsage: true, stop: translate.StopEndTurn, final: true,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current, log = tt.upstream, &outcomeLog{}
			body := `{"model":"` + tt.model + `","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
			if tt.stream {
				body = `{"model":"` + tt.model + `","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
			}
			var w http.ResponseWriter = newFlushRecorder()
			if tt.gone {
				w = goneClient{newFlushRecorder()}
			}
			err, p := serve(l, w, newRequest("POST", "/v1/messages", body), &nextRecorder{})
			if err != nil || p != nil {
				t.Fatalf("ServeHTTP: %v, panic %v", err, p)
			}
			if len(log.seen) != len(tt.want) {
				t.Fatalf("%d outcomes, want %d: %+v", len(log.seen), len(tt.want), log.seen)
			}
			for i, want := range tt.want {
				if got := log.seen[i]; got != want {
					t.Errorf("attempt %d's outcome at onEnd:\n got %+v\nwant %+v", i, got, want)
				}
				if kept := seeOutcome(log.kept[i], log.final[i]); kept != log.seen[i] {
					t.Errorf("attempt %d's outcome changed after onEnd:\n now %+v\nthen %+v", i, kept, log.seen[i])
				}
			}
		})
	}
}

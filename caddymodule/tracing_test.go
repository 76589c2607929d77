package caddymodule

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/louter/louter/translate"
)

// tracedRequest returns r inside a recording server span, as Caddy's
// tracing handler hands it over, and the recorder that gets the ended spans.
func tracedRequest(r *http.Request) (*http.Request, trace.Span, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("test").Start(r.Context(), "louter", trace.WithSpanKind(trace.SpanKindServer))
	r = r.WithContext(ctx)
	r.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	return r, span, rec
}

func attrsOf(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestTracingServeHTTP(t *testing.T) {
	tests := []struct {
		name          string
		upstream      upstreamFunc
		body          string
		wantStatus    int
		wantErrorType string
		wantStop      string
		wantOut       int64
		wantFirst     bool
	}{
		{"stream", proxyLike(200, sseHeader(), benchOpenAIEvents()...), anthropicStreamRequest, 200, "", "tool_use", 210, true},
		{"json", proxyLike(200, jsonHeader(openaiJSONAnswer), openaiJSONAnswer), `{"model":"to-openai-1","max_tokens":64,"temperature":0.2,"messages":[{"role":"user","content":"hi"}]}`, 200, "", "end_turn", 7, false},
		{"backend error", proxyLike(429, jsonHeader(`{"error":{"message":"slow down","type":"rate_limit"}}`), `{"error":{"message":"slow down","type":"rate_limit"}}`), anthropicStreamRequest, 429, "429", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sentTraceparent string
			upstream := func(w http.ResponseWriter, r *http.Request) error {
				sentTraceparent = r.Header.Get("Traceparent")
				return tt.upstream(w, r)
			}
			l := realLouter(t, upstream)
			r, server, rec := tracedRequest(newRequest("POST", "/v1/messages", tt.body))
			w := newFlushRecorder()
			if err := l.ServeHTTP(w, r, &nextRecorder{}); err != nil || w.Code != tt.wantStatus {
				t.Fatalf("ServeHTTP: %v, status %d, want %d", err, w.Code, tt.wantStatus)
			}
			server.End()
			spans := rec.Ended()
			if len(spans) != 2 {
				t.Fatalf("%d spans ended, want the attempt's and the request's", len(spans))
			}
			attempt, req := spans[0], spans[1]
			if attempt.Name() != "chat gpt-4o" || attempt.SpanKind() != trace.SpanKindClient || attempt.Parent().SpanID() != req.SpanContext().SpanID() {
				t.Errorf("attempt span %q kind %v parent %v: want \"chat gpt-4o\", a client span under the request's", attempt.Name(), attempt.SpanKind(), attempt.Parent().SpanID())
			}
			if want := "00-" + attempt.SpanContext().TraceID().String() + "-" + attempt.SpanContext().SpanID().String() + "-01"; sentTraceparent != want {
				t.Errorf("backend got traceparent %q, want the attempt's %q", sentTraceparent, want)
			}
			ra, aa := attrsOf(req.Attributes()), attrsOf(attempt.Attributes())
			if ra["gen_ai.request.model"].AsString() != "to-openai-1" || ra["louter.backend_model"].AsString() != "gpt-4o" || ra["gen_ai.provider.name"].AsString() != "openai" || ra["louter.client"].AsString() != "anthropic" {
				t.Errorf("request attributes: %v", req.Attributes())
			}
			if got := aa["error.type"].AsString(); got != tt.wantErrorType {
				t.Errorf("error.type %q, want %q", got, tt.wantErrorType)
			}
			if wantErr := tt.wantErrorType != ""; (attempt.Status().Code == codes.Error) != wantErr {
				t.Errorf("attempt status %v, want an error: %v", attempt.Status(), wantErr)
			}
			if got := aa["http.response.status_code"].AsInt64(); got != int64(tt.wantStatus) {
				t.Errorf("attempt status code %d, want %d", got, tt.wantStatus)
			}
			var stop string
			if fr := ra["gen_ai.response.finish_reasons"].AsStringSlice(); len(fr) == 1 {
				stop = fr[0]
			}
			if stop != tt.wantStop || ra["gen_ai.usage.output_tokens"].AsInt64() != tt.wantOut {
				t.Errorf("finish %q, output tokens %d; want %q, %d", stop, ra["gen_ai.usage.output_tokens"].AsInt64(), tt.wantStop, tt.wantOut)
			}
			first := 0
			for _, ev := range attempt.Events() {
				if ev.Name == eventFirstChunk {
					first++
				}
			}
			_, ttfc := ra["gen_ai.response.time_to_first_chunk"]
			if (first == 1) != tt.wantFirst || ttfc != tt.wantFirst {
				t.Errorf("%d first-chunk events, time_to_first_chunk set: %v; want a first chunk: %v", first, ttfc, tt.wantFirst)
			}
		})
	}
}

// openaiJSONAnswer is a complete OpenAI Chat answer.
const openaiJSONAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-2024","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":7,"total_tokens":10}}`

func TestTracingOffWithoutRecordingSpan(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"no span", context.Background()},
		{"unsampled span", trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest("POST", "/v1/messages", "{}").WithContext(tt.ctx)
			tr := startTrace(r, translate.ProtocolAnthropic, &Backend{Protocol: translate.ProtocolOpenAIChat}, &translate.Request{Model: "m"}, "m", false, nil)
			if tr != nil {
				t.Fatal("a trace without a recording span")
			}
			// Every hook takes the nil trace.
			if got := tr.startAttempt(r, &Backend{}, "m"); got != r {
				t.Error("startAttempt changed the request")
			}
			tr.observe(&translate.Event{Type: translate.EventMessageStart})
			tr.response(&translate.Response{})
			tr.end((&responseWriter{}).outcome(), true)
		})
	}
}

func TestTracingBodyParams(t *testing.T) {
	tests := []struct {
		protocol translate.Protocol
		body     string
		want     map[attribute.Key]any
	}{
		{translate.ProtocolAnthropic, `{"max_tokens":9,"temperature":1,"top_p":0.5,"top_k":40}`, map[attribute.Key]any{"gen_ai.request.max_tokens": int64(9), "gen_ai.request.temperature": 1.0, "gen_ai.request.top_p": 0.5, "gen_ai.request.top_k": 40.0}},
		{translate.ProtocolOpenAIChat, `{"max_tokens":8,"temperature":0}`, map[attribute.Key]any{"gen_ai.request.max_tokens": int64(8), "gen_ai.request.temperature": 0.0}},
		{translate.ProtocolOpenAIChat, `{"max_completion_tokens":7,"max_tokens":8,"top_k":3}`, map[attribute.Key]any{"gen_ai.request.max_tokens": int64(7)}},
		{translate.ProtocolOpenAIResponses, `{"max_output_tokens":6,"top_p":"x"}`, map[attribute.Key]any{"gen_ai.request.max_tokens": int64(6)}},
		{translate.ProtocolGemini, `{"generationConfig":{"maxOutputTokens":5,"topP":0.1,"topK":2}}`, map[attribute.Key]any{"gen_ai.request.max_tokens": int64(5), "gen_ai.request.top_p": 0.1, "gen_ai.request.top_k": 2.0}},
		{translate.ProtocolGemini, `{}`, map[attribute.Key]any{}},
	}
	for _, tt := range tests {
		t.Run(string(tt.protocol)+" "+tt.body, func(t *testing.T) {
			got := attrsOf(appendBodyParams(nil, tt.protocol, []byte(tt.body)))
			if len(got) != len(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if g := got[k].AsInterface(); g != v {
					t.Errorf("%s = %#v, want %#v", k, g, v)
				}
			}
		})
	}
}

// The cached tracer follows the provider: after a reload (a new provider),
// attempt spans go to the new provider's processors, and back.
func TestAttemptTracerFollowsProvider(t *testing.T) {
	var recs [2]*tracetest.SpanRecorder
	var reqs [2]*http.Request
	for i := range recs {
		reqs[i], _, recs[i] = tracedRequest(newRequest("POST", "/v1/messages", "{}"))
	}
	b := &Backend{Protocol: translate.ProtocolOpenAIChat, name: "oai"}
	for _, i := range []int{0, 1, 1, 0} {
		tr := startTrace(reqs[i], translate.ProtocolAnthropic, b, &translate.Request{Model: "m"}, "m", false, nil)
		tr.startAttempt(reqs[i], b, "m")
		tr.end((&responseWriter{status: 200, mode: modeStream}).outcome(), true)
	}
	for i, want := range []int{2, 2} {
		if got := len(recs[i].Ended()); got != want {
			t.Errorf("provider %d got %d attempt spans, want %d", i, got, want)
		}
	}
}

// The request's attributes reach its span however the attempts end: a
// request refused before any backend was asked still names its backend,
// and after a fallback the span names the last backend asked, with the
// response of the one that answered.
func TestTracingRequestAttrsAtEnd(t *testing.T) {
	first, second := &Backend{Protocol: translate.ProtocolAnthropic, name: "first"}, &Backend{Protocol: translate.ProtocolOpenAIChat, name: "second"}
	tests := []struct {
		name        string
		attempts    []*Backend // asked in turn; nil: refused before the backend was asked
		wantBackend string
		wantStop    string
	}{
		{"refused", []*Backend{nil}, "first", ""},
		{"one attempt", []*Backend{first}, "first", "end_turn"},
		{"fallback", []*Backend{first, second}, "second", "end_turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, server, rec := tracedRequest(newRequest("POST", "/v1/messages", "{}"))
			for i, b := range tt.attempts {
				final := i == len(tt.attempts)-1
				tb := b
				if tb == nil {
					tb = first
				}
				tr := startTrace(r, translate.ProtocolAnthropic, tb, &translate.Request{Model: "m"}, "m", false, nil)
				rw := &responseWriter{status: 529, mode: modeError}
				if b != nil {
					tr.startAttempt(r, b, "m")
					if final {
						rw = &responseWriter{status: 200, mode: modeStream, stop: translate.StopEndTurn}
					}
				}
				tr.end(rw.outcome(), final)
				tr.end(rw.outcome(), final) // a second end changes nothing
			}
			server.End()
			spans := rec.Ended()
			req := attrsOf(spans[len(spans)-1].Attributes())
			if got := req["louter.backend"].AsString(); got != tt.wantBackend {
				t.Errorf("louter.backend %q, want %q", got, tt.wantBackend)
			}
			var stop string
			if fr := req["gen_ai.response.finish_reasons"].AsStringSlice(); len(fr) == 1 {
				stop = fr[0]
			}
			if stop != tt.wantStop {
				t.Errorf("finish reason %q, want %q", stop, tt.wantStop)
			}
			if want := len(tt.attempts) + 1; tt.attempts[0] != nil && len(spans) != want {
				t.Errorf("%d spans, want %d", len(spans), want)
			}
		})
	}
}

// The cached finish reasons are the attributes semconv makes.
func TestFinishReasons(t *testing.T) {
	for _, r := range []translate.StopReason{translate.StopEndTurn, translate.StopToolUse, translate.StopError, "something_new"} {
		got, want := finishReasons(r), semconv.GenAIResponseFinishReasons(string(r))
		if got.Key != want.Key || got.Value.Emit() != want.Value.Emit() {
			t.Errorf("%s: %v, want %v", r, got, want)
		}
	}
}

// A traced stream allocates nothing per event.
func TestTracingObserveAllocs(t *testing.T) {
	r, _, _ := tracedRequest(newRequest("POST", "/v1/messages", "{}"))
	tr := startTrace(r, translate.ProtocolAnthropic, &Backend{Protocol: translate.ProtocolOpenAIChat}, &translate.Request{Model: "m"}, "m", false, nil)
	tr.startAttempt(r, &Backend{Protocol: translate.ProtocolOpenAIChat}, "m")
	ev := &translate.Event{Type: translate.EventBlockDelta, Block: translate.BlockText, Text: "x"}
	tr.observe(ev)
	if n := testing.AllocsPerRun(100, func() { tr.observe(ev) }); n != 0 {
		t.Errorf("%v allocations per event", n)
	}
}

// BenchmarkServeHTTPStreamTracing is BenchmarkServeHTTPStreamPerEvent
// without a span and inside a recording one (an SDK span, started and
// ended per request, as Caddy's tracing handler does): the difference is
// what tracing costs a streamed request in louter.
func BenchmarkServeHTTPStreamTracing(b *testing.B) {
	events := benchOpenAIEvents()
	l := realLouter(b, proxyLike(200, sseHeader(), events...))
	tracer := sdktrace.NewTracerProvider().Tracer("bench")
	for _, traced := range []bool{false, true} {
		name := "off"
		if traced {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := newRequest("POST", "/v1/messages", anthropicStreamRequest)
				var span trace.Span
				if traced {
					var ctx context.Context
					ctx, span = tracer.Start(r.Context(), "louter", trace.WithSpanKind(trace.SpanKindServer))
					r = r.WithContext(ctx)
				}
				rec := newFlushRecorder()
				if err := l.ServeHTTP(rec, r, &nextRecorder{}); err != nil || rec.Code != 200 {
					b.Fatal(err, rec.Code)
				}
				if span != nil {
					span.End()
				}
			}
		})
	}
}

// BenchmarkTracingHooks is the tracing work for the stream of
// BenchmarkServeHTTPStreamTracing, without the rest of the request:
// "span" is the request's span alone (started and ended, Caddy's share),
// "louter" adds louter's hooks: the request's attributes, the attempt's
// span, every event observed, the end. Their difference, against that
// benchmark's "off" time, is louter's share of a traced streamed request,
// measured without the noise of the whole request.
func BenchmarkTracingHooks(b *testing.B) {
	r := newRequest("POST", "/v1/messages", anthropicStreamRequest)
	tracer := sdktrace.NewTracerProvider().Tracer("bench")
	backend := &Backend{Protocol: translate.ProtocolOpenAIChat, name: "oai"}
	req := &translate.Request{Model: "to-openai-1", Stream: true, MaxTokens: 1024}
	events := make([]translate.Event, 0, 210)
	events = append(events, translate.Event{Type: translate.EventMessageStart, ID: "msg_1", Model: "gpt-4o"}, translate.Event{Type: translate.EventBlockStart, Block: translate.BlockText})
	for range 200 {
		events = append(events, translate.Event{Type: translate.EventBlockDelta, Block: translate.BlockText, Text: "word "})
	}
	events = append(events, translate.Event{Type: translate.EventBlockStop}, translate.Event{Type: translate.EventMessageStop, Stop: translate.StopToolUse})
	rw := &responseWriter{status: 200, mode: modeStream, hasUsage: true, usage: translate.Usage{InputTokens: 10, OutputTokens: 210}, stop: translate.StopToolUse, firstContent: time.Now()}
	for _, hooks := range []bool{false, true} {
		name := "span"
		if hooks {
			name = "louter"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, span := tracer.Start(r.Context(), "louter", trace.WithSpanKind(trace.SpanKindServer))
				if hooks {
					tr := startTrace(r.WithContext(ctx), translate.ProtocolAnthropic, backend, req, "gpt-4o", false, nil)
					tr.startAttempt(r.WithContext(ctx), backend, "gpt-4o")
					for i := range events {
						tr.observe(&events[i])
					}
					tr.end(rw.outcome(), true)
				}
				span.End()
			}
		})
	}
}

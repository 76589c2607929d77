package caddymodule

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/louter/louter/translate"
)

// tracerName names the instrumentation scope of louter's own spans.
const tracerName = "github.com/louter/louter/caddymodule"

// Attributes of louter's own, outside the GenAI conventions: what the
// conventions have no name for (which configured backend answered, which
// protocol the client spoke) but an operator filters by.
const (
	attrClient       = attribute.Key("louter.client")
	attrBackend      = attribute.Key("louter.backend")
	attrBackendModel = attribute.Key("louter.backend_model")
	attrPassthrough  = attribute.Key("louter.passthrough")
)

// eventFirstChunk is the name of the span event at the first token.
const eventFirstChunk = "gen_ai.first_chunk"

// requestTrace puts one backend attempt of a request on the span Caddy's
// tracing handler opened for it: the OpenTelemetry GenAI semantic-convention
// attributes, a client span for the attempt, and an event at the first
// token. It exists only while the span records (startTrace returns nil
// otherwise), and every method accepts a nil receiver, so a server without
// tracing pays one nil check per hook and nothing else.
//
// The trace is an observer of the attempt (attempt_hooks.go). The response
// writer keeps most of what the attributes report (usage, stop reason,
// when the first content went out); the trace keeps the response's id and
// model, written under the writer's mutex and read by end once the
// upstream handler has returned.
type requestTrace struct {
	nopObserver
	span    trace.Span // the request's span, from Caddy's tracing handler
	attempt trace.Span // the backend attempt's span, or nil
	// attrs are the request's attributes, set on its span by end together
	// with the response's: one SetAttributes call grows the span's
	// attribute slice (a copy of all of them, Caddy's included) once
	// rather than twice.
	attrs []attribute.KeyValue
	ended bool

	attemptStart      time.Time
	respID, respModel string
}

// startTrace gathers the request's attributes for its span (end sets
// them) and returns the trace, or nil when the request has no recording span (no tracing
// handler, or a trace that is not sampled). Each attempt of a fallback
// chain sets them again, so the span names the last backend asked. req is
// the request with the client's model name; for a passthrough request it
// carries only the model and the stream flag, and the parameters are read
// from body, the body sent to the backend.
func startTrace(r *http.Request, client translate.Protocol, b *Backend, req *translate.Request, backendModel string, passthrough bool, body []byte) *requestTrace {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return nil
	}
	// Room for the response's attributes (appendResponseAttrs), added by end.
	attrs := make([]attribute.KeyValue, 0, 12+maxResponseAttrs)
	attrs = append(attrs,
		semconv.GenAIOperationNameChat,
		providerName(b.Protocol),
		semconv.GenAIRequestModel(req.Model),
		semconv.GenAIRequestStream(req.Stream),
		attrClient.String(string(client)),
		attrBackend.String(b.name),
		attrBackendModel.String(backendModel),
		attrPassthrough.Bool(passthrough),
	)
	if passthrough {
		attrs = appendBodyParams(attrs, client, body)
	} else {
		attrs = appendRequestParams(attrs, req)
	}
	return &requestTrace{span: span, attrs: attrs}
}

// traceAttempt starts the trace of an attempt (startTrace) and registers
// it on the attempt's writer; nil when the request is not traced.
func traceAttempt(r *http.Request, client translate.Protocol, b *Backend, rw *responseWriter, backendModel string, body []byte) *requestTrace {
	t := startTrace(r, client, b, rw.clientReq, backendModel, rw.passthrough, body)
	if t != nil {
		rw.addObserver(t, hookEvent|hookResponse|hookEnd)
	}
	return t
}

// providerName is gen_ai.provider.name for a backend protocol: the
// provider whose API the backend speaks (protocolRow.provider). An
// OpenAI-compatible server (vLLM, Ollama, ...) is reported as openai, the
// API it implements.
func providerName(p translate.Protocol) attribute.KeyValue {
	if kv := rowOf(p).provider; kv.Valid() {
		return kv
	}
	return semconv.GenAIProviderNameOpenAI
}

// appendRequestParams adds the sampling parameters of a translated request.
func appendRequestParams(attrs []attribute.KeyValue, req *translate.Request) []attribute.KeyValue {
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if req.TopP != nil {
		attrs = append(attrs, semconv.GenAIRequestTopP(*req.TopP))
	}
	if req.TopK != nil {
		attrs = append(attrs, semconv.GenAIRequestTopK(float64(*req.TopK)))
	}
	return attrs
}

// appendBodyParams adds the sampling parameters of a passthrough body,
// which louter does not decode.
func appendBodyParams(attrs []attribute.KeyValue, p translate.Protocol, body []byte) []attribute.KeyValue {
	paths := rowOf(p).bodyParams // protocols.go
	var maxTokens gjson.Result
	for _, path := range paths.maxTokens {
		if maxTokens = gjson.GetBytes(body, path); maxTokens.Exists() {
			break
		}
	}
	if maxTokens.Type == gjson.Number {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(int(maxTokens.Int())))
	}
	if paths.temperature != "" {
		if v := gjson.GetBytes(body, paths.temperature); v.Type == gjson.Number {
			attrs = append(attrs, semconv.GenAIRequestTemperature(v.Float()))
		}
	}
	if paths.topP != "" {
		if v := gjson.GetBytes(body, paths.topP); v.Type == gjson.Number {
			attrs = append(attrs, semconv.GenAIRequestTopP(v.Float()))
		}
	}
	if paths.topK != "" {
		if v := gjson.GetBytes(body, paths.topK); v.Type == gjson.Number {
			attrs = append(attrs, semconv.GenAIRequestTopK(v.Float()))
		}
	}
	return attrs
}

// startAttempt opens the attempt's client span, named as the GenAI
// conventions name an inference span ("chat {model}"), and returns the
// request carrying it. When the client's request carried a W3C traceparent
// (Caddy's tracing handler sets one), it is replaced by the attempt's, so
// a traced backend continues the trace under the attempt.
func (t *requestTrace) startAttempt(r *http.Request, b *Backend, backendModel string) *http.Request {
	if t == nil {
		return r
	}
	ctx, span := attemptTracer(t.span.TracerProvider()).Start(r.Context(), "chat "+backendModel,
		attemptSpanKind,
		trace.WithAttributes(
			semconv.GenAIOperationNameChat,
			providerName(b.Protocol),
			semconv.GenAIRequestModel(backendModel),
			attrBackend.String(b.name),
		))
	t.attempt, t.attemptStart = span, time.Now()
	if r.Header.Get("Traceparent") != "" {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	}
	return r.WithContext(ctx)
}

// attemptSpanKind is the attempt span's kind option, made once: each
// trace.WithSpanKind call allocates it.
var attemptSpanKind = trace.WithSpanKind(trace.SpanKindClient)

// providerTracer is louter's tracer of one tracer provider.
type providerTracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// lastTracer caches louter's tracer of the last provider asked: asking
// the SDK's provider for it again costs a mutex and a map lookup keyed by
// the whole instrumentation scope on every request. Caddy's tracing
// handlers share one provider, so the cache misses after a reload only.
var lastTracer atomic.Pointer[providerTracer]

// attemptTracer is louter's tracer of provider p. Only the SDK's
// providers (Caddy's) are cached: another implementation's value may not
// even be comparable.
func attemptTracer(p trace.TracerProvider) trace.Tracer {
	sp, ok := p.(*sdktrace.TracerProvider)
	if !ok {
		return p.Tracer(tracerName)
	}
	if c := lastTracer.Load(); c != nil && c.provider == sp {
		return c.tracer
	}
	c := &providerTracer{provider: sp, tracer: sp.Tracer(tracerName)}
	lastTracer.Store(c)
	return c.tracer
}

// observe looks at one stream event of a translated response for the
// response's id and model.
func (t *requestTrace) observe(ev *translate.Event) {
	if t != nil && ev.Type == translate.EventMessageStart {
		t.respID, t.respModel = ev.ID, ev.Model
	}
}

// onEvent, onResponse and onEnd are the trace's hooks (attempt_hooks.go).
func (t *requestTrace) onEvent(_ *responseWriter, ev *translate.Event) { t.observe(ev) }
func (t *requestTrace) onResponse(_ *responseWriter, resp *translate.Response) {
	t.response(resp)
}
func (t *requestTrace) onEnd(out *attemptOutcome, final bool) { t.end(out, final) }

// response takes the id and model of a complete (JSON) response.
func (t *requestTrace) response(resp *translate.Response) {
	if t != nil {
		t.respID, t.respModel = resp.ID, resp.Model
	}
}

// end closes the attempt once the upstream handler has returned, with its
// outcome (attempt_outcome.go): its span
// ends with the backend's status, or why there was none, and the first
// token's event, stamped when the first content went to the client. Then
// the request's attributes go on the request's span, whose end is Caddy's,
// and when the attempt answered the client (final; not one a fallback
// chain moves on from) the response's with them — on that span only:
// every attribute is paid for again when the spans are exported. A later
// attempt's attributes replace an earlier one's, so the span names the
// last backend asked.
func (t *requestTrace) end(out *attemptOutcome, final bool) {
	if t == nil || t.ended {
		return
	}
	t.ended = true
	if t.attempt == nil {
		// Refused before the backend was asked: no attempt, no response.
		t.span.SetAttributes(t.attrs...)
		return
	}
	span := t.attempt
	t.attempt = nil
	var attrs [2]attribute.KeyValue
	n := 0
	if out.Status != 0 {
		attrs[n] = semconv.HTTPResponseStatusCode(out.Status)
		n++
	}
	if et := attemptErrorType(out); et != "" {
		attrs[n] = semconv.ErrorTypeKey.String(et)
		n++
		span.SetStatus(codes.Error, et)
	}
	span.SetAttributes(attrs[:n]...)
	if !out.FirstContent.IsZero() {
		span.AddEvent(eventFirstChunk, trace.WithTimestamp(out.FirstContent))
	}
	span.End()
	if final {
		t.attrs = t.appendResponseAttrs(t.attrs, out)
	}
	t.span.SetAttributes(t.attrs...)
}

// attemptErrorType is error.type for an attempt: "" for a success.
func attemptErrorType(out *attemptOutcome) string {
	switch {
	case out.Timeout != nil:
		return "timeout"
	case out.Mode == answerNone:
		return "no_response" // the backend could not be reached
	case out.Status >= 400:
		return strconv.Itoa(out.Status)
	case out.StreamFailed:
		return "stream_error" // the stream ended with an error or was cut
	}
	return ""
}

// finishReasonAttrs are gen_ai.response.finish_reasons of the stop reasons
// of the IR, made once: a slice attribute copies its slice on every call.
var finishReasonAttrs = func() map[translate.StopReason]attribute.KeyValue {
	m := map[translate.StopReason]attribute.KeyValue{}
	for _, r := range []translate.StopReason{translate.StopEndTurn, translate.StopMaxTokens, translate.StopSequence, translate.StopToolUse,
		translate.StopRefusal, translate.StopPauseTurn, translate.StopContextWindow, translate.StopCompaction, translate.StopError} {
		m[r] = semconv.GenAIResponseFinishReasons(string(r))
	}
	return m
}()

// finishReasons is gen_ai.response.finish_reasons of stop reason r.
func finishReasons(r translate.StopReason) attribute.KeyValue {
	if kv, ok := finishReasonAttrs[r]; ok {
		return kv
	}
	return semconv.GenAIResponseFinishReasons(string(r))
}

// maxResponseAttrs is how many attributes appendResponseAttrs adds at most.
const maxResponseAttrs = 9

// appendResponseAttrs adds the response's attributes to attrs.
func (t *requestTrace) appendResponseAttrs(attrs []attribute.KeyValue, out *attemptOutcome) []attribute.KeyValue {
	if t.respID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(t.respID))
	}
	if t.respModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(t.respModel))
	}
	if out.Stop != "" {
		attrs = append(attrs, finishReasons(out.Stop))
	}
	if !out.FirstContent.IsZero() {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(out.FirstContent.Sub(t.attemptStart).Seconds()))
	}
	if out.HasUsage {
		u := out.Usage
		attrs = append(attrs,
			semconv.GenAIUsageInputTokens(u.InputTokens),
			semconv.GenAIUsageOutputTokens(u.OutputTokens),
		)
		if u.CacheReadTokens > 0 {
			attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(u.CacheReadTokens))
		}
		if u.CacheWriteTokens > 0 {
			attrs = append(attrs, semconv.GenAIUsageCacheCreationInputTokens(u.CacheWriteTokens))
		}
		if u.ReasoningTokens > 0 {
			attrs = append(attrs, semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
		}
	}
	return attrs
}

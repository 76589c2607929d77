package caddymodule

import (
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
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

// requestTrace puts one request on the span Caddy's tracing handler opened
// for it: the OpenTelemetry GenAI semantic-convention attributes, a client
// span per backend attempt, and an event at the first token. It exists only
// while the span records (startTrace returns nil otherwise), and every
// method accepts a nil receiver, so a server without tracing pays one nil
// check per hook and nothing per stream event beyond it.
//
// Its fields are written from the response writer, under the writer's
// mutex, and read by end once the upstream handler has returned.
type requestTrace struct {
	span    trace.Span // the request's span, from Caddy's tracing handler
	attempt trace.Span // the backend attempt in flight, or nil
	// attrs are the request's attributes, set on its span with the
	// response's at the end: one SetAttributes call, which the SDK pays
	// for by growing the span's attribute slice.
	attrs []attribute.KeyValue

	attemptStart time.Time
	firstChunk   time.Duration // from attemptStart; 0: no chunk yet

	respID, respModel string
	stop              translate.StopReason
	streamErr         translate.ErrorKind // an error event ended the stream
}

// startTrace sets the request's attributes on its span and returns the
// trace, or nil when the request has no recording span (no tracing
// handler, or a trace that is not sampled). req is the request as the
// backend gets it, with the client's model name; for a passthrough request
// it carries only the model and the stream flag, and the parameters are
// read from the body sent to the backend.
func startTrace(r *http.Request, client translate.Protocol, b *Backend, req *translate.Request, backendModel string, passthrough bool, body []byte) *requestTrace {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return nil
	}
	attrs := make([]attribute.KeyValue, 0, 24) // room for the response's
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

// providerName is gen_ai.provider.name for a backend protocol: the
// provider whose API the backend speaks. An OpenAI-compatible server
// (vLLM, Ollama, ...) is reported as openai, the API it implements.
func providerName(p translate.Protocol) attribute.KeyValue {
	switch p {
	case translate.ProtocolAnthropic:
		return semconv.GenAIProviderNameAnthropic
	case translate.ProtocolGemini:
		return semconv.GenAIProviderNameGCPGemini
	default:
		return semconv.GenAIProviderNameOpenAI
	}
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

// bodyParamPaths are where each protocol's body holds max tokens,
// temperature, top_p and top_k ("" when it has none).
var bodyParamPaths = map[translate.Protocol][4]string{
	translate.ProtocolAnthropic:       {"max_tokens", "temperature", "top_p", "top_k"},
	translate.ProtocolOpenAIChat:      {"max_completion_tokens", "temperature", "top_p", ""},
	translate.ProtocolOpenAIResponses: {"max_output_tokens", "temperature", "top_p", ""},
	translate.ProtocolGemini:          {"generationConfig.maxOutputTokens", "generationConfig.temperature", "generationConfig.topP", "generationConfig.topK"},
}

// appendBodyParams adds the sampling parameters of a passthrough body,
// which louter does not decode.
func appendBodyParams(attrs []attribute.KeyValue, p translate.Protocol, body []byte) []attribute.KeyValue {
	paths, ok := bodyParamPaths[p]
	if !ok {
		return attrs
	}
	maxTokens := gjson.GetBytes(body, paths[0])
	if !maxTokens.Exists() && p == translate.ProtocolOpenAIChat {
		maxTokens = gjson.GetBytes(body, "max_tokens") // the older name
	}
	if maxTokens.Type == gjson.Number {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(int(maxTokens.Int())))
	}
	if v := gjson.GetBytes(body, paths[1]); v.Type == gjson.Number {
		attrs = append(attrs, semconv.GenAIRequestTemperature(v.Float()))
	}
	if v := gjson.GetBytes(body, paths[2]); v.Type == gjson.Number {
		attrs = append(attrs, semconv.GenAIRequestTopP(v.Float()))
	}
	if paths[3] != "" {
		if v := gjson.GetBytes(body, paths[3]); v.Type == gjson.Number {
			attrs = append(attrs, semconv.GenAIRequestTopK(v.Float()))
		}
	}
	return attrs
}

// startAttempt opens the client span of one backend attempt, named as the
// GenAI conventions name an inference span ("chat {model}"), and returns
// the request carrying it. An attempt still open is ended first: each
// attempt has its own span. When the client's request carried a W3C
// traceparent (Caddy's tracing handler sets one), it is replaced by the
// attempt's, so a traced backend continues the trace under the attempt.
func (t *requestTrace) startAttempt(r *http.Request, b *Backend, backendModel string) *http.Request {
	if t == nil {
		return r
	}
	t.endAttempt(nil)
	ctx, span := t.span.TracerProvider().Tracer(tracerName).Start(r.Context(), "chat "+backendModel,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			semconv.GenAIOperationNameChat,
			providerName(b.Protocol),
			semconv.GenAIRequestModel(backendModel),
			attrBackend.String(b.name),
		))
	t.attempt, t.attemptStart = span, time.Now()
	t.firstChunk, t.respID, t.respModel, t.stop, t.streamErr = 0, "", "", "", ""
	if r.Header.Get("Traceparent") != "" {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	}
	return r.WithContext(ctx)
}

// observe looks at one stream event of a translated response. It records
// the first token (the first content delta), the response's id and model,
// and how the stream ended. It allocates only at the first token.
func (t *requestTrace) observe(ev *translate.Event) {
	if t == nil {
		return
	}
	switch ev.Type {
	case translate.EventMessageStart:
		t.respID, t.respModel = ev.ID, ev.Model
	case translate.EventBlockStart, translate.EventBlockDelta:
		t.chunk()
	case translate.EventMessageStop:
		t.stop = ev.Stop
	case translate.EventError:
		if ev.Err != nil {
			t.streamErr = ev.Err.Kind
		}
	}
}

// chunk marks the first chunk of the answer, once: the first content of a
// translated stream, or the first event a passthrough stream forwards.
func (t *requestTrace) chunk() {
	if t == nil || t.firstChunk != 0 || t.attempt == nil {
		return
	}
	t.firstChunk = max(time.Since(t.attemptStart), 1)
	t.attempt.AddEvent(eventFirstChunk)
}

// response takes the id, model and stop reason of a complete (JSON)
// response.
func (t *requestTrace) response(resp *translate.Response) {
	if t == nil {
		return
	}
	t.respID, t.respModel, t.stop = resp.ID, resp.Model, resp.StopReason
}

// endAttempt ends the attempt in flight with its outcome: the backend's
// status, or why there was none. The response's attributes go on the
// request's span only: the answer is the last attempt's, and every
// attribute is paid for again when the spans are exported. rw is nil when
// a new attempt replaces this one before its outcome is known.
func (t *requestTrace) endAttempt(rw *responseWriter) {
	if t.attempt == nil {
		return
	}
	span := t.attempt
	t.attempt = nil
	if rw != nil {
		var attrs [2]attribute.KeyValue
		n := 0
		if rw.status != 0 {
			attrs[n] = semconv.HTTPResponseStatusCode(rw.status)
			n++
		}
		if et := attemptErrorType(rw, t.streamErr); et != "" {
			attrs[n] = semconv.ErrorTypeKey.String(et)
			n++
			span.SetStatus(codes.Error, et)
		}
		span.SetAttributes(attrs[:n]...)
	}
	span.End()
}

// attemptErrorType is error.type for an attempt: "" for a success.
func attemptErrorType(rw *responseWriter, streamErr translate.ErrorKind) string {
	switch {
	case rw.timeout != nil:
		return "timeout"
	case rw.mode == modeUnset:
		return "no_response" // the backend could not be reached
	case rw.status >= 400:
		return strconv.Itoa(rw.status)
	case streamErr != "":
		return string(streamErr)
	}
	return ""
}

// appendResponseAttrs appends the response's attributes.
func (t *requestTrace) appendResponseAttrs(attrs []attribute.KeyValue, rw *responseWriter) []attribute.KeyValue {
	if t.respID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(t.respID))
	}
	if t.respModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(t.respModel))
	}
	if t.stop != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(string(t.stop)))
	}
	if t.firstChunk > 0 {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(t.firstChunk.Seconds()))
	}
	if rw.hasUsage {
		u := rw.usage
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

// end closes the trace once the response is complete: the attempt's span
// ends, and the request's span gets the response attributes. The
// request's span itself is Caddy's, which ends it.
func (t *requestTrace) end(rw *responseWriter) {
	if t == nil {
		return
	}
	t.endAttempt(rw)
	t.span.SetAttributes(t.appendResponseAttrs(t.attrs, rw)...)
}

package caddymodule_test

// Tracing through Caddy's stock tracing handler: its OTLP exporter, set up
// by the standard OTEL_* variables, sends the spans to a real OTLP/gRPC
// trace receiver on loopback, and the test checks the GenAI attributes
// louter put on them.

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/louter/louter/internal/testcaddy"
)

const tracingCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	tracing {
		span louter
	}
	louter {
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend gem {
			protocol gemini
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend resp {
			protocol openai_responses
			reverse_proxy 127.0.0.1:{PORT1}
		}
		backend dead {
			protocol anthropic
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model to-anth-* anth
		model to-oai-* oai
		model to-gem-* gem backend-gem
		model to-resp-* resp
		model to-dead-* dead
		model fall-* dead {
			fallback oai fall-backup
		}
	}
}
:{PORT1} {
	bind 127.0.0.1
	louter_mock
}
`

// otlpReceiver is an OTLP/gRPC trace receiver: the collector's trace
// service, keeping every span it is sent.
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

// Export implements the OTLP trace service.
func (o *otlpReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			o.spans = append(o.spans, ss.GetSpans()...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// startOTLPReceiver serves the trace service on a loopback port until the
// test ends and points Caddy's exporter at it.
func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, rcv)
	go srv.Serve(l) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	return rcv
}

// tracedRequest is one request of the test: a client protocol, a model
// that routes it to a backend, streaming or not.
type tracedRequest struct {
	client, model string
	stream        bool
	backendModel  string // the model the backend is asked for
	provider      string // gen_ai.provider.name
	passthrough   bool
}

// send posts the request in its client's protocol, with max tokens,
// temperature and top_p set, and reads the whole answer.
func (tr tracedRequest) send(t *testing.T, base string) (status int, body string) {
	t.Helper()
	const params = `"temperature":0.5,"top_p":0.25`
	var path, req string
	switch tr.client {
	case "anthropic":
		path = "/v1/messages"
		req = fmt.Sprintf(`{"model":%q,"max_tokens":64,%s,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, tr.model, params, tr.stream)
	case "openai_chat":
		path = "/v1/chat/completions"
		req = fmt.Sprintf(`{"model":%q,"max_completion_tokens":64,%s,"stream":%t,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, tr.model, params, tr.stream)
		if !tr.stream {
			req = strings.Replace(req, `,"stream_options":{"include_usage":true}`, "", 1)
		}
	case "openai_responses":
		path = "/v1/responses"
		req = fmt.Sprintf(`{"model":%q,"max_output_tokens":64,%s,"stream":%t,"input":"hi"}`, tr.model, params, tr.stream)
	case "gemini":
		path = "/v1beta/models/" + tr.model + ":generateContent"
		if tr.stream {
			path = "/v1beta/models/" + tr.model + ":streamGenerateContent?alt=sse"
		}
		req = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":64,"temperature":0.5,"topP":0.25}}`
	}
	status, b := testcaddy.Do(t, http.MethodPost, base+path, req)
	return status, string(b)
}

var tracedRequests = []tracedRequest{
	{client: "anthropic", model: "to-oai-a", backendModel: "to-oai-a", provider: "openai"},
	{client: "anthropic", model: "to-oai-as", stream: true, backendModel: "to-oai-as", provider: "openai"},
	{client: "anthropic", model: "to-anth-as", stream: true, backendModel: "to-anth-as", provider: "anthropic", passthrough: true},
	{client: "anthropic", model: "to-anth-a", backendModel: "to-anth-a", provider: "anthropic", passthrough: true},
	{client: "openai_chat", model: "to-anth-o", backendModel: "to-anth-o", provider: "anthropic"},
	{client: "openai_chat", model: "to-anth-os", stream: true, backendModel: "to-anth-os", provider: "anthropic"},
	{client: "openai_chat", model: "to-oai-os", stream: true, backendModel: "to-oai-os", provider: "openai", passthrough: true},
	{client: "openai_responses", model: "to-gem-r", backendModel: "backend-gem", provider: "gcp.gemini"},
	{client: "openai_responses", model: "to-gem-rs", stream: true, backendModel: "backend-gem", provider: "gcp.gemini"},
	{client: "gemini", model: "to-resp-g", backendModel: "to-resp-g", provider: "openai"},
	{client: "gemini", model: "to-resp-gs", stream: true, backendModel: "to-resp-gs", provider: "openai"},
}

func TestTracingGenAIAttributesOverOTLP(t *testing.T) {
	rcv := startOTLPReceiver(t)
	var backendTraceparents []string
	// Caddy runs in a subtest: stopping it at the subtest's end shuts the
	// tracer provider down, which exports every span still batched.
	t.Run("requests", func(t *testing.T) {
		ports := testcaddy.Start(t, tracingCaddyfile)
		testcaddy.WaitListening(t, ports[1])
		e := &env{t: t, louter: testcaddy.URL(ports[0]), mocks: []string{testcaddy.URL(ports[1])}}
		for _, tr := range tracedRequests {
			if status, body := tr.send(t, e.louter); status != http.StatusOK {
				t.Fatalf("%s %s: status %d: %s", tr.client, tr.model, status, body)
			}
		}
		for _, r := range e.backendRequests() {
			backendTraceparents = append(backendTraceparents, r.Get("headers.Traceparent").String())
		}
		if status, _ := (tracedRequest{client: "anthropic", model: "to-dead-a"}).send(t, e.louter); status != http.StatusBadGateway {
			t.Errorf("dead backend: status %d, want 502", status)
		}
		if status, body := (tracedRequest{client: "anthropic", model: "fall-a", stream: true}).send(t, e.louter); status != http.StatusOK {
			t.Errorf("fallback chain: status %d: %s", status, body)
		}
	})
	if t.Failed() {
		return
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	servers := map[string]*tracepb.Span{}  // by gen_ai.request.model
	attempts := map[string]*tracepb.Span{} // by parent span id: the last
	chains := map[string][]*tracepb.Span{} // by parent span id: all, as exported (in the order they ended)
	for _, s := range rcv.spans {
		switch s.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			servers[attrString(s, "gen_ai.request.model")] = s
		case tracepb.Span_SPAN_KIND_CLIENT:
			parent := hex.EncodeToString(s.ParentSpanId)
			attempts[parent] = s
			chains[parent] = append(chains[parent], s)
		}
	}
	// The backend continues the trace under the attempt's span.
	attemptIDs := map[string]bool{}
	for _, a := range attempts {
		attemptIDs[hex.EncodeToString(a.TraceId)+"-"+hex.EncodeToString(a.SpanId)] = true
	}
	if len(backendTraceparents) != len(tracedRequests) {
		t.Errorf("backend saw %d requests, want %d", len(backendTraceparents), len(tracedRequests))
	}
	for _, tp := range backendTraceparents {
		if parts := strings.Split(tp, "-"); len(parts) != 4 || !attemptIDs[parts[1]+"-"+parts[2]] {
			t.Errorf("backend traceparent %q is not an attempt span's", tp)
		}
	}

	for _, tr := range tracedRequests {
		t.Run(tr.client+"/"+tr.model, func(t *testing.T) {
			s := servers[tr.model]
			if s == nil {
				t.Fatalf("no server span with gen_ai.request.model %q among %d spans", tr.model, len(rcv.spans))
			}
			if s.Name != "louter" {
				t.Errorf("span name %q, want the tracing directive's %q", s.Name, "louter")
			}
			want := map[string]any{
				"gen_ai.operation.name":      "chat",
				"gen_ai.provider.name":       tr.provider,
				"gen_ai.request.stream":      tr.stream,
				"gen_ai.request.max_tokens":  int64(64),
				"gen_ai.request.temperature": 0.5,
				"gen_ai.request.top_p":       0.25,
				"louter.client":              tr.client,
				"louter.backend_model":       tr.backendModel,
				"louter.passthrough":         tr.passthrough,
			}
			for k, v := range want {
				if got := attrValue(s, k); got != v {
					t.Errorf("%s = %#v, want %#v", k, got, v)
				}
			}
			// The mock reports usage in every answer; a passthrough
			// stream's is read by its watcher.
			for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
				if n, _ := attrValue(s, k).(int64); n <= 0 {
					t.Errorf("%s = %v, want > 0", k, attrValue(s, k))
				}
			}
			if !tr.passthrough || !tr.stream { // a passthrough stream is only watched
				if attrString(s, "gen_ai.response.id") == "" {
					t.Error("no gen_ai.response.id")
				}
				if got := attrString(s, "gen_ai.response.model"); got != tr.backendModel {
					t.Errorf("gen_ai.response.model = %q, want the backend's %q", got, tr.backendModel)
				}
				if got := attrValue(s, "gen_ai.response.finish_reasons"); got != "[end_turn]" {
					t.Errorf("gen_ai.response.finish_reasons = %v, want [end_turn]", got)
				}
			}

			a := attempts[hex.EncodeToString(s.SpanId)]
			if a == nil {
				t.Fatal("no attempt span under the request's span")
			}
			if want := "chat " + tr.backendModel; a.Name != want {
				t.Errorf("attempt span %q, want %q", a.Name, want)
			}
			if got := attrValue(a, "http.response.status_code"); got != int64(200) {
				t.Errorf("attempt status code %v, want 200", got)
			}
			if got := attrString(a, "gen_ai.request.model"); got != tr.backendModel {
				t.Errorf("attempt gen_ai.request.model = %q, want %q", got, tr.backendModel)
			}
			if a.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("attempt status %v", a.Status)
			}
			var first int
			for _, ev := range a.Events {
				if ev.Name == "gen_ai.first_chunk" {
					first++
				}
			}
			if tr.stream && (first != 1 || attrValue(s, "gen_ai.response.time_to_first_chunk") == nil) {
				t.Errorf("streamed: %d first-chunk events, time_to_first_chunk %v; want one and a value", first, attrValue(s, "gen_ai.response.time_to_first_chunk"))
			}
		})
	}

	t.Run("unreachable backend", func(t *testing.T) {
		s := servers["to-dead-a"]
		if s == nil {
			t.Fatal("no server span for the dead backend's request")
		}
		a := attempts[hex.EncodeToString(s.SpanId)]
		if a == nil {
			t.Fatal("no attempt span")
		}
		if a.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || attrString(a, "error.type") != "no_response" {
			t.Errorf("attempt status %v, error.type %q; want an error, no_response", a.Status, attrString(a, "error.type"))
		}
	})

	t.Run("fallback chain", func(t *testing.T) {
		s := servers["fall-a"]
		if s == nil {
			t.Fatal("no server span for the fallback chain's request")
		}
		chain := chains[hex.EncodeToString(s.SpanId)]
		if len(chain) != 2 {
			t.Fatalf("%d attempt spans, want 2", len(chain))
		}
		if chain[0].Name != "chat fall-a" || attrString(chain[0], "error.type") != "no_response" {
			t.Errorf("first attempt %q, error.type %q; want chat fall-a, no_response", chain[0].Name, attrString(chain[0], "error.type"))
		}
		if chain[1].Name != "chat fall-backup" || chain[1].Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("second attempt %q, status %v; want chat fall-backup, not an error", chain[1].Name, chain[1].Status)
		}
		if got := attrString(s, "louter.backend"); got != "oai" {
			t.Errorf("the request's span names backend %q, want the one that answered, oai", got)
		}
		if n, _ := attrValue(s, "gen_ai.usage.output_tokens").(int64); n <= 0 {
			t.Errorf("the request's span has no output tokens of the answer")
		}
	})
}

// attrValue is a span attribute's value as a Go value (string, bool,
// int64, float64, or an array in fmt's %v form); nil when absent.
func attrValue(s *tracepb.Span, key string) any {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyValue(kv.Value)
		}
	}
	return nil
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var parts []any
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyValue(e))
		}
		return fmt.Sprint(parts)
	}
	return nil
}

func attrString(s *tracepb.Span, key string) string {
	v, _ := attrValue(s, key).(string)
	return v
}

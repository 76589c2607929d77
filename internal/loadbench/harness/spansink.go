package harness

import (
	"context"
	"net"
	"sync/atomic"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// SpanSink is an OTLP/gRPC trace receiver on loopback that counts the
// spans it gets: the endpoint of a traced Caddy's exporter.
type SpanSink struct {
	collectortrace.UnimplementedTraceServiceServer

	// Addr is the host:port the receiver listens on.
	Addr string

	n   atomic.Int64
	srv *grpc.Server
}

// StartSpanSink starts a SpanSink. Close it when done.
func StartSpanSink() (*SpanSink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &SpanSink{Addr: l.Addr().String(), srv: grpc.NewServer()}
	collectortrace.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Export implements the OTLP trace service.
func (s *SpanSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			s.n.Add(int64(len(ss.GetSpans())))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Spans is the number of spans received so far.
func (s *SpanSink) Spans() int64 { return s.n.Load() }

// Close stops the receiver.
func (s *SpanSink) Close() { s.srv.Stop() }

// TracingEnv is the environment that makes a Caddy process with the
// `tracing` directive export its spans to the sink over OTLP/gRPC, in
// batches sent every 200 ms.
func (s *SpanSink) TracingEnv() []string {
	return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + s.Addr, "OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_BSP_SCHEDULE_DELAY=200"}
}

package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/testcaddy"
)

// BenchmarkProcessCPUTracing measures what Caddy's tracing costs a
// translated streaming request, in the same way as
// BenchmarkProcessCPUPerStream: the CPU time a separate Caddy process spends
// per request, here on two sites of one Caddy, one with the `tracing`
// directive and one without, both translating an Anthropic client's stream
// from OpenAI Chat. The traced site exports every span over OTLP/gRPC to a
// receiver in this process, so the figure includes Caddy's own span, louter's
// GenAI attributes and attempt span, the batching and the export. Run it with
// a fixed count, e.g.
//
//	go test ./e2e -run XXX -bench ProcessCPUTracing -benchtime 2000x
func BenchmarkProcessCPUTracing(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc")
	}
	bin := buildCaddy(b)
	up := startStreamUpstream(b)
	spans, err := harness.StartSpanSink()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(spans.Close)
	ports := testcaddy.FreePorts(b, 2)
	site := func(port int, tracing string) string {
		return fmt.Sprintf(`:%d {
	bind 127.0.0.1
	%s
	louter {
		backend up {
			protocol openai_chat
			reverse_proxy %s
		}
		model * up
	}
}
`, port, tracing, up)
	}
	cfg := "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n}\n" + site(ports[0], "") + site(ports[1], "tracing")
	caddy := startCaddyBinary(b, bin, cfg, spans.TracingEnv()...)
	testcaddy.WaitListening(b, ports[0])
	testcaddy.WaitListening(b, ports[1])

	body := `{"model":"m","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	plainURL := testcaddy.URL(ports[0]) + "/v1/messages"
	tracedURL := testcaddy.URL(ports[1]) + "/v1/messages"
	runLoad(b, plainURL, body, harness.Anthropic, 50)
	runLoad(b, tracedURL, body, harness.Anthropic, 50)

	n := b.N
	b.ResetTimer()
	plain := cpuOf(b, caddy, func() { runLoad(b, plainURL, body, harness.Anthropic, n) })
	traced := cpuOf(b, caddy, func() { runLoad(b, tracedURL, body, harness.Anthropic, n) })
	b.StopTimer()
	// The batch span processor exports every OTEL_BSP_SCHEDULE_DELAY (set
	// short) or when a batch is full: wait, boundedly, for a first export.
	for i := 0; i < 100 && spans.Spans() == 0; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if spans.Spans() == 0 {
		b.Errorf("the receiver got no spans from the traced site; Caddy's log:\n%.3000s", caddy.Logs())
	}
	plainUS := float64(plain.Microseconds()) / float64(n)
	tracedUS := float64(traced.Microseconds()) / float64(n)
	b.ReportMetric(plainUS, "untraced-cpu-µs/req")
	b.ReportMetric(tracedUS, "traced-cpu-µs/req")
	if plainUS > 0 {
		b.ReportMetric(tracedUS/plainUS, "ratio")
	}
}

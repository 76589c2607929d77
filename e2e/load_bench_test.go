package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/testcaddy"
)

// BenchmarkProcessCPUPerStream measures the CPU time a separate Caddy
// process spends per streaming request in two configurations, against the
// same upstream stream (harness.Upstream: 198 text deltas and a tool call
// with its arguments in 40 pieces, one event per write and flush, as real
// servers send them):
//
//   - plain: stock reverse_proxy forwarding the OpenAI Chat stream as is;
//   - louter: an Anthropic client's request translated to OpenAI Chat, and
//     the stream translated back event by event.
//
// It reports µs of Caddy CPU (user+system, from /proc) per request for each,
// and their ratio. Run it with a fixed count, e.g.
//
//	go test ./e2e -run XXX -bench ProcessCPU -benchtime 2000x
//
// go run ./internal/loadbench measures the same and more (the issue-17
// table: big requests, passthrough, concurrency, latency, memory).
func BenchmarkProcessCPUPerStream(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc")
	}
	bin := buildCaddy(b)
	up := startStreamUpstream(b)
	ports := testcaddy.FreePorts(b, 2)
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
}
:%d {
	bind 127.0.0.1
	reverse_proxy %s
}
:%d {
	bind 127.0.0.1
	louter {
		backend up {
			protocol openai_chat
			reverse_proxy %s
		}
		model * up
	}
}
`, ports[0], up, ports[1], up)
	caddy := startCaddyBinary(b, bin, cfg)
	testcaddy.WaitListening(b, ports[0])
	testcaddy.WaitListening(b, ports[1])

	plainBody := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	louterBody := `{"model":"m","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	plainURL := testcaddy.URL(ports[0]) + "/v1/chat/completions"
	louterURL := testcaddy.URL(ports[1]) + "/v1/messages"

	// Warm up both paths (connection pools, lazily built state).
	runLoad(b, plainURL, plainBody, harness.OpenAIChat, 50)
	runLoad(b, louterURL, louterBody, harness.Anthropic, 50)

	n := b.N
	b.ResetTimer()
	plain := cpuOf(b, caddy, func() { runLoad(b, plainURL, plainBody, harness.OpenAIChat, n) })
	translated := cpuOf(b, caddy, func() { runLoad(b, louterURL, louterBody, harness.Anthropic, n) })
	b.StopTimer()
	plainUS := float64(plain.Microseconds()) / float64(n)
	louterUS := float64(translated.Microseconds()) / float64(n)
	b.ReportMetric(plainUS, "plain-cpu-µs/req")
	b.ReportMetric(louterUS, "louter-cpu-µs/req")
	if plainUS > 0 {
		b.ReportMetric(louterUS/plainUS, "ratio")
	}
}

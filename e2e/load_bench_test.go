package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/louter/louter/internal/testcaddy"
)

// BenchmarkProcessCPUPerStream measures the CPU time a separate Caddy
// process spends per streaming request in two configurations, against the
// same upstream stream (200 text deltas and a tool call with streamed
// arguments, one event per write and flush, as real servers send them):
//
//   - plain: stock reverse_proxy forwarding the OpenAI Chat stream as is;
//   - louter: an Anthropic client's request translated to OpenAI Chat, and
//     the stream translated back event by event.
//
// It reports µs of Caddy CPU (user+system, from /proc) per request for each,
// and their ratio. Run it with a fixed count, e.g.
//
//	go test ./e2e -run XXX -bench ProcessCPU -benchtime 2000x
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
	runLoad(b, plainURL, plainBody, "data: [DONE]", 50)
	runLoad(b, louterURL, louterBody, "event: message_stop", 50)

	n := b.N
	b.ResetTimer()
	plain := cpuOf(b, caddy.cmd.Process.Pid, func() { runLoad(b, plainURL, plainBody, "data: [DONE]", n) })
	translated := cpuOf(b, caddy.cmd.Process.Pid, func() { runLoad(b, louterURL, louterBody, "event: message_stop", n) })
	b.StopTimer()
	plainUS := float64(plain.Microseconds()) / float64(n)
	louterUS := float64(translated.Microseconds()) / float64(n)
	b.ReportMetric(plainUS, "plain-cpu-µs/req")
	b.ReportMetric(louterUS, "louter-cpu-µs/req")
	if plainUS > 0 {
		b.ReportMetric(louterUS/plainUS, "ratio")
	}
}

// runLoad sends n requests, four at a time, and checks every stream ended
// with want.
func runLoad(b *testing.B, url, body, want string, n int) {
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	var failed sync.Once
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				resp, err := testcaddy.Client.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					failed.Do(func() { b.Error(err) })
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Contains(got, []byte(want)) {
					failed.Do(func() { b.Errorf("stream lacks %q: %.300s", want, got) })
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
}

// cpuOf returns the CPU time (user+system) process pid spent while f ran.
func cpuOf(b *testing.B, pid int, f func()) time.Duration {
	before := procCPU(b, pid)
	f()
	return procCPU(b, pid) - before
}

func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// buildCaddy builds the Caddy binary with louter once per benchmark run.
func buildCaddy(b *testing.B) string {
	out := filepath.Join(b.TempDir(), "caddy")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "../cmd/caddy")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building caddy: %v\n%s", err, msg)
	}
	return out
}

// startStreamUpstream serves an OpenAI Chat stream of 200 text deltas and a
// tool call, one event per write, flushed after each.
func startStreamUpstream(b *testing.B) string {
	var events []string
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	events = append(events, chunk(`{"role":"assistant","content":""}`, "null"))
	for i := 0; i < 200; i++ {
		events = append(events, chunk(fmt.Sprintf(`{"content":"word%d "}`, i), "null"))
	}
	events = append(events, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}`, "null"))
	for _, frag := range []string{`{\"comm`, `and\":\"go`, ` test\"}`} {
		events = append(events, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+frag+`"}}]}`, "null"))
	}
	events = append(events, chunk(`{}`, `"tool_calls"`))
	events = append(events, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":210,"total_tokens":220}}`+"\n\n", "data: [DONE]\n\n")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, ev := range events {
			_, _ = io.WriteString(w, ev)
			_ = rc.Flush()
		}
	})}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

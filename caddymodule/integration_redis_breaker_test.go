package caddymodule_test

// Redis goes down under a Caddy process of its own (so its log is what
// an operator reads): the requests after the first failure do not each
// wait for Redis (hanging, then refusing connections), each site follows
// its on_error, the outage and the recovery are logged once each, every
// log line is JSON (go-redis's own lines included), and once Redis is
// back the requests are counted again.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// breakerTimeout is the sites' Redis timeout: what each request would
// wait for a Redis that does not answer, without the breaker.
const breakerTimeout = 500 * time.Millisecond

const breakerSite = `
:{SITE} {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix breaker-test:
			timeout {TIMEOUT}
			on_error {MODE}
		}
		client carol {
			key_sha256 {CAROL}
			requests 100000/30d
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model to-openai_chat oai
	}
}
`

func TestIntegrationRedisBreaker(t *testing.T) {
	srv := testredis.Start(t)
	ports := testcaddy.FreePorts(t, 3) // open site, closed site, mock
	site := func(port int, mode string) string {
		return strings.NewReplacer("{SITE}", fmt.Sprint(port), "{MOCK}", fmt.Sprint(ports[2]), "{MODE}", mode,
			"{REDIS}", srv.Addr, "{TIMEOUT}", breakerTimeout.String(), "{CAROL}", sha256Hex("carol-key")).Replace(breakerSite)
	}
	p := testcaddy.StartProcess(t, caddyProcessEnv, "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n}\n"+
		site(ports[0], "open")+site(ports[1], "closed")+
		fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\tlouter_mock {\n\t\tname breaker-mock\n\t}\n}\n", ports[2]))
	for _, port := range ports {
		testcaddy.WaitListening(t, port)
	}
	call := func(port int) int {
		s, _ := testcaddy.Do(t, http.MethodPost, testcaddy.URL(port)+"/v1/chat/completions",
			`{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer carol-key")
		return s
	}
	// counted is carol's request counter in Redis; 0 when Redis has none
	// or does not answer.
	counted := func() int64 {
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer rc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		keys, _ := rc.Keys(ctx, "breaker-test:{client carol}:requests:*").Result()
		if len(keys) != 1 {
			return 0
		}
		n, _ := rc.Get(ctx, keys[0]).Int64()
		return n
	}
	for _, port := range ports[:2] {
		if s := call(port); s != http.StatusOK {
			t.Fatalf("status %d with Redis up, want 200", s)
		}
	}
	if n := counted(); n != 2 {
		t.Fatalf("%d requests counted, want 2", n)
	}

	// Redis hangs: connections are accepted, nothing answers. Without
	// the breaker each request waited the timeout.
	srv.Pause()
	const n = 50
	start := time.Now()
	for i := 0; i < n; i++ {
		if s := call(ports[0]); s != http.StatusOK {
			t.Fatalf("on_error open, Redis down: request %d: status %d, want 200", i, s)
		}
	}
	open := time.Since(start)
	start = time.Now()
	for i := 0; i < n; i++ {
		if s := call(ports[1]); s != http.StatusServiceUnavailable {
			t.Fatalf("on_error closed, Redis down: request %d: status %d, want 503", i, s)
		}
	}
	closed := time.Since(start)
	t.Logf("Redis down, %d requests: on_error open %v (%v each), on_error closed %v (%v each); timeout %v",
		n, open.Round(time.Millisecond), (open / n).Round(time.Microsecond), closed.Round(time.Millisecond), (closed / n).Round(time.Microsecond), breakerTimeout)
	// The first request of each waits the timeout, and a probe every
	// cool-down (1s, then 2s, ...) may wait it too; the rest fail at once.
	// Without the breaker: n × the timeout (25s).
	if bound := 8 * breakerTimeout; open > bound || closed > bound {
		t.Errorf("%d requests with Redis down took %v (open) and %v (closed), want well under %v each: requests wait for Redis", n, open, closed, bound)
	}

	// Redis is gone: connections are refused. The probes that dial it
	// make go-redis log, which went to stderr as plain text.
	srv.Stop()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if s := call(ports[0]); s != http.StatusOK {
			t.Fatalf("on_error open, Redis gone: status %d, want 200", s)
		}
		if s := call(ports[1]); s != http.StatusServiceUnavailable {
			t.Fatalf("on_error closed, Redis gone: status %d, want 503", s)
		}
	}

	// Redis comes back (restarted, empty, on the same port): the requests
	// are counted again, and the closed site admits them, within a
	// cool-down or two.
	srv.Restart()
	back := time.Now()
	for counted() == 0 || call(ports[1]) != http.StatusOK {
		if time.Since(back) > 20*time.Second {
			t.Fatalf("requests not counted %v after Redis came back", time.Since(back))
		}
		call(ports[0])
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("counted again %v after Redis came back", time.Since(back).Round(time.Millisecond))

	// One line each for the outage and the recovery per site (each has
	// its own Redis client), all of them JSON.
	p.Stop()
	var downs, ups []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(p.Logs()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		msg, _ := entry["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "redis is down"):
			downs = append(downs, entry)
		case strings.HasPrefix(msg, "redis is back"):
			ups = append(ups, entry)
		}
	}
	if len(downs) != 2 || len(ups) != 2 {
		t.Fatalf("%d down and %d back lines, want 2 and 2 (one of each per site):\ndown: %v\nback: %v", len(downs), len(ups), downs, ups)
	}
	for _, d := range downs {
		if d["level"] != "error" || d["error"] == nil || d["redis"] != srv.Addr {
			t.Errorf("down line %v: want an error with the failure and the server", d)
		}
	}
	t.Logf("down: %v\nback: %v", downs[0], ups[0])
}

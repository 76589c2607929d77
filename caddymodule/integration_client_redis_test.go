package caddymodule_test

// Limits shared through a real redis-server: two louter handlers (two
// sites, each with its own Redis connection and no other shared counter)
// enforce one limit exactly under concurrent load; then Redis is killed
// and each follows its configured degraded mode.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
	"github.com/louter/louter/limits"
)

const redisSite = `
:{PORT} {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix shared-test:
			timeout 500ms
			on_error {MODE}
		}
		client carol {
			key_sha256 {CAROL}
			requests 10/30d
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT2}
		}
		model to-openai_chat oai
	}
}
`

func TestIntegrationRedisSharedLimit(t *testing.T) {
	srv := testredis.Start(t)
	site := func(port, mode string) string {
		return strings.NewReplacer("{PORT}", port, "{MODE}", mode, "{REDIS}", srv.Addr, "{CAROL}", sha256Hex("carol-key")).Replace(redisSite)
	}
	ports := testcaddy.Start(t, site("{PORT0}", "open")+site("{PORT1}", "closed")+`
:{PORT2} {
	bind 127.0.0.1
	louter_mock {
		name redis-mock
	}
}
`)
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	call := func(port int) int {
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(port)+"/v1/chat/completions",
			strings.NewReader(`{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer carol-key")
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	// 30 requests at once, alternating instances: exactly 10 pass.
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := call(ports[i%2])
			mu.Lock()
			counts[s]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200] != 10 || counts[429] != 20 {
		t.Fatalf("statuses %v, want 10×200 and 20×429", counts)
	}
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	keys, err := rc.Keys(context.Background(), "shared-test:{client carol}:requests:*").Result()
	rc.Close()
	if err != nil || len(keys) != 1 {
		t.Fatalf("redis keys %v, %v: want the one shared request counter", keys, err)
	}

	// Redis goes away: the open site admits, the closed one refuses.
	srv.Stop()
	if s := call(ports[0]); s != 200 {
		t.Errorf("on_error open: status %d, want 200", s)
	}
	if s := call(ports[1]); s != 503 {
		t.Errorf("on_error closed: status %d, want 503", s)
	}
	rec := httptest.NewRecorder()
	route := caddymodule.UsageAdmin{}.Routes()[0]
	_ = route.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, route.Pattern, nil))
	var rep limits.LedgerReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || rep.StoreErrors < 2 {
		t.Errorf("store errors not counted: %s", rec.Body)
	}
	// The shared ledger cannot be read with Redis gone: 503, in the
	// report's shape, saying so (with the process's memory ledger beside
	// it when other tests' handlers wrote to that one).
	if rec.Code != http.StatusServiceUnavailable || !strings.HasSuffix(rep.Source, "redis") || rep.Error == "" {
		t.Errorf("usage with redis down: %d %s", rec.Code, rec.Body)
	}
}

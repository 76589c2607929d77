package e2e

// Two Caddy processes, each with its own louter handlers, its own mock
// backend and its own Redis connection, share nothing but one real
// redis-server: the client's limit must hold exactly across both.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// instanceConfig is one Caddy instance: an on_error open site and an
// on_error closed site with the same redis setting and client, and a
// mock backend and metrics endpoint of the instance's own.
const instanceConfig = `{
	admin off
	auto_https off
	persist_config off
}
(louter_site) {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix two-instances:
			timeout 500ms
			on_error {args[0]}
		}
		client carol {
			key_sha256 {CAROL}
			requests 10/30d
		}
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model to-openai_chat oai
	}
}
:{OPEN} {
	import louter_site open
}
:{CLOSED} {
	import louter_site closed
}
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name {NAME}
	}
}
:{METRICS} {
	bind 127.0.0.1
	metrics
}
`

func TestTwoCaddyInstancesShareRedisLimit(t *testing.T) {
	srv := testredis.Start(t)
	ports := testcaddy.FreePorts(t, 8)
	// sites[i] = {open port, closed port} of instance i.
	var sites [2][2]int
	var metricsURLs [2]string
	for i := range sites {
		open, closed, mock, metrics := ports[4*i], ports[4*i+1], ports[4*i+2], ports[4*i+3]
		sites[i] = [2]int{open, closed}
		metricsURLs[i] = testcaddy.URL(metrics) + "/metrics"
		startCaddyProcess(t, strings.NewReplacer(
			"{REDIS}", srv.Addr, "{CAROL}", sha256Hex("carol-key"),
			"{OPEN}", fmt.Sprint(open), "{CLOSED}", fmt.Sprint(closed), "{MOCK}", fmt.Sprint(mock), "{METRICS}", fmt.Sprint(metrics),
			"{NAME}", fmt.Sprintf("instance-%d-mock", i),
		).Replace(instanceConfig))
	}
	for _, p := range ports {
		testcaddy.WaitListening(t, p)
	}

	type answer struct {
		status     int
		retryAfter string
	}
	call := func(port int) answer {
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(port)+"/v1/chat/completions",
			strings.NewReader(`{"model":"to-openai_chat","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer carol-key")
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Error(err)
			return answer{}
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return answer{resp.StatusCode, resp.Header.Get("Retry-After")}
	}

	// 40 requests at once, spread over both instances and both sites of
	// each: exactly 10 pass, the rest are refused with a Retry-After.
	const total = 40
	var mu sync.Mutex
	statuses := map[int]int{}
	perInstance := [2]int{}
	var wg sync.WaitGroup
	for i := 0; i < total; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, site := i%2, (i/2)%2
			a := call(sites[inst][site])
			mu.Lock()
			defer mu.Unlock()
			statuses[a.status]++
			switch a.status {
			case http.StatusOK:
				perInstance[inst]++
			case http.StatusTooManyRequests:
				if a.retryAfter == "" {
					t.Errorf("a 429 without Retry-After")
				}
			}
		}()
	}
	wg.Wait()
	if statuses[200] != 10 || statuses[429] != total-10 {
		t.Fatalf("statuses %v, want 10×200 and %d×429 over both instances", statuses, total-10)
	}
	t.Logf("admitted per instance: %v", perInstance)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	keys, err := rc.Keys(context.Background(), "two-instances:{client carol}:requests:*").Result()
	rc.Close()
	if err != nil || len(keys) != 1 {
		t.Fatalf("redis keys %v, %v: want the one request counter both instances share", keys, err)
	}

	// Redis goes away mid-test: on both instances the open site admits
	// (uncounted) and the closed site refuses with 503.
	srv.Stop()
	for i, s := range sites {
		if a := call(s[0]); a.status != http.StatusOK {
			t.Errorf("instance %d, on_error open: status %d, want 200", i, a.status)
		}
		if a := call(s[1]); a.status != http.StatusServiceUnavailable {
			t.Errorf("instance %d, on_error closed: status %d, want 503", i, a.status)
		}
	}

	// Each instance counted its own refusals: together the 30 over the
	// limit, and one each while Redis was gone.
	var limited float64
	for i, u := range metricsURLs {
		limited += refusals(t, u, `limit="requests"`)
		if n := refusals(t, u, `limit="store_unavailable"`); n != 1 {
			t.Errorf("instance %d: %v refusals for the unavailable store, want 1", i, n)
		}
	}
	if limited != total-10 {
		t.Errorf("the instances counted %v refusals by the request limit, want %d", limited, total-10)
	}
}

// refusals sums louter_limit_refusals_total of client carol with the given
// label on one instance's metrics endpoint.
func refusals(t *testing.T, url, label string) float64 {
	t.Helper()
	return testcaddy.Sum(testcaddy.Scrape(t, url), "louter_limit_refusals_total", `client_name="carol"`, label)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

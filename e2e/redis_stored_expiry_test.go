package e2e

// Stored responses' expiry and eviction across two Caddy processes sharing
// one real redis-server. Redis keeps the time, so the test moves a turn's
// clock by setting its remaining TTL (PEXPIRE) as if that much time had
// passed, and bounds the server's memory (maxmemory, volatile-lru) as the
// docs tell operators to.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// storedPair starts two Caddy processes sharing srv (storedInstanceConfig)
// and returns their ports (louter, mock, louter, mock) and a client call
// with a key (both APIs take it as a bearer token) and a mock scenario.
func storedPair(t *testing.T, srv *testredis.Server, name string) ([]int, func(method string, port int, path, key, body, scenario string) (int, gjson.Result)) {
	return storedPairWith(t, srv, name, storedInstanceConfig)
}

// storedPairWith is storedPair with another configuration, with the same
// placeholders.
func storedPairWith(t *testing.T, srv *testredis.Server, name, config string) ([]int, func(method string, port int, path, key, body, scenario string) (int, gjson.Result)) {
	ports := testcaddy.FreePorts(t, 4)
	for i := range 2 {
		startCaddyProcess(t, strings.NewReplacer(
			"{REDIS}", srv.Addr, "{ALICE}", sha256Hex("alice-key"), "{MALLORY}", sha256Hex("mallory-key"),
			"{PORT}", fmt.Sprint(ports[2*i]), "{MOCK}", fmt.Sprint(ports[2*i+1]), "{NAME}", fmt.Sprintf("%s-%d", name, i),
		).Replace(config))
	}
	for _, p := range ports {
		testcaddy.WaitListening(t, p)
	}
	return ports, func(method string, port int, path, key, body, scenario string) (int, gjson.Result) {
		t.Helper()
		req, _ := http.NewRequest(method, testcaddy.URL(port)+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Scenario", scenario)
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, gjson.ParseBytes(raw)
	}
}

func TestTwoCaddyInstancesStoredExpiryAndEviction(t *testing.T) {
	srv := testredis.Start(t)
	rc := srv.Client(t)
	ctx := context.Background()
	ports, call := storedPair(t, srv, "expiry")
	do := func(method string, port int, path, body string) (int, gjson.Result) {
		t.Helper()
		return call(method, port, path, "alice-key", body, "echo")
	}
	turn := func(port int, prev, input string) (int, gjson.Result) {
		body := fmt.Sprintf(`{"model":"m","input":%q}`, input)
		if prev != "" {
			body = fmt.Sprintf(`{"model":"m","previous_response_id":%q,"input":%q}`, prev, input)
		}
		return do("POST", port, "/v1/responses", body)
	}
	keyOf := func(id string) string {
		t.Helper()
		keys, err := rc.Keys(ctx, "stored:state:*"+id).Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("redis keys for %s: %v, %v", id, keys, err)
		}
		return keys[0]
	}
	a, b := ports[0], ports[2]

	status, r1 := turn(a, "", "first")
	if status != 200 {
		t.Fatalf("turn 1 on a: %d %s", status, r1.Raw)
	}
	id1 := r1.Get("id").Str
	status, r2 := turn(b, id1, "second")
	if status != 200 {
		t.Fatalf("turn 2 on b: %d %s", status, r2.Raw)
	}
	id2 := r2.Get("id").Str
	k1 := keyOf(id1)

	// Almost a whole TTL later, a continuation on instance a renews every
	// turn of the chain for both instances.
	if err := rc.PExpire(ctx, k1, 2*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	status, r3 := turn(a, id2, "third")
	if status != 200 {
		t.Fatalf("turn 3 on a: %d %s", status, r3.Raw)
	}
	if ttl := rc.PTTL(ctx, k1).Val(); ttl < time.Hour {
		t.Errorf("continuing the chain did not renew turn 1's TTL: %v left", ttl)
	}

	// Turn 1 expires: neither instance can read it or continue through
	// it, and they say so in the API's words; turn 2 itself is still there.
	if err := rc.PExpire(ctx, k1, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	for _, p := range []int{a, b} {
		if status, got := do("GET", p, "/v1/responses/"+id1, ""); status != 404 {
			t.Errorf("expired turn 1 read on :%d: %d %s", p, status, got.Raw)
		}
		if status, got := turn(p, id2, "after expiry"); status != 400 || got.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("continuing through the expired turn on :%d: %d %s", p, status, got.Raw)
		}
		if status, got := do("GET", p, "/v1/responses/"+id2, ""); status != 200 || got.Get("previous_response_id").Str != id1 {
			t.Errorf("turn 2 on :%d: %d %s", p, status, got.Raw)
		}
	}

	// Eviction: Redis bounded to about 512 KB more than it holds now, with
	// volatile-lru (every turn has a TTL). 60 turns of 20 KB, stored
	// alternately by the two instances, do not fit: the server evicts
	// turns, an evicted one is a clean 404 on both instances, and the
	// latest is read on the instance that did not store it.
	used := rc.InfoMap(ctx, "memory").Item("Memory", "used_memory")
	var usedBytes int64
	fmt.Sscan(used, &usedBytes)
	if err := rc.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ConfigSet(ctx, "maxmemory", fmt.Sprint(usedBytes+512<<10)).Err(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("y", 20<<10)
	var ids []string
	for i := range 60 {
		status, r := turn(ports[2*(i%2)], "", fmt.Sprintf("evict-%02d %s", i, big))
		if status != 200 {
			t.Fatalf("turn evict-%02d: %d %s", i, status, r.Raw)
		}
		ids = append(ids, r.Get("id").Str)
	}
	var evicted []string
	for _, id := range ids {
		if keys, _ := rc.Keys(ctx, "stored:state:*"+id).Result(); len(keys) == 0 {
			evicted = append(evicted, id)
		}
	}
	if len(evicted) == 0 || len(evicted) == len(ids) {
		t.Fatalf("Redis bounded to %d bytes evicted %d of 60 turns of 20 KB; want some", usedBytes+512<<10, len(evicted))
	}
	t.Logf("Redis evicted %d of 60 turns", len(evicted))
	for _, p := range []int{a, b} {
		if status, got := do("GET", p, "/v1/responses/"+evicted[0], ""); status != 404 {
			t.Errorf("evicted turn read on :%d: %d %s", p, status, got.Raw)
		}
		if status, got := turn(p, evicted[0], "x"); status != 400 || got.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("continuing an evicted turn on :%d: %d %s", p, status, got.Raw)
		}
	}
	if status, got := do("GET", a, "/v1/responses/"+ids[59], ""); status != 200 || !strings.Contains(got.Raw, "evict-59") {
		t.Errorf("the latest turn (stored by b) read on a: %d", status)
	}
}

// TestTwoCaddyInstancesBackground: a background response started on one
// instance is polled on the other; one cancelled on the other instance
// stays cancelled when the first instance's turn ends (its result is
// dropped).
func TestTwoCaddyInstancesBackground(t *testing.T) {
	srv := testredis.Start(t)
	ports, call := storedPair(t, srv, "background")
	a, b := ports[0], ports[2]
	poll := func(port int, id string) gjson.Result {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			status, got := call("GET", port, "/v1/responses/"+id, "alice-key", "", "echo")
			if status != 200 {
				t.Fatalf("GET %s on :%d: %d %s", id, port, status, got.Raw)
			}
			if s := got.Get("status").Str; s != "queued" && s != "in_progress" {
				return got
			}
		}
		t.Fatalf("%s still running", id)
		return gjson.Result{}
	}
	status, q := call("POST", a, "/v1/responses", "alice-key", `{"model":"m","input":"bg-on-a","background":true}`, "echo")
	if status != 200 || q.Get("status").Str != "queued" {
		t.Fatalf("background on a: %d %s", status, q.Raw)
	}
	if got := poll(b, q.Get("id").Str); got.Get("status").Str != "completed" || got.Get("output.0.content.0.text").Str != "bg-on-a" {
		t.Errorf("polled on b: %s", got.Raw)
	}

	// How long a slow turn takes, in the foreground.
	start := time.Now()
	if status, got := call("POST", b, "/v1/responses", "alice-key", `{"model":"m","input":"slow","store":false}`, "slow"); status != 200 {
		t.Fatalf("slow turn: %d %s", status, got.Raw)
	}
	slow := time.Since(start)

	status, q = call("POST", a, "/v1/responses", "alice-key", `{"model":"m","input":"slow-on-a","background":true}`, "slow")
	if status != 200 {
		t.Fatalf("slow background on a: %d %s", status, q.Raw)
	}
	id := q.Get("id").Str
	if status, got := call("POST", b, "/v1/responses/"+id+"/cancel", "alice-key", "", "echo"); status != 200 || got.Get("status").Str != "cancelled" {
		t.Fatalf("cancel on b: %d %s", status, got.Raw)
	}
	// Instance a's backend request runs to its end (b cannot reach it);
	// its result is not stored.
	time.Sleep(slow + 500*time.Millisecond)
	if journal := mockJournal(t, ports[1]).Array(); len(journal) != 2 || journal[1].Get("cancelled").Bool() {
		t.Errorf("instance a's backend requests: %v", journal)
	}
	if got := poll(a, id); got.Get("status").Str != "cancelled" {
		t.Errorf("after instance a's turn ended: %s", got.Raw)
	}
}

package e2e

// Stored responses across two Caddy processes sharing one real
// redis-server: a conversation started on one instance continues on the
// other (the history reaches the other instance's backend), is read there,
// and a third client's key can neither read nor continue it; an
// interaction (the Gemini Interactions API) likewise.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

const storedInstanceConfig = `{
	admin off
	auto_https off
	persist_config off
}
:{PORT} {
	bind 127.0.0.1
	louter {
		forward_headers X-Mock-Scenario
		redis {REDIS} {
			prefix stored:
		}
		client alice {
			key_sha256 {ALICE}
		}
		client mallory {
			key_sha256 {MALLORY}
		}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model * anth
	}
}
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name {NAME}
	}
}
`

func TestTwoCaddyInstancesShareStoredResponses(t *testing.T) {
	srv := testredis.Start(t)
	ports, call := storedPair(t, srv, "stored")
	do := func(method string, port int, path, key, body string) (int, gjson.Result) {
		t.Helper()
		return call(method, port, path, key, body, "echo")
	}
	a, b := ports[0], ports[2]
	status, r1 := do("POST", a, "/v1/responses", "alice-key", `{"model":"m","input":"first-on-a"}`)
	if status != 200 || r1.Get("id").Str == "" {
		t.Fatalf("turn 1 on instance a: %d %s", status, r1.Raw)
	}
	id1 := r1.Get("id").Str
	status, r2 := do("POST", b, "/v1/responses", "alice-key", fmt.Sprintf(`{"model":"m","previous_response_id":%q,"input":"second-on-b"}`, id1))
	if status != 200 || r2.Get("output.0.content.0.text").Str != "second-on-b" {
		t.Fatalf("turn 2 on instance b: %d %s", status, r2.Raw)
	}
	// Instance b's backend got turn 1, asked and answered, from Redis.
	resp, err := testcaddy.Client.Get(testcaddy.URL(ports[3]) + "/_mock/requests")
	if err != nil {
		t.Fatal(err)
	}
	journal, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	last := gjson.ParseBytes(journal).Get("@reverse.0.body").Raw
	if strings.Count(last, "first-on-a") < 2 || !strings.Contains(last, "second-on-b") {
		t.Errorf("instance b's backend did not get the history: %s", last)
	}
	// Read back on instance a; the other client finds nothing on either.
	if status, got := do("GET", a, "/v1/responses/"+r2.Get("id").Str, "alice-key", ""); status != 200 || got.Get("previous_response_id").Str != id1 {
		t.Errorf("GET on instance a: %d %s", status, got.Raw)
	}
	for _, p := range []int{a, b} {
		if status, got := do("GET", p, "/v1/responses/"+id1, "mallory-key", ""); status != 404 {
			t.Errorf("mallory read alice's response: %d %s", status, got.Raw)
		}
		if status, got := do("POST", p, "/v1/responses", "mallory-key", fmt.Sprintf(`{"model":"m","previous_response_id":%q,"input":"x"}`, id1)); status != 400 || got.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("mallory continued alice's response: %d %s", status, got.Raw)
		}
	}
	// An interaction likewise: started on a, continued on b, read on a,
	// invisible to the other client.
	status, i1 := do("POST", a, "/v1beta/interactions", "alice-key", `{"model":"m","input":"interaction-on-a"}`)
	if status != 200 || i1.Get("id").Str == "" {
		t.Fatalf("interaction 1 on instance a: %d %s", status, i1.Raw)
	}
	status, i2 := do("POST", b, "/v1beta/interactions", "alice-key", fmt.Sprintf(`{"model":"m","previous_interaction_id":%q,"input":"interaction-on-b"}`, i1.Get("id").Str))
	if status != 200 || i2.Get("steps.0.content.0.text").Str != "interaction-on-b" {
		t.Fatalf("interaction 2 on instance b: %d %s", status, i2.Raw)
	}
	if status, got := do("GET", a, "/v1beta/interactions/"+i2.Get("id").Str, "alice-key", ""); status != 200 || got.Get("previous_interaction_id").Str != i1.Get("id").Str ||
		got.Get("steps.0.content.0.text").Str != "interaction-on-b" {
		t.Errorf("GET interaction on instance a: %d %s", status, got.Raw)
	}
	if status, got := do("GET", b, "/v1beta/interactions/"+i1.Get("id").Str, "mallory-key", ""); status != 404 {
		t.Errorf("mallory read alice's interaction: %d %s", status, got.Raw)
	}

	// One hash per turn in Redis, with a TTL, and no credential in it.
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	keys, err := rc.Keys(context.Background(), "stored:state:*").Result()
	if err != nil || len(keys) != 4 {
		t.Fatalf("redis keys %v, %v: want the four turns", keys, err)
	}
	for _, k := range keys {
		if ttl := rc.PTTL(context.Background(), k).Val(); ttl <= 0 {
			t.Errorf("%s has no TTL", k)
		}
		v, _ := rc.HGetAll(context.Background(), k).Result()
		for _, field := range v {
			if strings.Contains(field, "alice-key") || strings.Contains(field, "Bearer") {
				t.Errorf("%s holds a credential: %s", k, field)
			}
		}
	}
}

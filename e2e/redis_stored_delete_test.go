package e2e

// Stored responses on a Responses backend across two Caddy processes
// sharing one real redis-server: a turn deleted on one instance cannot be
// continued on the other, whether the backend is called with its own key
// or with the client's (pass_client_auth), and another client's
// continuation never reaches the backend.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

const storedResponsesBackendConfig = `{
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
		backend shared {
			protocol openai_responses
			api_key shared-backend-key
			reverse_proxy 127.0.0.1:{MOCK}
		}
		backend own {
			protocol openai_responses
			pass_client_auth
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model shared-* shared
		model own-* own
	}
}
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name {NAME}
	}
}
`

func TestTwoCaddyInstancesDeleteOnResponsesBackend(t *testing.T) {
	srv := testredis.Start(t)
	ports, call := storedPairWith(t, srv, "delete", storedResponsesBackendConfig)
	a, b := ports[0], ports[2]
	journal := func(mock int) []gjson.Result {
		t.Helper()
		resp, err := testcaddy.Client.Get(testcaddy.URL(mock) + "/_mock/requests")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return gjson.ParseBytes(raw).Array()
	}
	reached := func(marker string) bool {
		for _, m := range []int{ports[1], ports[3]} {
			for _, r := range journal(m) {
				if strings.Contains(r.Get("body").Raw, marker) {
					return true
				}
			}
		}
		return false
	}
	refused := func(what string, status int, got gjson.Result) {
		t.Helper()
		if status != 400 || got.Get("error.code").Str != "previous_response_not_found" {
			t.Errorf("%s: %d %s, want 400 previous_response_not_found", what, status, got.Raw)
		}
	}

	for _, model := range []string{"shared-1", "own-1"} {
		status, r1 := call("POST", a, "/v1/responses", "alice-key", fmt.Sprintf(`{"model":%q,"input":"first-%s"}`, model, model), "echo")
		if status != 200 {
			t.Fatalf("%s: turn 1 on a: %d %s", model, status, r1.Raw)
		}
		id := r1.Get("id").Str
		// The other client, on the other instance, does not reach it.
		status, got := call("POST", b, "/v1/responses", "mallory-key", fmt.Sprintf(`{"model":%q,"previous_response_id":%q,"input":"mallory-%s"}`, model, id, model), "echo")
		if model == "shared-1" {
			refused("mallory continuing alice's response on b", status, got)
			if reached("mallory-" + model) {
				t.Errorf("%s: mallory's continuation reached a backend", model)
			}
		}
		// Deleted on a: a's backend is asked to delete it too, and b
		// continues it no more, through the backend or otherwise.
		if status, got := call("DELETE", a, "/v1/responses/"+id, "alice-key", "", "echo"); status != 200 {
			t.Fatalf("%s: DELETE on a: %d %s", model, status, got.Raw)
		}
		ja := journal(ports[1])
		if d := ja[len(ja)-1]; d.Get("method").Str != "DELETE" || d.Get("path").Str != "/v1/responses/"+id {
			t.Errorf("%s: a's backend did not get the DELETE: %s", model, d.Raw)
		}
		marker := "after-delete-" + model
		status, got = call("POST", b, "/v1/responses", "alice-key", fmt.Sprintf(`{"model":%q,"previous_response_id":%q,"input":%q}`, model, id, marker), "echo")
		refused(model+": continuing the deleted response on b", status, got)
		if reached(marker) {
			t.Errorf("%s: the deleted response was continued through a backend", model)
		}
		if status, _ := call("GET", b, "/v1/responses/"+id, "alice-key", "", "echo"); status != 404 {
			t.Errorf("%s: GET on b after DELETE: %d", model, status)
		}
	}

	// The tombstones expire as records do, and hold no credential.
	rc := srv.Client(t)
	keys, err := rc.Keys(context.Background(), "stored:state:*deleted:*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("tombstones %v, %v: want two", keys, err)
	}
	for _, k := range keys {
		if ttl := rc.PTTL(context.Background(), k).Val(); ttl <= 0 {
			t.Errorf("%s has no TTL", k)
		}
		v, _ := rc.HGetAll(context.Background(), k).Result()
		for _, field := range v {
			if strings.Contains(field, "key") || strings.Contains(field, "Bearer") {
				t.Errorf("%s holds a credential: %s", k, field)
			}
		}
	}
}

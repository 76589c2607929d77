package caddymodule_test

// Who owns a stored turn on a gateway without a key table, through a real
// Caddy: one key is one owner whatever header or query parameter carries
// it, another key is another owner; and two handlers with the same redis
// block, no key table and no limits keep their turns in Redis, so either
// continues and reads what the other stored.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// ownerSite is one louter handler with no key table; {STORE} is what
// goes in its body besides the backend (a redis block, stored_responses).
const ownerSite = `
:{PORT} {
	bind 127.0.0.1
	louter {
		{STORE}
		backend anth {
			protocol anthropic
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model * anth
	}
}
`

const ownerMock = `
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name owner-mock
	}
}
`

// ownerDo sends method to url with body and the headers (name, value
// pairs): the status and the answer.
func ownerDo(t *testing.T, method, url, body string, headers ...string) (int, gjson.Result) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := testcaddy.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, gjson.ParseBytes(raw)
}

// TestIntegrationStoredOwnerOneKeyAnyCarrier: without a key table, a turn
// stored with the key in one header is the same owner's with the key in
// any other carrier (x-goog-api-key, ?key=, Bearer, x-api-key), for
// interactions and responses alike, and never another key's.
func TestIntegrationStoredOwnerOneKeyAnyCarrier(t *testing.T) {
	site := strings.NewReplacer("{PORT}", "{PORT0}", "{MOCK}", "{PORT1}", "\t\t{STORE}\n", "").Replace(ownerSite)
	ports := testcaddy.Start(t, site+strings.ReplaceAll(ownerMock, "{MOCK}", "{PORT1}"))
	testcaddy.WaitListening(t, ports[1])
	base := testcaddy.URL(ports[0])
	const key = "owner-key-1"
	carriers := []struct {
		name    string
		query   string
		headers []string
	}{
		{"x-goog-api-key", "", []string{"X-Goog-Api-Key", key}},
		{"?key=", "?key=" + key, nil},
		{"Bearer", "", []string{"Authorization", "Bearer " + key}},
		{"x-api-key", "", []string{"X-Api-Key", key}},
	}
	others := []struct {
		name    string
		query   string
		headers []string
	}{
		{"another key", "", []string{"X-Goog-Api-Key", "owner-key-2"}},
		{"another key in ?key=", "?key=owner-key-2", nil},
		{"no key", "", nil},
		{"Basic", "", []string{"Authorization", "Basic b3duZXI6a2V5"}},
	}
	for _, api := range []struct{ name, path, prev, create string }{
		{"interactions", "/v1beta/interactions", "previous_interaction_id", `{"model":"m","input":"hello"}`},
		{"responses", "/v1/responses", "previous_response_id", `{"model":"m","input":"hello"}`},
	} {
		t.Run(api.name, func(t *testing.T) {
			status, first := ownerDo(t, "POST", base+api.path, api.create, "X-Goog-Api-Key", key)
			id := first.Get("id").Str
			if status != 200 || id == "" {
				t.Fatalf("stored with x-goog-api-key: %d %s", status, first.Raw)
			}
			for _, c := range carriers {
				if status, got := ownerDo(t, "GET", base+api.path+"/"+id+c.query, "", c.headers...); status != 200 || got.Get("id").Str != id {
					t.Errorf("GET with the key as %s: %d %s", c.name, status, got.Raw)
				}
				body := fmt.Sprintf(`{"model":"m",%q:%q,"input":"again"}`, api.prev, id)
				if status, got := ownerDo(t, "POST", base+api.path+c.query, body, c.headers...); status != 200 {
					t.Errorf("continued with the key as %s: %d %s", c.name, status, got.Raw)
				}
			}
			for _, o := range others {
				if status, got := ownerDo(t, "GET", base+api.path+"/"+id+o.query, "", o.headers...); status != 404 {
					t.Errorf("GET with %s: %d %s, want 404", o.name, status, got.Raw)
				}
			}
			// No key but a Basic credential: that credential is the owner,
			// and another Basic credential is another.
			status, basic := ownerDo(t, "POST", base+api.path, api.create, "Authorization", "Basic YTph")
			if status != 200 || basic.Get("id").Str == "" {
				t.Fatalf("stored with Basic: %d %s", status, basic.Raw)
			}
			if status, got := ownerDo(t, "GET", base+api.path+"/"+basic.Get("id").Str, "", "Authorization", "Basic YTph"); status != 200 {
				t.Errorf("GET with the same Basic credential: %d %s", status, got.Raw)
			}
			if status, got := ownerDo(t, "GET", base+api.path+"/"+basic.Get("id").Str, "", "Authorization", "Basic YjpiCg=="); status != 404 {
				t.Errorf("GET with another Basic credential: %d %s, want 404", status, got.Raw)
			}
		})
	}
}

// TestIntegrationRedisStoredResponsesWithoutKeys: two handlers with the
// same redis block, no key table and no limits (and stored_responses
// bounds of their own, so they share no memory store either) keep their
// turns in Redis: a turn stored on one is read and continued on the other.
func TestIntegrationRedisStoredResponsesWithoutKeys(t *testing.T) {
	srv := testredis.Start(t)
	store := func(maxBytes string) string {
		return fmt.Sprintf("redis %s {\n\t\t\tprefix owner-test:\n\t\t}\n\t\tstored_responses {\n\t\t\tmax_stored_bytes %s\n\t\t}", srv.Addr, maxBytes)
	}
	siteA := strings.NewReplacer("{PORT}", "{PORT0}", "{MOCK}", "{PORT2}", "{STORE}", store("1MiB")).Replace(ownerSite)
	siteB := strings.NewReplacer("{PORT}", "{PORT1}", "{MOCK}", "{PORT2}", "{STORE}", store("2MiB")).Replace(ownerSite)
	ports := testcaddy.Start(t, siteA+siteB+strings.ReplaceAll(ownerMock, "{MOCK}", "{PORT2}"))
	testcaddy.WaitListening(t, ports[1])
	testcaddy.WaitListening(t, ports[2])
	a, b := testcaddy.URL(ports[0]), testcaddy.URL(ports[1])
	auth := []string{"Authorization", "Bearer shared-key"}

	status, r1 := ownerDo(t, "POST", a+"/v1/responses", `{"model":"m","input":"first-on-a"}`, auth...)
	id1 := r1.Get("id").Str
	if status != 200 || id1 == "" {
		t.Fatalf("turn 1 on a: %d %s", status, r1.Raw)
	}
	if status, got := ownerDo(t, "GET", b+"/v1/responses/"+id1, "", auth...); status != 200 || got.Get("id").Str != id1 {
		t.Errorf("GET on b: %d %s", status, got.Raw)
	}
	status, r2 := ownerDo(t, "POST", b+"/v1/responses", fmt.Sprintf(`{"model":"m","previous_response_id":%q,"input":"second-on-b"}`, id1), auth...)
	if status != 200 || r2.Get("previous_response_id").Str != id1 {
		t.Fatalf("turn 2 on b: %d %s", status, r2.Raw)
	}
	if status, got := ownerDo(t, "GET", a+"/v1/responses/"+r2.Get("id").Str, "", auth...); status != 200 || got.Get("previous_response_id").Str != id1 {
		t.Errorf("GET of turn 2 on a: %d %s", status, got.Raw)
	}
	// Still one owner per key: another key finds nothing on either.
	for _, u := range []string{a, b} {
		if status, got := ownerDo(t, "GET", u+"/v1/responses/"+id1, "", "Authorization", "Bearer other-key"); status != 404 {
			t.Errorf("another key read the turn on %s: %d %s", u, status, got.Raw)
		}
	}
	keys, err := srv.Client(t).Keys(context.Background(), "owner-test:state:*").Result()
	if err != nil || len(keys) != 2 {
		t.Errorf("redis keys %v, %v: want the two turns", keys, err)
	}
}

package e2e

// Two Caddy processes on one real redis-server share the usage ledger and
// the keys created through the admin API: a client's spend reads the same
// from either instance and after both were restarted; a key created on one
// instance works on both, and stops working on both when revoked on the
// other; each instance's /metrics counts the spend it served; no key shows
// in the processes' logs or in an admin answer.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/loadbench/harness"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

// spendConfig is one instance: its own admin endpoint, site and mock
// backend; only Redis is shared. The key table is polled once a minute:
// what the test measures is the pub/sub notice.
const spendConfig = `{
	admin 127.0.0.1:{ADMIN}
	auto_https off
	persist_config off
}
:{SITE} {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix spend-e2e:
			ledger_flush 100ms
		}
		managed_keys {
			poll 1m
		}
		client carol {
			key_sha256 {CAROL}
		}
		price to-* input 2 output 10
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{MOCK}
		}
		model to-* oai
	}
}
:{MOCK} {
	bind 127.0.0.1
	louter_mock {
		name spend-mock
	}
}
`

type spendInstance struct {
	proc        *harness.Process
	site, admin int
}

func TestTwoInstancesShareLedgerAndKeys(t *testing.T) {
	srv := testredis.Start(t)
	var answers strings.Builder
	var procs []*harness.Process
	start := func() spendInstance {
		p := testcaddy.FreePorts(t, 3)
		in := spendInstance{site: p[0], admin: p[1]}
		in.proc = startCaddyProcess(t, strings.NewReplacer("{REDIS}", srv.Addr, "{CAROL}", sha256Hex("carol-key"),
			"{ADMIN}", fmt.Sprint(p[1]), "{SITE}", fmt.Sprint(p[0]), "{MOCK}", fmt.Sprint(p[2])).Replace(spendConfig))
		procs = append(procs, in.proc)
		for _, port := range p {
			testcaddy.WaitListening(t, port)
		}
		return in
	}
	api := func(in spendInstance, method, path string) (int, gjson.Result) {
		t.Helper()
		body := ""
		if method == http.MethodPost {
			body = `{"name":"dan","models":["to-*"]}`
		}
		s, b := testcaddy.Do(t, method, testcaddy.URL(in.admin)+path, body)
		answers.Write(b)
		return s, gjson.ParseBytes(b)
	}
	chat := func(in spendInstance, key string) int {
		t.Helper()
		s, _ := testcaddy.Do(t, http.MethodPost, testcaddy.URL(in.site)+"/v1/chat/completions",
			`{"model":"to-a","messages":[{"role":"user","content":"what did it cost?"}]}`, "Authorization", "Bearer "+key)
		return s
	}
	// usage reads carol's spend from an instance once it has written all
	// it recorded (what other instances have not written yet is not in
	// it).
	usage := func(in spendInstance) gjson.Result {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			s, u := api(in, http.MethodGet, "/louter/usage?client=carol")
			if s == 200 && u.Get("pending_records").Int() == 0 {
				return u
			}
			if time.Now().After(deadline) {
				t.Fatalf("usage: %d %s", s, u.Raw)
			}
		}
	}

	a, b := start(), start()
	for range 3 {
		if s := chat(a, "carol-key"); s != 200 {
			t.Fatalf("carol on a: %d", s)
		}
	}
	for range 2 {
		if s := chat(b, "carol-key"); s != 200 {
			t.Fatalf("carol on b: %d", s)
		}
	}
	// Both have written what they recorded: then both read the same.
	usage(a)
	usage(b)
	ua, ub := usage(a), usage(b)
	if ua.Get("totals.requests").Int() != 5 || ua.Get("totals").Raw != ub.Get("totals").Raw || ua.Get("rows").Raw != ub.Get("rows").Raw {
		t.Fatalf("carol's spend differs between the instances or is not 5 requests:\na: %s\nb: %s", ua.Raw, ub.Raw)
	}
	cost := ua.Get("totals.cost_usd").Float()
	if cost <= 0 || ua.Get("source").String() != "redis" {
		t.Fatalf("usage: %s", ua.Raw)
	}
	// Each instance's counters count what it served.
	for _, tt := range []struct {
		in   spendInstance
		want float64
	}{{a, 3}, {b, 2}} {
		m := testcaddy.Scrape(t, testcaddy.URL(tt.in.admin)+"/metrics")
		if got := m[`louter_spend_requests_total{backend="oai",client_name="carol",model="to-*"}`]; got != tt.want {
			t.Errorf("louter_spend_requests_total on an instance: %v, want %v", got, tt.want)
		}
	}

	// A key created on a works on b as soon as b has the notice.
	s, created := api(a, http.MethodPost, "/louter/keys")
	key := created.Get("key").String()
	if s != http.StatusCreated || key == "" {
		t.Fatalf("create: %d %s", s, created.Raw)
	}
	t0 := time.Now()
	for chat(b, key) != 200 {
		if time.Since(t0) > 10*time.Second {
			t.Fatal("the key created on a never worked on b")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("propagation of a created key to the other instance: %v", time.Since(t0))
	if s := chat(a, key); s != 200 {
		t.Errorf("the new key on a: %d", s)
	}
	// Revoked on b, it stops on a.
	if s, _ := api(b, http.MethodDelete, "/louter/keys/dan"); s != 200 {
		t.Fatalf("revoke: %d", s)
	}
	if s := chat(b, key); s != 401 {
		t.Errorf("the revoked key on b: %d", s)
	}
	t0 = time.Now()
	for chat(a, key) != 401 {
		if time.Since(t0) > 10*time.Second {
			t.Fatal("the key revoked on b kept working on a")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("propagation of a revocation to the other instance: %v", time.Since(t0))

	// Two more requests on a, which then exits at once, gracefully: its
	// Cleanup writes what it had not. b is killed. A fresh instance reads
	// everything.
	for range 2 {
		chat(a, "carol-key")
	}
	if !a.proc.Interrupt(10 * time.Second) {
		t.Error("a did not exit on SIGINT")
	}
	b.proc.Stop()
	c := start()
	uc := usage(c)
	if uc.Get("totals.requests").Int() != 7 || uc.Get("totals.cost_usd").Float() <= cost {
		t.Errorf("after the restart: %s, want 7 requests", uc.Raw)
	}
	if s, list := api(c, http.MethodGet, "/louter/keys"); s != 200 || list.Get(`keys.#(name=="dan")`).Exists() {
		t.Errorf("the revoked key is listed after the restart: %s", list.Raw)
	}

	// The key was in one answer, its creation's; in no log line.
	if n := strings.Count(answers.String(), key); n != 1 {
		t.Errorf("the key is in %d admin answers, want 1", n)
	}
	for i, p := range procs {
		if logs := p.Logs(); strings.Contains(logs, key) || strings.Contains(logs, "carol-key") {
			t.Errorf("process %d logged a key", i)
		}
	}
}

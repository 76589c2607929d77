package caddymodule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/louter/louter/caddymodule"
	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
	"github.com/louter/louter/limits"
)

// usageSite is one louter handler with client ledger-erin (a name no other
// test uses: the memory ledger is the process's, shared by every test of
// the package) and a price; {REDIS} is
// its redis block, or nothing for the memory ledger.
const usageSite = `
:{PORT} {
	bind 127.0.0.1
	louter {
{REDIS}		client ledger-erin {
			key_sha256 {ERIN}
		}
		price * input 1 output 1
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT3}
		}
		model {MODEL} oai
	}
}
`

// TestIntegrationUsageEveryLedger: with one handler on Redis and one in
// memory, GET /louter/usage reports both handlers' spend (it reported the
// Redis ledger alone), and a second handler on the same Redis server and
// prefix is not counted twice.
func TestIntegrationUsageEveryLedger(t *testing.T) {
	srv := testredis.Start(t)
	redisBlock := "\t\tredis " + srv.Addr + " {\n\t\t\tprefix usage-sources:\n\t\t\tledger_flush 20ms\n\t\t}\n"
	site := func(port, redis, model string) string {
		return strings.NewReplacer("{PORT}", port, "{REDIS}", redis, "{MODEL}", model, "{ERIN}", sha256Hex("ledger-erin-key")).Replace(usageSite)
	}
	ports := testcaddy.Start(t, site("{PORT0}", redisBlock, "on-redis")+site("{PORT1}", "", "in-memory")+site("{PORT2}", redisBlock, "on-redis")+`
:{PORT3} {
	bind 127.0.0.1
	louter_mock {
		name usage-mock
	}
}
`)
	for _, p := range ports[1:4] {
		testcaddy.WaitListening(t, p)
	}
	call := func(port int, model string) {
		req, _ := http.NewRequest(http.MethodPost, testcaddy.URL(port)+"/v1/chat/completions",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer ledger-erin-key")
		resp, err := testcaddy.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", model, resp.StatusCode)
		}
	}
	call(ports[0], "on-redis")
	call(ports[2], "on-redis") // the same Redis ledger, through another handler
	call(ports[1], "in-memory")
	call(ports[1], "in-memory")
	call(ports[1], "in-memory")

	route := caddymodule.UsageAdmin{}.Routes()[0]
	var rep limits.LedgerReport
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; {
		rec := httptest.NewRecorder()
		_ = route.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, route.Pattern+"?client=ledger-erin", nil))
		body = rec.Body.String()
		rep = limits.LedgerReport{}
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("usage: %d %s", rec.Code, body)
		}
		if rep.Pending == 0 && rep.Clients["ledger-erin"] != nil && rep.Clients["ledger-erin"].Models["on-redis"] != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	erin := rep.Clients["ledger-erin"]
	if erin == nil || erin.Models["on-redis"] == nil || erin.Models["in-memory"] == nil {
		t.Fatalf("erin's spend on both handlers is not in the report: %s", body)
	}
	if got := erin.Models["on-redis"].Requests; got != 2 {
		t.Errorf("on-redis: %d requests, want 2 (two handlers, one Redis ledger, counted once)", got)
	}
	if got := erin.Models["in-memory"].Requests; got != 3 {
		t.Errorf("in-memory: %d requests, want 3", got)
	}
	if rep.Totals.Requests != 5 || rep.Totals.CostMicro == 0 || rep.Source != "memory+redis" {
		t.Errorf("totals %+v, source %q: want 5 priced requests from memory+redis", rep.Totals, rep.Source)
	}
	if len(rep.Sources) != 2 || rep.Sources[0].Source != "memory" || rep.Sources[0].Totals.Requests != 3 ||
		rep.Sources[1].Source != "redis" || rep.Sources[1].Prefix != "usage-sources:" || rep.Sources[1].Totals.Requests != 2 {
		t.Errorf("sources: %+v", rep.Sources)
	}
}

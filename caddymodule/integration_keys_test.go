package caddymodule_test

// The keys admin API, model limits, budget alerts and the spend counters
// through a real Caddy with its admin endpoint on and a real redis-server:
// a key created at run time works at once, is limited by its model limits,
// alerts once at its budget threshold, rotates and is revoked; a client of
// the config cannot be changed through the API; /metrics counts the spend
// the ledger holds; no key shows in an answer of the API or in the log.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/louter/louter/internal/testcaddy"
	"github.com/louter/louter/internal/testredis"
)

var managedKeysCaddyfile = `
:{PORT0} {
	bind 127.0.0.1
	louter {
		redis {REDIS} {
			prefix keys-test:
			ledger_flush 50ms
		}
		managed_keys
		alert_webhook {WEBHOOK}
		client carol {
			key_sha256 {CAROL}
		}
		price to-* input 2 output 10` + keysBackend + `
	}
}
` + mockSite(":{PORT1}", "keys-mock")

// keysBackend is the keys tests' backend, on {PORT1}, and its models.
const keysBackend = `
		backend oai {
			protocol openai_chat
			reverse_proxy 127.0.0.1:{PORT1}
		}
		model to-* oai`

func TestIntegrationKeysAdmin(t *testing.T) {
	srv := testredis.Start(t)
	var hookMu sync.Mutex
	var hooks []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hookMu.Lock()
		hooks = append(hooks, string(b))
		hookMu.Unlock()
	}))
	defer hook.Close()
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	admin := testcaddy.FreePorts(t, 1)[0]
	ports := testcaddy.StartWith(t, testcaddy.Options{AdminPort: admin, LogLevel: "INFO", LogFile: logFile},
		strings.NewReplacer("{REDIS}", srv.Addr, "{WEBHOOK}", hook.URL, "{CAROL}", sha256Hex("carol-key")).Replace(managedKeysCaddyfile))
	testcaddy.WaitListening(t, admin)
	testcaddy.WaitListening(t, ports[1])
	adminURL := fmt.Sprintf("http://127.0.0.1:%d", admin)

	var answers strings.Builder // every answer of the admin API, grepped for keys at the end
	api := func(method, path, body string) (int, gjson.Result) {
		t.Helper()
		s, b := testcaddy.Do(t, method, adminURL+path, body)
		answers.Write(b)
		return s, gjson.ParseBytes(b)
	}
	chat := func(key, model string) int {
		t.Helper()
		s, _ := testcaddy.Do(t, http.MethodPost, testcaddy.URL(ports[0])+"/v1/chat/completions",
			`{"model":"`+model+`","messages":[{"role":"user","content":"hello there"}]}`, "Authorization", "Bearer "+key)
		return s
	}

	// The config's client is listed, as such.
	if s, list := api("GET", "/louter/keys", ""); s != 200 || list.Get(`keys.#(name=="carol").source`).String() != "config" {
		t.Fatalf("list: %d %s", s, list.Raw)
	}
	// Create: the key once, in the answer; in force at once.
	s, dave := api("POST", "/louter/keys", `{"name":"dave","models":["to-*"],"budget":"0.002usd/1d","budget_alert":"50%",
		"model_limits":[{"match":"to-limited","requests":"1/1h"}]}`)
	daveKey := dave.Get("key").String()
	if s != http.StatusCreated || !strings.HasPrefix(daveKey, "lk_") || dave.Get("source").String() != "api" || dave.Get("fingerprint").String() == "" {
		t.Fatalf("create: %d %s", s, dave.Raw)
	}
	if s := chat(daveKey, "to-a"); s != 200 {
		t.Fatalf("the new key: status %d", s)
	}
	// Its model limit: one request an hour for to-limited, counted apart.
	if a, b, c := chat(daveKey, "to-limited"), chat(daveKey, "to-limited"), chat(daveKey, "to-b"); a != 200 || b != 429 || c != 200 {
		t.Errorf("model limit: %d %d %d, want 200 429 200", a, b, c)
	}
	// The list and the key's own entry never show the key.
	if s, got := api("GET", "/louter/keys/dave", ""); s != 200 || got.Get("key").Exists() || got.Get("budget_alert").String() != "50%" ||
		got.Get("model_limits.0.requests").String() != "1/1h" {
		t.Errorf("get: %d %s", s, got.Raw)
	}
	// Refusals: a config client, a taken name, a key field, a bad limit.
	for _, tt := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"DELETE", "/louter/keys/carol", "", 409, "defined in the Caddy config"},
		{"POST", "/louter/keys/carol/rotate", "", 409, "defined in the Caddy config"},
		{"POST", "/louter/keys", `{"name":"carol"}`, 409, "defined in the Caddy config"},
		{"POST", "/louter/keys", `{"name":"dave"}`, 409, "exists"},
		{"POST", "/louter/keys", `{"name":"erin","key_sha256":"00"}`, 400, "key_sha256"},
		{"POST", "/louter/keys", `{"name":"erin","requests":"lots"}`, 400, "requests"},
		{"POST", "/louter/keys", `{"name":"bad name"}`, 400, "name"},
		{"DELETE", "/louter/keys/nobody", "", 404, "no key named"},
	} {
		if s, got := api(tt.method, tt.path, tt.body); s != tt.status || !strings.Contains(got.Get("error").String(), tt.says) {
			t.Errorf("%s %s %s: %d %s, want %d saying %q", tt.method, tt.path, tt.body, s, got.Raw, tt.status, tt.says)
		}
	}

	// The budget: requests until it refuses; the alert fired once, at 50%.
	for i := 0; i < 200 && chat(daveKey, "to-a") == 200; i++ {
	}
	if s := chat(daveKey, "to-a"); s != 429 {
		t.Fatalf("dave's budget never refused: %d", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		hookMu.Lock()
		n := len(hooks)
		hookMu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	hookMu.Lock()
	if len(hooks) != 1 || gjson.Get(hooks[0], "client").String() != "dave" || gjson.Get(hooks[0], "threshold_percent").Int() != 50 ||
		gjson.Get(hooks[0], "budget_usd").Float() != 0.002 || gjson.Get(hooks[0], "spent_usd").Float() < 0.001 {
		t.Errorf("webhook posts: %q, want one for dave at 50%%", hooks)
	}
	hookMu.Unlock()

	// Rotate: the old key stops, the new one works.
	s, rot := api("POST", "/louter/keys/dave/rotate", "")
	newKey := rot.Get("key").String()
	if s != 200 || newKey == "" || newKey == daveKey || rot.Get("rotated").String() == "" {
		t.Fatalf("rotate: %d %s", s, rot.Raw)
	}
	if a, b := chat(daveKey, "to-b"), chat(newKey, "to-limited"); a != 401 || b != 429 {
		t.Errorf("after rotation: old key %d (want 401), new key %d (want 429: the limits went on)", a, b)
	}
	// Update: a new spend budget; the limits are the key's, not the config's.
	if s, up := api("PUT", "/louter/keys/dave", `{"models":["to-*"],"budget":"100usd/1d"}`); s != 200 || up.Get("budget").String() != "100usd/1d" {
		t.Errorf("update: %d %s", s, up.Raw)
	}
	if s := chat(newKey, "to-b"); s != 200 {
		t.Errorf("after the budget was raised: %d", s)
	}

	// Spend: /metrics counts what the ledger holds for dave.
	var usage gjson.Result
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, usage = api("GET", "/louter/usage?client=dave", "")
		if usage.Get("pending_records").Int() == 0 {
			break
		}
	}
	// The process's memory ledger may be listed beside Redis (other tests'
	// handlers use it); dave's rows are Redis's alone.
	if !strings.HasSuffix(usage.Get("source").String(), "redis") || usage.Get("rows.0.backend").String() != "oai" || usage.Get("rows.0.model").String() != "to-*" {
		t.Fatalf("usage: %s", usage.Raw)
	}
	metrics := testcaddy.Scrape(t, adminURL+"/metrics")
	labels := `{backend="oai",client_name="dave",model="to-*"}`
	if got, want := metrics["louter_spend_requests_total"+labels], usage.Get("totals.requests").Float(); got != want || got == 0 {
		t.Errorf("louter_spend_requests_total %v, the ledger %v", got, want)
	}
	if got, want := metrics["louter_spend_usd_total"+labels], usage.Get("totals.cost_usd").Float(); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", want) || got == 0 {
		t.Errorf("louter_spend_usd_total %v, the ledger %v", got, want)
	}
	for kind, field := range map[string]string{"input": "input_tokens", "output": "output_tokens"} {
		l := `{backend="oai",client_name="dave",kind="` + kind + `",model="to-*"}`
		if got, want := metrics["louter_spend_tokens_total"+l], usage.Get("totals."+field).Float(); got != want || got == 0 {
			t.Errorf("louter_spend_tokens_total %s: %v, the ledger %v", kind, got, want)
		}
	}

	// Revoke: the key stops at once.
	if s, _ := api("DELETE", "/louter/keys/dave", ""); s != 200 {
		t.Fatalf("revoke: %d", s)
	}
	if s := chat(newKey, "to-b"); s != 401 {
		t.Errorf("a revoked key: %d, want 401", s)
	}
	if s := chat("carol-key", "to-b"); s != 200 {
		t.Errorf("the config's key: %d", s)
	}

	// No key in any answer of the API or in the log.
	logged, _ := os.ReadFile(logFile)
	for _, k := range []string{daveKey, newKey, "carol-key"} {
		if strings.Contains(answers.String(), k) && k != daveKey && k != newKey {
			t.Errorf("an admin answer shows the key %q", k)
		}
		if strings.Contains(string(logged), k) {
			t.Errorf("the log shows the key %q", k)
		}
	}
	// Each key is in exactly one answer: its create or rotate.
	for _, k := range []string{daveKey, newKey} {
		if n := strings.Count(answers.String(), k); n != 1 {
			t.Errorf("the key %q is in %d answers, want 1", k, n)
		}
	}
	if n := strings.Count(string(logged), "budget alert: spend crossed the threshold"); n != 1 {
		t.Errorf("%d budget alert lines in the log, want 1", n)
	}
}

// Without redis, the keys live in Caddy's storage: a created key works at
// once and stops when revoked; the storage holds its SHA-256, never the
// key.
func TestIntegrationKeysAdminStorage(t *testing.T) {
	dir := t.TempDir()
	admin := testcaddy.FreePorts(t, 1)[0]
	ports := testcaddy.StartWith(t, testcaddy.Options{AdminPort: admin, StorageDir: dir}, `
:{PORT0} {
	bind 127.0.0.1
	louter {
		managed_keys`+keysBackend+`
	}
}
`+mockSite(":{PORT1}", "keys-storage-mock"))
	testcaddy.WaitListening(t, admin)
	testcaddy.WaitListening(t, ports[1])
	do := func(method, url, auth, body string) (int, gjson.Result) {
		t.Helper()
		var header []string
		if auth != "" {
			header = []string{"Authorization", "Bearer " + auth}
		}
		s, b := testcaddy.Do(t, method, url, body, header...)
		return s, gjson.ParseBytes(b)
	}
	adminURL := fmt.Sprintf("http://127.0.0.1:%d/louter/keys", admin)
	chatURL := testcaddy.URL(ports[0]) + "/v1/chat/completions"
	const body = `{"model":"to-a","messages":[{"role":"user","content":"hi"}]}`
	if s, _ := do("POST", chatURL, "", body); s != 401 {
		t.Errorf("no key with managed_keys on: %d, want 401", s)
	}
	s, created := do("POST", adminURL, "", `{"name":"frank"}`)
	key := created.Get("key").String()
	if s != 201 || key == "" {
		t.Fatalf("create: %d %s", s, created.Raw)
	}
	if s, _ := do("POST", chatURL, key, body); s != 200 {
		t.Errorf("the new key: %d", s)
	}
	stored, err := os.ReadFile(filepath.Join(dir, "louter", "keys.json"))
	if err != nil || strings.Contains(string(stored), key) || !strings.Contains(string(stored), "frank") {
		t.Errorf("storage: %v %s", err, stored)
	}
	if s, _ := do("DELETE", adminURL+"/frank", "", ""); s != 200 {
		t.Fatalf("revoke: %d", s)
	}
	if s, _ := do("POST", chatURL, key, body); s != 401 {
		t.Errorf("the revoked key: %d, want 401", s)
	}
}

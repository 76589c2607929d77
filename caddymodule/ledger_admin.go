package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/louter/louter/limits"
)

func init() {
	caddy.RegisterModule(UsageAdmin{})
}

// UsageAdmin is the admin.api.louter_usage module: it serves the usage
// ledger on Caddy's admin endpoint, at GET /louter/usage, as JSON (the
// shape is documented in docs/keys-and-spend.md and stable):
//
//	{"since": "...", "source": "redis", "sources": [...], "filter": {"client": "alice"},
//	 "rows": [{"day": "2026-11-27", "client": "alice", "model": "gpt-*",
//	   "backend": "openai", "requests": 3, "input_tokens": 1200,
//	   "output_tokens": 300, "cost_usd": 1.25, "cost_micro_usd": 1250000}],
//	 "totals": {"requests": 3, ...},
//	 "clients": {"alice": {"cost_usd": 1.25, "models": {"gpt-*": {...}}}},
//	 "store_errors": 0, "pending_records": 0, "lost_records": 0}
//
// Query parameters filter the rows: client, model (the route pattern),
// backend, and from and to (UTC days, 2006-01-02, both included).
//
// The ledger counts, per UTC day, client, model route (the pattern of the
// route that served the request, as in the metrics' model label, never the
// name a client sent, which would grow it without bound) and backend, the
// requests, tokens and cost (from the configured prices) of every chat
// request of an authenticated client. With redis configured it is kept in
// Redis, shared by every instance and kept across restarts (each instance
// writes what it recorded every ledger_flush; what it has not written yet
// is in pending_records, not in rows). Without, it is this process's, since
// it started; config reloads keep it; it holds at most
// limits.DefaultLedgerEntries lines and limits.MemoryLedgerDays days: past
// that, new lines are added up under "(other)". Like every admin.api
// module it is always loaded; it needs no configuration.
//
// Each handler keeps its ledger in memory or, with redis, in Redis; the
// report is every handler's, merged (limits.Gather): the memory
// ledger once, each Redis server and prefix once (handlers sharing one
// share its rows, which are not counted twice), the rows of one key added
// up, and "sources" lists each ledger with its own totals. When one
// cannot be read, the others' rows are still in the answer, with status
// 503 and the error.
//
// "since" is when the ledger began counting, the earliest of its sources:
// for the memory ledger, when the first config with client keys or limits
// was loaded; for Redis, the first day it holds (or now, empty); with no
// ledger, when the process started. It is never the time of the query.
type UsageAdmin struct{}

// CaddyModule returns the Caddy module information.
func (UsageAdmin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.louter_usage",
		New: func() caddy.Module { return new(UsageAdmin) },
	}
}

// Routes implements caddy.AdminRouter.
func (UsageAdmin) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/louter/usage", Handler: caddy.AdminHandlerFunc(serveUsage)}}
}

func serveUsage(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method %s not allowed", r.Method)}
	}
	q := r.URL.Query()
	f := limits.LedgerFilter{Client: q.Get("client"), Model: q.Get("model"), Backend: q.Get("backend"), From: q.Get("from"), To: q.Get("to")}
	for _, d := range []string{f.From, f.To} {
		if _, err := time.Parse(limits.DayFormat, d); d != "" && err != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("from and to are UTC days such as 2026-01-31, not %q", d)}
		}
	}
	var memory *limits.Ledger
	var redis []limits.RedisSource
	for _, u := range usageLedgers.all() {
		if u.redis == nil {
			memory = u.memory // one per process (sharedCounters)
		} else {
			redis = append(redis, limits.RedisSource{Server: u.redis.server, Ledger: u.redis.ledger})
		}
	}
	rep, err := limits.Gather(r.Context(), f, memory, redis, processStart)
	countersPool.Range(func(_, v any) bool { rep.StoreErrors += v.(*counters).storeErrors.Load(); return false })
	status := http.StatusOK
	if err != nil {
		// Still the report's shape: what could be read, and the error.
		status, rep.Error = http.StatusServiceUnavailable, err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(rep)
}

var processStart = time.Now() // when the process started, as far as louter can tell

// usageLedgers are the running handlers' ledgers (listLedger).
var usageLedgers registry[*ledgerUse]

// ledgerUse is one handler's ledger: its Redis one, or the memory one.
type ledgerUse struct {
	memory *limits.Ledger
	redis  *redisConn
}

// listLedger lists a handler's ledger until the returned function is called.
func listLedger(memory *limits.Ledger, conn *redisConn) func() {
	return usageLedgers.add(&ledgerUse{memory, conn})
}

// Interface guard
var _ caddy.AdminRouter = UsageAdmin{}

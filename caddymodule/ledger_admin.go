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
//	{"since": "...", "source": "redis", "filter": {"client": "alice"},
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
// "since" is when the ledger began counting: for the memory ledger, when
// the first config with client keys or limits was loaded; for Redis, the
// first day it holds (or now, empty); with no ledger, when the process
// started. It is never the time of the query.
type UsageAdmin struct{}

// processStart is when the process started, as far as louter can tell:
// when this package was initialised.
var processStart = time.Now()

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
	var rep limits.LedgerReport
	var limitErrors int64
	countersPool.Range(func(_, v any) bool {
		c := v.(*counters)
		limitErrors = c.storeErrors.Load()
		// Read the memory ledger without holding it: with no louter config
		// loaded there is none, and the report is empty.
		rows, _ := c.ledger.Query(r.Context(), f)
		rep = limits.NewLedgerReport(c.ledger.Since(), "memory", f, rows)
		return false
	})
	if rep.Source == "" {
		rep = limits.NewLedgerReport(processStart, "memory", f, nil)
	}
	status := http.StatusOK
	if rl := redisLedgers.latest(); rl != nil {
		since, err := rl.Since(r.Context())
		var rows []limits.LedgerRow
		if err == nil {
			rows, err = rl.Query(r.Context(), f)
		}
		rep = limits.NewLedgerReport(since, "redis", f, rows)
		if err != nil {
			// Still an answer in the report's shape, with the error and
			// the counts that tell what went wrong.
			status, rep.Error = http.StatusServiceUnavailable, err.Error()
		}
		rep.Pending, rep.Lost = rl.Pending(), rl.Lost()
		limitErrors += rl.Errors()
	}
	rep.StoreErrors = limitErrors
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(rep)
}

// redisLedgers are the Redis ledgers of the loaded configs, the latest
// last: the admin endpoint reads the latest.
var redisLedgers registry[*limits.RedisLedger]

// Interface guard
var _ caddy.AdminRouter = UsageAdmin{}

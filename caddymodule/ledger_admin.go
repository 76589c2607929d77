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
// ledger on Caddy's admin endpoint, at GET /louter/usage, as JSON:
//
//	{"since": "...", "clients": {"alice": {"cost_usd": 1.25, "models":
//	  {"gpt-*": {"requests": 3, "input_tokens": 1200, "output_tokens": 300,
//	  "cost_usd": 1.25}}}}}
//
// The ledger counts, per client and model route (the pattern of the model
// route that served the request, as in the metrics' model label, never the
// name a client sent, which would grow it without bound), the requests,
// tokens and cost (from the configured prices) of every chat request of an
// authenticated client since the process started; config reloads keep it.
// It holds at most limits.DefaultLedgerEntries client and route pairs
// (and one "(other)" per client): past that, new ones are added up under
// "(other)". Like every admin.api module it is always loaded; it needs no
// configuration.
//
// "since" is when the ledger began counting: when the first config with
// client keys or limits was loaded (the ledger lives from then on, across
// reloads that keep such a config); with no ledger, when the process
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
	rep := limits.LedgerReport{Since: processStart, Clients: map[string]*limits.LedgerClient{}}
	// Read the ledger without holding it: with no louter config loaded
	// there is none, and the report is empty.
	countersPool.Range(func(_, v any) bool {
		c := v.(*counters)
		rep = c.ledger.Report()
		rep.StoreErrors = c.storeErrors.Load()
		return false
	})
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(rep)
}

// Interface guard
var _ caddy.AdminRouter = UsageAdmin{}

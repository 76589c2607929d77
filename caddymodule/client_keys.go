package caddymodule

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
	"github.com/louter/louter/limits"
	"github.com/louter/louter/translate"
)

// This file holds the client key table: who may call louter, with which
// models, under which limits (client_limits.go applies those). Agents send
// their key in their protocol's own header (x-api-key, Authorization:
// Bearer, x-goog-api-key, ?key=), which Caddy's basic_auth does not read;
// louter checks it against the table's hashes. An operator who already
// authenticates clients with another Caddy module names the identity it
// established instead (identity).

// ClientAccess is the key table and the limits of louter's clients. With
// neither clients nor identity set, anyone may call louter and only route
// limits apply.
type ClientAccess struct {
	// The clients that may call louter, each with its key, the models it
	// may use and its limits. A recognised API request (chat, token
	// counting, model lists, embeddings) without a known key is refused
	// with 401 in the client's protocol (Gemini: 400 API_KEY_INVALID, or
	// 403 PERMISSION_DENIED without a key), a chat request for a model the
	// client may not use with 403.
	Clients []*ClientKey `json:"clients,omitempty"`

	// A placeholder naming a client another handler already
	// authenticated, such as {http.auth.user.id} after basic_auth or a
	// header forward_auth copied ({http.request.header.X-User}). When it
	// resolves to a non-empty name, that name is the client, without a
	// key: the entry of clients with that name gives its models and
	// limits, or, with none, the entry named "*", or else no restriction.
	// When it resolves to nothing, the request's key is checked.
	Identity string `json:"identity,omitempty"`

	// What models cost, for spend budgets and the usage ledger: the
	// first entry whose pattern matches the backend's model name (after
	// any rename), or else the client's, prices the request.
	Prices []ModelPrice `json:"prices,omitempty"`

	// Keep the limit counters in Redis, shared by every instance that
	// names the same server (client_redis.go). Default: in memory.
	Redis *RedisCounters `json:"redis,omitempty"`

	// Accept, besides clients, the keys created at run time through the
	// admin API (/louter/keys, keys_admin.go), kept in Redis when redis
	// is set, else in Caddy's storage. Turning it on requires a key on
	// every request, like clients.
	ManagedKeys *ManagedKeys `json:"managed_keys,omitempty"`

	// A URL that budget alerts (budget_alert) are POSTed to, as JSON
	// {"client", "scope", "budget_usd", "spent_usd", "threshold_percent",
	// "window_end"}: never a key. Each POST may take 5 seconds; it is
	// not retried.
	AlertWebhook string `json:"alert_webhook,omitempty"`
}

// ClientKey is one client of louter.
type ClientKey struct {
	// The client's name: the {http.louter.client_name} placeholder, the
	// access log's louter_client_name field, the client_name label of
	// louter's metrics, and the usage ledger's key.
	Name string `json:"name"`

	// The SHA-256 of the client's key, in hex (e.g. the output of
	// `printf %s "$KEY" | sha256sum`). The key itself is never in the
	// configuration, which Caddy autosaves and serves on its admin API.
	KeySHA256 string `json:"key_sha256,omitempty"`

	// A file holding the client's key itself (surrounding white space is
	// ignored), read when the configuration is loaded.
	KeyFile string `json:"key_file,omitempty"`

	// An environment variable holding the client's key itself, read when
	// the configuration is loaded.
	KeyEnv string `json:"key_env,omitempty"`

	// Globs of the models the client may ask for ('*' matches any run of
	// characters). Empty: every model.
	Models []string `json:"models,omitempty"`

	// The client's limits, counted over all its requests.
	Limits

	// Limits of the client's requests for some models, on top of its
	// own: the first entry whose match the requested model name matches
	// applies, counted apart from the client's other models.
	ModelLimits []ModelLimit `json:"model_limits,omitempty"`
}

// ModelLimit is a client's limits for the models a glob matches.
type ModelLimit struct {
	// A glob of the model names the client asks for ('*' matches any
	// run of characters).
	Match string `json:"match"`

	// The limits, counted over the client's requests for those models.
	Limits
}

// Limits are what a client or a route may use. Every field is optional.
type Limits struct {
	// Requests per window, as "N/WINDOW": "100/1m", "5000/1d".
	Requests string `json:"requests,omitempty"`

	// Input plus output tokens per window, as "N/WINDOW": "2000000/1h".
	// A request is admitted on an estimate of its input, and counted with
	// the tokens the backend reports once it ends.
	Tokens string `json:"tokens,omitempty"`

	// Requests in progress (streaming or not) at once.
	Concurrent int `json:"concurrent,omitempty"`

	// Spend per window in US dollars, as "AMOUNT/WINDOW": "50usd/30d".
	// Costs come from prices; a request is admitted while the window's
	// spend is under the budget.
	Budget string `json:"budget,omitempty"`

	// A share of the budget, as a percentage ("80%"), whose crossing in
	// a window is logged once (a warning) and, with alert_webhook set,
	// POSTed there once — once for all instances sharing Redis.
	BudgetAlert string `json:"budget_alert,omitempty"`
}

// ModelPrice is what a model costs, in US dollars per million tokens.
type ModelPrice struct {
	// A glob of the model names the price applies to.
	Match string `json:"match"`
	// Input tokens not read from or written to the cache.
	Input float64 `json:"input,omitempty"`
	// Output tokens, reasoning included.
	Output float64 `json:"output,omitempty"`
	// Input tokens read from the cache; default: the input price.
	CacheRead float64 `json:"cache_read,omitempty"`
	// Input tokens written to the cache; default: the input price.
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// clientEntry is a provisioned ClientKey.
type clientEntry struct {
	name   string
	hash   []byte // sha256 of the key; nil for an identity-only entry
	models []string
	policy limits.Policy
	alert  int // budget_alert's percentage; 0: none
	// modelLimits are the limits by model glob, first match wins.
	modelLimits []modelPolicy
	// managed says the entry is a key of the keys API.
	managed bool
}

// modelPolicy is a provisioned ModelLimit.
type modelPolicy struct {
	match  string
	policy limits.Policy
	alert  int
}

// access is louter's provisioned ClientAccess.
type access struct {
	keys       bool // a key or identity is required
	clients    []*clientEntry
	byName     map[string]*clientEntry
	identity   string
	prices     []ModelPrice
	limiter    *limits.Limiter
	ledger     limits.LedgerStore // the memory ledger, or redis.ledger
	redis      *redisConn         // nil: no redis configured
	routeLimit map[*ModelRoute]limits.Policy
	routeAlert map[*ModelRoute]int // budget_alert percentages
	// managed is the keys API's table, when managed_keys is on
	// (managed_keys.go); alerts posts budget alerts (budget_alert.go).
	managed *managedKeys
	alerts  *budgetAlerts
	// storeErrors counts the counter store's failures; failClosed refuses
	// requests when it fails.
	storeErrors *atomic.Int64
	failClosed  bool
	// release lets go of the counters and connections above; close
	// calls it once, from the handler's Cleanup.
	release []func()
}

// close releases what a holds.
func (a *access) close() {
	if a == nil {
		return
	}
	// Last acquired, first released, as defer: a watcher stops before
	// the connection it reads through closes.
	for _, f := range slices.Backward(a.release) {
		f()
	}
	a.release = nil
}

// policy provisions the limits.
func (lc Limits) policy() (limits.Policy, error) {
	var p limits.Policy
	var err error
	if lc.Requests != "" {
		if p.Requests, err = limits.ParseRate(lc.Requests); err != nil {
			return p, fmt.Errorf("requests: %w", err)
		}
	}
	if lc.Tokens != "" {
		if p.Tokens, err = limits.ParseRate(lc.Tokens); err != nil {
			return p, fmt.Errorf("tokens: %w", err)
		}
	}
	if lc.Concurrent < 0 {
		return p, errors.New("concurrent must not be negative")
	}
	p.Concurrent = int64(lc.Concurrent)
	if lc.Budget != "" {
		if p.Budget, err = limits.ParseBudget(lc.Budget); err != nil {
			return p, err
		}
	}
	return p, nil
}

// provisionAccess builds the key table and the limiter.
func (l *Louter) provisionAccess(ctx caddy.Context) error {
	a := &access{byName: map[string]*clientEntry{}, identity: l.Identity, prices: l.Prices, routeLimit: map[*ModelRoute]limits.Policy{}, routeAlert: map[*ModelRoute]int{}}
	a.keys = len(l.Clients) > 0 || l.Identity != "" || l.ManagedKeys != nil
	var errs []error
	for i, c := range l.Clients {
		if c == nil || c.Name == "" {
			errs = append(errs, fmt.Errorf("client %d: no name", i))
			continue
		}
		if a.byName[c.Name] != nil {
			errs = append(errs, fmt.Errorf("client %q: defined twice", c.Name))
			continue
		}
		e, entryErrs := c.entry()
		for _, err := range entryErrs {
			errs = append(errs, fmt.Errorf("client %q: %w", c.Name, err))
		}
		if c.KeySHA256 == "" && c.KeyFile == "" && c.KeyEnv == "" && l.Identity == "" { // a key source that failed is reported above
			errs = append(errs, fmt.Errorf("client %q: no key (key_sha256, key_file or key_env), and no identity is configured", c.Name))
		}
		a.clients = append(a.clients, e)
		a.byName[c.Name] = e
	}
	for i := range l.Models {
		m := &l.Models[i]
		if m.Limits == nil {
			continue
		}
		p, alert, err := m.Limits.provision()
		if err != nil {
			errs = append(errs, fmt.Errorf("model route %q: %w", m.Match, err))
		}
		if p.On() {
			a.routeLimit[m] = p
			if alert > 0 {
				a.routeAlert[m] = alert
			}
		}
	}
	for _, p := range l.Prices {
		if p.Match == "" || p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
			errs = append(errs, fmt.Errorf("price %q: a model pattern and non-negative prices are required", p.Match))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, line := range unpricedBudgets(l.Clients, l.Models, l.Prices) { // budget_check.go
		l.logger.Warn(line)
	}
	if !a.keys && len(a.routeLimit) == 0 && l.Redis == nil {
		return nil // nothing to check: l.access stays nil, ServeHTTP pays nothing
	}
	// A redis block with nothing to count still makes its connection: the
	// stored responses go there (stateful_host.go), so that instances
	// sharing it share their turns.
	if a.keys {
		for name, b := range l.Backends {
			if b != nil && b.PassClientAuth && l.Identity == "" {
				// The client's key is louter's own: passing it on shows
				// it to the backend, which will refuse it anyway.
				l.logger.Warn("pass_client_auth forwards louter's client keys to the backend", zap.String("backend", name))
			}
		}
	}
	// What these hold is let go in Cleanup, not ctx.OnCancel: a module's
	// ctx is a copy of its config's, and what is added to the copy never
	// runs (the Redis connections stayed open and the counters referenced
	// after every reload).
	var release func()
	a.limiter, a.ledger, a.storeErrors, release = sharedCounters()
	memory := a.ledger.(*limits.Ledger)
	a.release = append(a.release, release)
	if l.Redis != nil {
		conn, err := l.Redis.connect(l.logger)
		if err != nil {
			a.close()
			return err
		}
		a.limiter, a.ledger, a.redis = conn.limiter, conn.ledger, conn
		a.release = append(a.release, conn.close)
		a.failClosed = l.Redis.failClosed()
	}
	a.release = append(a.release, listLedger(memory, a.redis)) // ledger_admin.go
	if l.ManagedKeys != nil {
		a.provisionManaged(ctx, l) // managed_keys.go
	}
	if err := a.provisionAlerts(l); err != nil { // budget_alert.go
		a.close()
		return err
	}
	l.access = a
	return nil
}

// entry provisions the client; each error is one line of its own.
func (c *ClientKey) entry() (*clientEntry, []error) {
	e := &clientEntry{name: c.Name, models: c.Models}
	var errs []error
	var err error
	if e.hash, err = c.keyHash(); err != nil {
		errs = append(errs, err)
	}
	if err := e.setLimits(c.Limits, c.ModelLimits); err != nil {
		errs = append(errs, err)
	}
	return e, errs
}

// setLimits provisions a client's limits and model limits.
func (e *clientEntry) setLimits(lim Limits, models []ModelLimit) error {
	var err error
	if e.policy, e.alert, err = lim.provision(); err != nil {
		return err
	}
	e.modelLimits = nil
	for _, m := range models {
		if m.Match == "" {
			return errors.New("model_limits: an entry without match")
		}
		p, alert, err := m.Limits.provision()
		if err != nil {
			return fmt.Errorf("model_limits %q: %w", m.Match, err)
		}
		e.modelLimits = append(e.modelLimits, modelPolicy{match: m.Match, policy: p, alert: alert})
	}
	return nil
}

// provision is policy, with budget_alert's percentage.
func (lc Limits) provision() (limits.Policy, int, error) {
	p, err := lc.policy()
	if err != nil || lc.BudgetAlert == "" {
		return p, 0, err
	}
	pct, err := parsePercent(lc.BudgetAlert)
	if err != nil {
		return p, 0, fmt.Errorf("budget_alert: %w", err)
	}
	if !p.Budget.On() {
		return p, 0, errors.New("budget_alert: no budget to alert on")
	}
	return p, pct, nil
}

// keyHash returns the SHA-256 of the client's key from whichever source
// is configured, or nil when none is.
func (c *ClientKey) keyHash() ([]byte, error) {
	n := 0
	for _, s := range []string{c.KeySHA256, c.KeyFile, c.KeyEnv} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New("only one of key_sha256, key_file and key_env may be set")
	}
	var key string
	switch {
	case c.KeySHA256 != "":
		h, err := hex.DecodeString(c.KeySHA256)
		if err != nil || len(h) != sha256.Size {
			return nil, errors.New("key_sha256 must be 64 hexadecimal digits")
		}
		return h, nil
	case c.KeyFile != "":
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("key_file: %w", err)
		}
		key = strings.TrimSpace(string(b))
	case c.KeyEnv != "":
		key = strings.TrimSpace(os.Getenv(c.KeyEnv))
		if key == "" {
			return nil, fmt.Errorf("key_env: %s is not set", c.KeyEnv)
		}
	default:
		return nil, nil
	}
	if key == "" {
		return nil, errors.New("the key is empty")
	}
	h := sha256.Sum256([]byte(key))
	return h[:], nil
}

// clientCtxKey is the request context key of the client louter
// authenticated.
type clientCtxKey struct{}

// clientOf returns the client louter authenticated for r, or nil.
func clientOf(r *http.Request) *clientEntry {
	c, _ := r.Context().Value(clientCtxKey{}).(*clientEntry)
	return c
}

// authenticate checks the key or identity of a recognised API request
// when a key table is configured. It returns the request carrying the
// client, or, having answered with the refusal, false. req is the request's
// one classification, the one it is then served as: every request louter
// serves (any action but actNext) is checked.
func (l *Louter) authenticate(w http.ResponseWriter, r *http.Request, req apiRequest) (*http.Request, bool) {
	a := l.access
	if a == nil || !a.keys {
		return r, true
	}
	if req.action == actNext {
		return r, true // not an API request: the site's other handlers decide
	}
	p := req.protocol
	if p == "" {
		p = v1Shape(r.Header) // protocols.go
	}
	c, refusal := a.identify(r)
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	extra, _ := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if refusal != authOK {
		// No exchange record exists yet to publish the fields the README
		// promises on every line (exchange_record.go): a refusal sets them
		// itself, so refused requests show in the access log and in
		// log_append like the requests louter rejects later.
		if repl != nil {
			repl.Set("http.louter.client", string(p))
			repl.Set("http.louter.outcome", outcomeRejected)
		}
		if extra != nil {
			extra.Set(zap.String("louter_client", string(p)))
			extra.Set(zap.String("louter_outcome", outcomeRejected))
		}
		l.countAuthRefusal(p, refusal)
		writeAuthError(w, p, refusal, "")
		return r, false
	}
	if repl != nil {
		repl.Set("http.louter.client_name", c.name)
	}
	if extra != nil {
		extra.Set(zap.String("louter_client_name", c.name))
	}
	return r.WithContext(context.WithValue(r.Context(), clientCtxKey{}, c)), true
}

// authResult is why a request was not authenticated.
type authResult int

const (
	authOK authResult = iota
	authMissing
	authInvalid
	authModel
)

// authRefusalReasons are louter_auth_refusals_total's reason labels, by
// authResult.
var authRefusalReasons = [...]string{
	authMissing: "missing_key",
	authInvalid: "invalid_key",
	authModel:   "model_not_allowed",
}

// countAuthRefusal counts a request the key table refused in
// louter_auth_refusals_total, by client protocol and reason: a refused
// key is not a client, so client_name would say nothing.
func (l *Louter) countAuthRefusal(p translate.Protocol, why authResult) {
	if l.metrics != nil {
		l.metrics.authRefusals.WithLabelValues(string(p), authRefusalReasons[why]).Inc()
	}
}

// identify finds the request's client: by the identity placeholder, else
// by its key, whose hash is compared with every entry's in constant time.
func (a *access) identify(r *http.Request) (*clientEntry, authResult) {
	if a.identity != "" {
		if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
			if id := repl.ReplaceAll(a.identity, ""); id != "" {
				if c := a.byName[id]; c != nil {
					return c, authOK
				}
				if c := a.byName["*"]; c != nil {
					return &clientEntry{name: id, models: c.models, policy: c.policy}, authOK
				}
				return &clientEntry{name: id}, authOK
			}
		}
	}
	key := redact.ClientKey(r.Header, r.URL.RawQuery)
	if key == "" {
		return nil, authMissing
	}
	sum := sha256.Sum256([]byte(key))
	var found *clientEntry
	for _, c := range a.clients {
		if c.hash != nil && subtle.ConstantTimeCompare(c.hash, sum[:]) == 1 {
			found = c // no early exit: every entry is compared
		}
	}
	if found == nil {
		found = a.managed.find(sum) // managed_keys.go
	}
	if found == nil {
		return nil, authInvalid
	}
	return found, authOK
}

// allows reports whether the client may use model.
func (c *clientEntry) allows(model string) bool {
	if len(c.models) == 0 {
		return true
	}
	for _, m := range c.models {
		if globMatch(m, model) {
			return true
		}
	}
	return false
}

// modelAllowed answers with 403 a request, on an endpoint other than chat
// (embeddings, token counting), for a model its client may not use.
func (l *Louter) modelAllowed(w http.ResponseWriter, r *http.Request, p translate.Protocol, model string) bool {
	if c := clientOf(r); c != nil && !c.allows(model) {
		l.countAuthRefusal(p, authModel)
		writeAuthError(w, p, authModel, model)
		return false
	}
	return true
}

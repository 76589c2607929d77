package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/louter/louter/keys"
)

func init() {
	caddy.RegisterModule(KeysAdmin{})
}

// KeysAdmin is the admin.api.louter_keys module: on Caddy's admin
// endpoint (with its access rules: its listen address, origins, remote
// admin's client certificates) it creates, lists, updates, rotates and
// revokes the client keys that louter handlers with managed_keys accept:
//
//	GET    /louter/keys              {"keys": [KEY, ...]}, by name
//	POST   /louter/keys              SPEC with a name → 201 KEY, with "key"
//	GET    /louter/keys/NAME         KEY
//	PUT    /louter/keys/NAME         SPEC → KEY (models and limits replaced)
//	POST   /louter/keys/NAME/rotate  → KEY, with the new "key"
//	DELETE /louter/keys/NAME         → {"name": NAME, "revoked": true}
//
// SPEC is a client of the config without its key: {"name", "models",
// "requests", "tokens", "concurrent", "budget", "budget_alert",
// "model_limits"}. KEY is the same with "source" ("api", or "config" for
// the config's clients, listed but not changeable here), "fingerprint"
// (the first 12 hex digits of the key's SHA-256), "created" and
// "rotated". The key itself is in the answer of a create or rotate, once:
// louter keeps only its SHA-256. A change is in force on this instance
// when the answer is sent, and on every instance sharing the store once
// it sees it (Redis: published at once; else within managed_keys' poll).
// Like every admin.api module it is always loaded; with no loaded handler
// that has managed_keys on, it answers 503.
type KeysAdmin struct{}

// CaddyModule returns the Caddy module information.
func (KeysAdmin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.louter_keys",
		New: func() caddy.Module { return new(KeysAdmin) },
	}
}

// Routes implements caddy.AdminRouter.
func (KeysAdmin) Routes() []caddy.AdminRoute {
	h := caddy.AdminHandlerFunc(serveKeys)
	return []caddy.AdminRoute{{Pattern: "/louter/keys", Handler: h}, {Pattern: "/louter/keys/", Handler: h}}
}

// keyInfo is a key as the API shows it.
type keyInfo struct {
	Name        string       `json:"name"`
	Source      string       `json:"source"`
	Key         string       `json:"key,omitempty"`
	Fingerprint string       `json:"fingerprint,omitempty"`
	Models      []string     `json:"models,omitempty"`
	Limits                   // requests, tokens, concurrent, budget, budget_alert
	ModelLimits []ModelLimit `json:"model_limits,omitempty"`
	Created     *time.Time   `json:"created,omitempty"`
	Rotated     *time.Time   `json:"rotated,omitempty"`
}

// keySpec is the body of a create or an update.
type keySpec struct {
	Name string `json:"name,omitempty"`
	managedSpec
}

// validName is what a managed client may be called: it is a metric label
// and a log field, so plain characters, and not the names louter uses.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

const keysTimeout = 5 * time.Second

func serveKeys(w http.ResponseWriter, r *http.Request) error {
	live := liveManaged.all()
	if len(live) == 0 {
		return apiErr(http.StatusServiceUnavailable, errors.New("no loaded louter handler has managed_keys on"))
	}
	m := live[len(live)-1]
	ctx, cancel := context.WithTimeout(r.Context(), keysTimeout)
	defer cancel()
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/louter/keys"), "/")
	name, action, _ := strings.Cut(rest, "/")
	configured := func(name string) bool {
		return slices.ContainsFunc(live, func(m *managedKeys) bool { return m.configClients[name] != nil })
	}
	var answer any
	status := http.StatusOK
	var err error
	switch {
	case name == "" && r.Method == http.MethodGet:
		answer, err = listKeys(ctx, m, live)
	case name == "" && r.Method == http.MethodPost:
		status = http.StatusCreated
		answer, err = createKey(ctx, m, r.Body, configured)
	case name == "":
		return apiErr(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
	case configured(name) && (action != "" || r.Method != http.MethodGet):
		return apiErr(http.StatusConflict, fmt.Errorf("client %q is defined in the Caddy config; change it there and reload: the keys API changes only the keys it created", name))
	case action == "rotate" && r.Method == http.MethodPost:
		answer, err = rotateKey(ctx, m, name)
	case action != "":
		return apiErr(http.StatusNotFound, fmt.Errorf("no such keys API path; POST /louter/keys/NAME/rotate rotates"))
	case r.Method == http.MethodGet:
		answer, err = getKey(ctx, m, live, name)
	case r.Method == http.MethodPut:
		answer, err = updateKey(ctx, m, name, r.Body)
	case r.Method == http.MethodDelete:
		err = m.store.Delete(ctx, name)
		answer = map[string]any{"name": name, "revoked": true}
	default:
		return apiErr(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
	}
	if err != nil {
		return keysError(err, name)
	}
	if r.Method != http.MethodGet {
		// In force here before the answer goes: every handler of this
		// process reloads the table now.
		for _, lm := range live {
			_ = lm.watcher.Sync(ctx)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(answer)
}

func apiErr(status int, err error) error { return caddy.APIError{HTTPStatus: status, Err: err} }

// keysError is the API error of a store's failure.
func keysError(err error, name string) error {
	var bad badSpecError
	var done caddy.APIError
	switch {
	case errors.As(err, &done):
		return err
	case errors.As(err, &bad):
		return apiErr(http.StatusBadRequest, err)
	case errors.Is(err, keys.ErrExists):
		return apiErr(http.StatusConflict, fmt.Errorf("a key named %q exists; rotate it, or revoke it first", name))
	case errors.Is(err, keys.ErrNotFound):
		return apiErr(http.StatusNotFound, fmt.Errorf("no key named %q", name))
	}
	return apiErr(http.StatusServiceUnavailable, fmt.Errorf("the key store: %w", err))
}

type badSpecError struct{ error }

// readSpec decodes and checks a create or update body.
func readSpec(body io.Reader) (keySpec, json.RawMessage, error) {
	var s keySpec
	dec := json.NewDecoder(io.LimitReader(body, 64<<10))
	dec.DisallowUnknownFields() // key_sha256 and friends are not for here
	if err := dec.Decode(&s); err != nil {
		return s, nil, badSpecError{fmt.Errorf("the body: %w (want name, models, requests, tokens, concurrent, budget, budget_alert, model_limits)", err)}
	}
	for _, m := range s.Models {
		if m == "" {
			return s, nil, badSpecError{errors.New("models: an empty pattern")}
		}
	}
	if err := (&clientEntry{}).setLimits(s.Limits, s.ModelLimits); err != nil {
		return s, nil, badSpecError{err}
	}
	spec, err := json.Marshal(s.managedSpec)
	return s, spec, err
}

func createKey(ctx context.Context, m *managedKeys, body io.Reader, configured func(string) bool) (any, error) {
	s, spec, err := readSpec(body)
	if err != nil {
		return nil, err
	}
	if !validName.MatchString(s.Name) {
		return nil, badSpecError{fmt.Errorf("name %q: want 1 to 64 letters, digits and . _ @ -, starting with a letter or digit", s.Name)}
	}
	if configured(s.Name) {
		return nil, apiErr(http.StatusConflict, fmt.Errorf("client %q is defined in the Caddy config; choose another name", s.Name))
	}
	key, sha, err := keys.New()
	if err != nil {
		return nil, err
	}
	e := keys.Entry{Name: s.Name, SHA256: sha, Spec: spec, Created: time.Now().UTC()}
	if err := m.store.Create(ctx, e); err != nil {
		return nil, keysError(err, s.Name) // the name is the body's
	}
	info := entryInfo(e, s.managedSpec)
	info.Key = key
	return info, nil
}

func rotateKey(ctx context.Context, m *managedKeys, name string) (any, error) {
	key, sha, err := keys.New()
	if err != nil {
		return nil, err
	}
	var e keys.Entry
	err = m.store.Update(ctx, name, func(cur *keys.Entry) error {
		cur.SHA256, cur.Rotated = sha, time.Now().UTC()
		e = *cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	var spec managedSpec
	_ = json.Unmarshal(e.Spec, &spec)
	info := entryInfo(e, spec)
	info.Key = key
	return info, nil
}

func updateKey(ctx context.Context, m *managedKeys, name string, body io.Reader) (any, error) {
	s, spec, err := readSpec(body)
	if err != nil {
		return nil, err
	}
	if s.Name != "" && s.Name != name {
		return nil, badSpecError{fmt.Errorf("the body names %q, the path %q: a key cannot be renamed", s.Name, name)}
	}
	var e keys.Entry
	err = m.store.Update(ctx, name, func(cur *keys.Entry) error {
		cur.Spec = spec
		e = *cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entryInfo(e, s.managedSpec), nil
}

func getKey(ctx context.Context, m *managedKeys, live []*managedKeys, name string) (any, error) {
	all, err := listKeys(ctx, m, live)
	if err != nil {
		return nil, err
	}
	for _, k := range all.Keys {
		if k.Name == name {
			return k, nil
		}
	}
	return nil, keys.ErrNotFound
}

type keyList struct {
	Keys []keyInfo `json:"keys"`
}

// listKeys lists the store's keys, read now, and the config's clients.
func listKeys(ctx context.Context, m *managedKeys, live []*managedKeys) (keyList, error) {
	t, err := m.store.Load(ctx)
	if err != nil {
		return keyList{}, err
	}
	list := keyList{Keys: []keyInfo{}}
	seen := map[string]bool{}
	for _, lm := range live {
		for name, c := range lm.configClients {
			if seen[name] {
				continue
			}
			seen[name] = true
			list.Keys = append(list.Keys, keyInfo{Name: name, Source: "config", Models: c.Models, Limits: c.Limits, ModelLimits: c.ModelLimits})
		}
	}
	for name, e := range t.Entries {
		if seen[name] {
			continue // the config's client wins
		}
		var spec managedSpec
		_ = json.Unmarshal(e.Spec, &spec)
		list.Keys = append(list.Keys, entryInfo(e, spec))
	}
	slices.SortFunc(list.Keys, func(a, b keyInfo) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

func entryInfo(e keys.Entry, spec managedSpec) keyInfo {
	info := keyInfo{Name: e.Name, Source: "api", Models: spec.Models, Limits: spec.Limits, ModelLimits: spec.ModelLimits}
	if len(e.SHA256) >= 12 {
		info.Fingerprint = e.SHA256[:12]
	}
	if !e.Created.IsZero() {
		c := e.Created
		info.Created = &c
	}
	if !e.Rotated.IsZero() {
		r := e.Rotated
		info.Rotated = &r
	}
	return info
}

// Interface guard
var _ caddy.AdminRouter = KeysAdmin{}

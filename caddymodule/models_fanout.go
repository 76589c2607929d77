package caddymodule

import (
	"context"
	"crypto/sha256"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/louter/louter/caddymodule/internal/redact"
)

// The backends with list_models passthrough are asked for their lists all
// at once, under one deadline (list_models_timeout), and their answers are
// kept for a short while: a list request waited for each backend in turn
// before (three 10-second backends made a 30-second list), and asked them
// all again at every request. A backend that fails or misses the deadline
// is logged and left out of that answer; an answer that comes in after
// the deadline is still kept for the next request.

// defaultListModelsTimeout is list_models_timeout's default.
const defaultListModelsTimeout = 5 * time.Second

// listCacheTTL is how long a backend's list is kept.
const listCacheTTL = 30 * time.Second

// maxListCache bounds the lists kept: one a backend, or, for a backend
// with pass_client_auth, one a backend and client credential.
const maxListCache = 256

// provisionListing sets up the deadline in force and the cache.
func (l *Louter) provisionListing() {
	l.listTimeout = time.Duration(l.ListModelsTimeout)
	if l.listTimeout == 0 {
		l.listTimeout = defaultListModelsTimeout
	}
	l.listCache = &listCache{ttl: listCacheTTL}
}

// listCache holds the backends' model lists.
type listCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]listEntry
}

type listEntry struct {
	ids     []string
	expires time.Time
}

func (c *listCache) get(key string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Now().After(e.expires) {
		return nil, false
	}
	return e.ids, true
}

func (c *listCache) put(key string, ids []string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]listEntry)
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxListCache {
		for k, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < maxListCache {
				break
			}
			delete(c.entries, k) // all still fresh: any one goes
		}
	}
	c.entries[key] = listEntry{ids, now.Add(c.ttl)}
}

// listCacheKey is the key of b's list for request r: the backend's name,
// and for a backend that is asked with the client's own credential, a
// hash of that credential, so one client's list is never another's.
func listCacheKey(r *http.Request, b *Backend) string {
	if !b.PassClientAuth {
		return b.name
	}
	sum := sha256.Sum256([]byte(redact.ClientKey(r.Header, r.URL.RawQuery)))
	return b.name + "\x00" + string(sum[:])
}

// backendLists returns the model ids of each named backend, in the order
// of names: from the cache, or asked of all the others at once. A backend
// that fails or does not answer within list_models_timeout has no ids.
func (l *Louter) backendLists(r *http.Request, names []string) [][]string {
	out := make([][]string, len(names))
	type answer struct {
		i   int
		ids []string
	}
	answers := make(chan answer, len(names)) // a late answer does not block
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if l.listTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, l.listTimeout)
	}
	defer cancel()
	asked := 0
	for i, name := range names {
		b := l.Backends[name]
		key := listCacheKey(r, b)
		if ids, ok := l.listCache.get(key); ok {
			out[i] = ids
			continue
		}
		asked++
		req := r.WithContext(ownVars(ctx))
		go func() {
			ids, err := l.fetchBackendModels(req, b)
			if err != nil {
				l.logger.Warn("listing the backend's models failed", zap.String("backend", name), zap.Error(err))
			} else {
				l.listCache.put(key, ids)
			}
			answers <- answer{i, ids}
		}()
	}
	for ; asked > 0; asked-- {
		select {
		case a := <-answers:
			out[a.i] = a.ids
		case <-ctx.Done():
			l.logger.Warn("backends did not list their models in time; answering without them", zap.Int("backends", asked), zap.Duration("list_models_timeout", l.listTimeout))
			return out
		}
	}
	return out
}

// ownVars gives ctx a copy of Caddy's request variables: reverse_proxy
// writes to them (caddyhttp.SetVar), unguarded, so calls running at once —
// or one still running once the list has been answered — must not share
// the request's map.
func ownVars(ctx context.Context) context.Context {
	vars, ok := ctx.Value(caddyhttp.VarsCtxKey).(map[string]any)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, caddyhttp.VarsCtxKey, maps.Clone(vars))
}

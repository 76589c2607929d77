package caddymodule

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// RouteFallback is a backend a model route falls back to when the backends
// before it in the route failed before the client received any content.
type RouteFallback struct {
	// The name of the backend (a key of backends) to try. It may speak
	// another protocol than the route's backend: the request is translated
	// for it.
	Backend string `json:"backend"`

	// The model name to ask this backend for. Empty keeps the client's
	// model name.
	Rename string `json:"rename,omitempty"`

	backend *Backend
}

// attemptFailure is why one attempt of a fallback chain failed with nothing
// sent to the client.
type attemptFailure struct {
	reason     string
	kind       string        // the upstream error kind (metrics.go), a metric label
	status     int           // the backend's status, or the one louter would answer
	retryAfter time.Duration // the backend's Retry-After, 0 when none
}

// provisionFallbacks resolves the backends the routes fall back to.
func (l *Louter) provisionFallbacks() {
	chains := false
	for i := range l.Models {
		for j := range l.Models[i].Fallbacks {
			fb := &l.Models[i].Fallbacks[j]
			fb.backend = l.Backends[fb.Backend]
			chains = true
		}
	}
	if chains {
		l.cooldowns = newCooldowns(time.Now)
	}
}

// validateFallbacks reports fallbacks that name no backend; route i is m.
func (m *ModelRoute) validateFallbacks(i int) []error {
	var errs []error
	for j, fb := range m.Fallbacks {
		if fb.backend == nil {
			errs = append(errs, fmt.Errorf("model route %d (%q): fallback %d: unknown backend %q", i, m.Match, j, fb.Backend))
		}
	}
	return errs
}

// routeTarget is one backend a request may go to, with the model name to
// ask it for ("" keeps the client's).
type routeTarget struct {
	backend *Backend
	rename  string
}

// upstream is the model the target's backend is asked for (the Azure
// deployment, the Bedrock model in the path): the rename, or the client's
// (the route's for an alias). Cooldowns are kept per backend and upstream.
func (t routeTarget) upstream(route *ModelRoute, model string) string {
	if t.rename != "" {
		return t.rename
	}
	return route.backendName(model)
}

// targets returns the backends of a route in the order to try them,
// leaving out those cooling down for the model each is asked for. When
// every one is cooling down, all are tried anyway: an answer from a busy
// backend beats none.
func (l *Louter) targets(route *ModelRoute, model string) []routeTarget {
	all := make([]routeTarget, 0, 1+len(route.Fallbacks))
	all = append(all, routeTarget{backend: route.backend, rename: route.Rename})
	for _, fb := range route.Fallbacks {
		all = append(all, routeTarget{backend: fb.backend, rename: fb.Rename})
	}
	out := all[:0:0]
	for _, t := range all {
		upstream := t.upstream(route, model)
		if until, cooling := l.cooldowns.cooling(t.backend.name, upstream); cooling {
			if c := l.logger.Check(zapcore.DebugLevel, "skipping a backend that is cooling down"); c != nil {
				c.Write(zap.String("backend", t.backend.name), zap.String("backend_model", upstream), zap.Time("until", until))
			}
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// serveChain serves a request on a route with fallbacks: each backend in
// turn, until one answers or the last has been tried. Only an attempt that
// failed before the client received anything is left for the next one; the
// last attempt answers whatever happens, as a route without fallbacks does.
func (l *Louter) serveChain(w http.ResponseWriter, r *http.Request, q *chatRequest, route *ModelRoute) error {
	targets := l.targets(route, q.model)
	snap := snapshotRequest(r)
	extra, _ := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	for i, t := range targets {
		if i > 0 {
			snap.restore(r)
		}
		last := i == len(targets)-1
		start := time.Now()
		failure, err := l.serveBackend(w, r, q, t, !last)
		if extra != nil && i > 0 {
			extra.Set(zap.Int("louter_attempts", i+1))
		}
		upstream := t.upstream(route, q.model)
		if failure == nil {
			if !last {
				l.cooldowns.succeeded(t.backend.name, upstream)
			}
			if c := l.logger.Check(zapcore.DebugLevel, "backend attempt answered"); c != nil {
				c.Write(zap.String("backend", t.backend.name), zap.Int("attempt", i+1), zap.Duration("duration", time.Since(start)))
			}
			return err
		}
		until := l.cooldowns.failed(t.backend.name, upstream, failure.retryAfter)
		l.metrics.fellBack(route.Match, t.backend.name, targets[i+1].backend.name, failure.kind) // metrics.go
		if c := l.logger.Check(zapcore.InfoLevel, "backend attempt failed; falling back"); c != nil {
			fields := []zap.Field{
				zap.String("backend", t.backend.name),
				zap.String("model", q.model),
				zap.String("backend_model", upstream),
				zap.Int("attempt", i+1),
				zap.String("reason", failure.reason),
				zap.Int("status", failure.status),
				zap.Duration("duration", time.Since(start)),
				zap.String("next", targets[i+1].backend.name),
			}
			if !until.IsZero() {
				fields = append(fields, zap.Time("cooldown_until", until))
			}
			c.Write(fields...)
		}
	}
	return nil // not reached: the last attempt always answers
}

// requestSnapshot is what rewriteRequest changes in Caddy's request, as the
// client sent it, so each attempt of a chain starts from the client's
// request. The body needs no copy: every attempt sets its own (setBody),
// from the client's body which louter keeps anyway.
type requestSnapshot struct {
	header     http.Header
	url        url.URL
	requestURI string
}

func snapshotRequest(r *http.Request) *requestSnapshot {
	return &requestSnapshot{header: r.Header.Clone(), url: *r.URL, requestURI: r.RequestURI}
}

// restore puts the client's headers, path and query back into r. The
// header map keeps its identity (Caddy's access log holds it), and its
// values are copied so the next rewrite cannot reach the snapshot. The
// credential of the last attempt lived in a derived request's context and
// is gone with it.
func (s *requestSnapshot) restore(r *http.Request) {
	clear(r.Header)
	for k, v := range s.header {
		r.Header[k] = slices.Clone(v)
	}
	*r.URL = s.url
	r.RequestURI = s.requestURI
}

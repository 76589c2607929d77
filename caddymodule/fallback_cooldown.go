package caddymodule

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cooldown rules for the backends of fallback chains. A backend that says
// how long to wait (429 or 503 with Retry-After) is skipped for that long,
// up to maxRetryAfter, so a burst of requests does not hammer it; one that
// fails failureThreshold times in a row without saying so is skipped for
// failureCooldown. Any success clears its record.
const (
	failureThreshold = 3
	failureCooldown  = 30 * time.Second
	maxRetryAfter    = 10 * time.Minute
)

// cooldowns records which backends of fallback chains to skip for now.
//
// The state is a plain map per Louter (per configuration load), not a
// caddy.UsagePool that would survive a reload: a reload is rare next to a
// Retry-After of seconds, may rename or re-point the backends the state is
// keyed by, and forgetting a cooldown only costs one more attempt at a
// backend that answers at once. The map holds at most one entry per
// configured backend, so it never grows.
type cooldowns struct {
	mu  sync.Mutex
	now func() time.Time // time.Now; tests use a fake clock
	m   map[string]*backendHealth
}

// backendHealth is one backend's record.
type backendHealth struct {
	until    time.Time // skipped before this
	failures int       // consecutive failures
}

func newCooldowns(now func() time.Time) *cooldowns {
	return &cooldowns{now: now, m: make(map[string]*backendHealth)}
}

// cooling reports whether the backend is to be skipped now, and until when.
func (c *cooldowns) cooling(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.m[name]
	if h == nil || h.until.IsZero() {
		return time.Time{}, false
	}
	if !c.now().Before(h.until) {
		h.until = time.Time{} // over; the failure count stays until a success
		return time.Time{}, false
	}
	return h.until, true
}

// failed records a failed attempt. retryAfter is how long the backend asked
// to be left alone (0: it did not say). It returns the end of the cooldown
// the failure started, or the zero time when none.
func (c *cooldowns) failed(name string, retryAfter time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.m[name]
	if h == nil {
		h = new(backendHealth)
		c.m[name] = h
	}
	h.failures++
	var d time.Duration
	switch {
	case retryAfter > 0:
		d = min(retryAfter, maxRetryAfter)
	case h.failures >= failureThreshold:
		d = failureCooldown
	default:
		return time.Time{}
	}
	until := c.now().Add(d)
	if until.After(h.until) {
		h.until = until
	}
	return h.until
}

// succeeded clears the backend's record. It takes the lock only when there
// is a record, which is the rare case.
func (c *cooldowns) succeeded(name string) {
	c.mu.Lock()
	if len(c.m) > 0 {
		delete(c.m, name)
	}
	c.mu.Unlock()
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date,
// relative to now. It returns 0 for a missing, malformed or past value.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return min(time.Duration(secs)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

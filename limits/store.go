// Package limits counts what clients of an API gateway use — requests,
// tokens, concurrent streams and money — in fixed time windows, and refuses
// what goes over a limit. It knows nothing of HTTP or Caddy: the counters
// live behind the Store interface (in memory here; a shared store lets
// several gateway instances enforce one limit), and time comes from a Clock
// so tests need not wait.
package limits

import (
	"context"
	"sync"
	"time"
)

// Store holds named counters. Each operation is atomic on its own, so
// instances sharing a store never lose an update to a read-modify-write
// race.
type Store interface {
	// Take adds n (> 0) to the counter key if the sum stays at or below
	// limit, and reports the counter's value afterwards (unchanged when
	// refused) and whether it was added. A counter that does not exist
	// starts at 0 and expires ttl after it was created; a ttl of 0 never
	// expires.
	Take(ctx context.Context, key string, n, limit int64, ttl time.Duration) (value int64, ok bool, err error)

	// Add adds n, which may be negative, to the counter key without a
	// limit and returns its new value; it creates the counter like Take.
	Add(ctx context.Context, key string, n int64, ttl time.Duration) (int64, error)

	// Get returns the counter's value, 0 for one that does not exist.
	Get(ctx context.Context, key string) (int64, error)
}

// Clock tells the time.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// MemoryStore is a Store in the process's memory, for one instance. Its
// expired counters are removed as new ones are created.
type MemoryStore struct {
	// Clock decides when counters expire; nil means the wall clock.
	Clock Clock

	mu       sync.Mutex
	counters map[string]*memCounter
	sweepAt  time.Time
}

type memCounter struct {
	value   int64
	expires time.Time // zero: never
}

// NewMemoryStore returns an empty MemoryStore using clock (nil: the wall
// clock).
func NewMemoryStore(clock Clock) *MemoryStore {
	return &MemoryStore{Clock: clock, counters: make(map[string]*memCounter)}
}

func (m *MemoryStore) now() time.Time {
	if m.Clock == nil {
		return time.Now()
	}
	return m.Clock.Now()
}

// counter returns the live counter of key, creating it; m.mu is held.
func (m *MemoryStore) counter(key string, ttl time.Duration) *memCounter {
	now := m.now()
	c := m.counters[key]
	if c != nil && !c.expires.IsZero() && !now.Before(c.expires) {
		c = nil
	}
	if c == nil {
		m.sweep(now)
		c = &memCounter{}
		if ttl > 0 {
			c.expires = now.Add(ttl)
		}
		m.counters[key] = c
	}
	return c
}

// sweep removes expired counters at most once a minute, so a map of
// per-window keys does not grow without bound; m.mu is held.
func (m *MemoryStore) sweep(now time.Time) {
	if now.Before(m.sweepAt) {
		return
	}
	m.sweepAt = now.Add(time.Minute)
	for k, c := range m.counters {
		if !c.expires.IsZero() && !now.Before(c.expires) {
			delete(m.counters, k)
		}
	}
}

// Take implements Store.
func (m *MemoryStore) Take(_ context.Context, key string, n, limit int64, ttl time.Duration) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counter(key, ttl)
	if c.value+n > limit {
		return c.value, false, nil
	}
	c.value += n
	return c.value, true, nil
}

// Add implements Store.
func (m *MemoryStore) Add(_ context.Context, key string, n int64, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counter(key, ttl)
	c.value += n
	return c.value, nil
}

// Get implements Store.
func (m *MemoryStore) Get(_ context.Context, key string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters[key]
	if c == nil || !c.expires.IsZero() && !m.now().Before(c.expires) {
		return 0, nil
	}
	return c.value, nil
}

// Interface guard
var _ Store = (*MemoryStore)(nil)

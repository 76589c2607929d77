package limits

import (
	"context"
	"errors"
	"sync"
	"time"
)

// This file keeps a shared store that is down from costing every request
// its timeout. Without it each request waited for the store to fail (a
// dial, or the timeout against a server that does not answer) before its
// degraded mode applied; with it the first failure opens the breaker, the
// calls after it fail at once, and one call at a time is let through now
// and then to find out whether the store is back.

// The cool-downs a Breaker uses when its own are unset.
const (
	DefaultMinCooldown = time.Second
	DefaultMaxCooldown = 30 * time.Second
)

// ErrStoreDown is the error of a call a Breaker refused without trying it:
// the store failed and has not answered since. errors.Is matches it; the
// error also unwraps to the failure that opened the breaker (or the last
// failed probe).
var ErrStoreDown = errors.New("limits: the store is down")

type storeDownError struct{ err error }

func (e *storeDownError) Error() string   { return ErrStoreDown.Error() + ": " + e.err.Error() }
func (e *storeDownError) Unwrap() []error { return []error{ErrStoreDown, e.err} }

// Breaker is a circuit breaker for a store. Closed, it lets every call
// through. A call that fails opens it: for a cool-down every call fails
// at once with ErrStoreDown. After the cool-down one call, the probe, is
// let through while the others still fail at once; if it succeeds the
// breaker closes, if it fails the cool-down doubles, up to MaxCooldown.
// A call cancelled by its caller tells nothing about the store and
// counts neither way.
type Breaker struct {
	Clock Clock // nil: the wall clock
	// The first cool-down and the longest; 0: DefaultMinCooldown and
	// DefaultMaxCooldown.
	MinCooldown, MaxCooldown time.Duration
	// OnDown is called once when the breaker opens, with the failure;
	// OnUp once when it closes again, with how long it was open. They
	// are called without the breaker's lock held, in the failing or
	// probing call.
	OnDown func(err error)
	OnUp   func(down time.Duration)

	mu       sync.Mutex
	open     bool
	since    time.Time     // when it opened
	cooldown time.Duration // the current one
	retryAt  time.Time     // when the next probe may go
	probing  bool          // a probe is in flight
	err      error         // the failure that opened it, or the last probe's
}

func (b *Breaker) now() time.Time {
	if b.Clock == nil {
		return time.Now()
	}
	return b.Clock.Now()
}

// Open reports whether calls are failing fast.
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// start asks to make a call. It returns an ErrStoreDown error when the
// call must not go, or whether the call is the probe.
func (b *Breaker) start() (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return false, nil
	}
	if b.probing || b.now().Before(b.retryAt) {
		return false, &storeDownError{b.err}
	}
	b.probing = true
	return true, nil
}

// end reports how a call that start let through went; ctx is the
// call's.
func (b *Breaker) end(ctx context.Context, probe bool, err error) {
	cancelled := err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
	b.mu.Lock()
	now := b.now()
	var onDown func(error)
	var onUp func(time.Duration)
	var downFor time.Duration
	switch {
	case cancelled:
		if probe {
			b.probing = false // the next call probes
		}
	case err == nil:
		// Only the probe closes it: a call that began before the
		// breaker opened says less about the store now.
		if probe {
			b.open, b.probing = false, false
			onUp, downFor = b.OnUp, now.Sub(b.since)
		}
	case !b.open:
		b.open, b.since, b.err = true, now, err
		b.cooldown = b.MinCooldown
		if b.cooldown <= 0 {
			b.cooldown = DefaultMinCooldown
		}
		b.retryAt = now.Add(b.cooldown)
		onDown = b.OnDown
	case probe:
		maxCooldown := b.MaxCooldown
		if maxCooldown <= 0 {
			maxCooldown = DefaultMaxCooldown
		}
		b.probing, b.err = false, err
		b.cooldown = min(2*b.cooldown, max(maxCooldown, b.cooldown))
		b.retryAt = now.Add(b.cooldown)
	}
	b.mu.Unlock()
	if onDown != nil {
		onDown(err)
	}
	if onUp != nil {
		onUp(downFor)
	}
}

// Do runs f, a call to the store, through the breaker: another store on
// the same server (the stored responses, package state) shares it.
func (b *Breaker) Do(ctx context.Context, f func() error) error { return b.do(ctx, f) }

// do runs f, a call to the store, through the breaker.
func (b *Breaker) do(ctx context.Context, f func() error) error {
	probe, err := b.start()
	if err != nil {
		return err
	}
	err = f()
	b.end(ctx, probe, err)
	return err
}

// SharedStore is a store that processes share, with batches and leased
// concurrency slots: RedisStore.
type SharedStore interface {
	Store
	Leaser
}

// BreakerStore is a SharedStore behind a Breaker: while the store is
// down its calls fail at once with ErrStoreDown instead of each waiting
// for its own failure.
type BreakerStore struct {
	Store   SharedStore
	Breaker *Breaker
}

// Take implements Store.
func (s *BreakerStore) Take(ctx context.Context, key string, n, limit int64, ttl time.Duration) (v int64, ok bool, err error) {
	err = s.Breaker.do(ctx, func() (err error) {
		v, ok, err = s.Store.Take(ctx, key, n, limit, ttl)
		return err
	})
	return v, ok, err
}

// Add implements Store.
func (s *BreakerStore) Add(ctx context.Context, key string, n int64, ttl time.Duration) (v int64, err error) {
	err = s.Breaker.do(ctx, func() (err error) {
		v, err = s.Store.Add(ctx, key, n, ttl)
		return err
	})
	return v, err
}

// Get implements Store.
func (s *BreakerStore) Get(ctx context.Context, key string) (v int64, err error) {
	err = s.Breaker.do(ctx, func() (err error) {
		v, err = s.Store.Get(ctx, key)
		return err
	})
	return v, err
}

// TakeAll implements Batcher.
func (s *BreakerStore) TakeAll(ctx context.Context, steps []Step) (values []int64, refused int, err error) {
	err = s.Breaker.do(ctx, func() (err error) {
		values, refused, err = s.Store.TakeAll(ctx, steps)
		return err
	})
	return values, refused, err
}

// AddAll implements Batcher.
func (s *BreakerStore) AddAll(ctx context.Context, deltas []Delta) error {
	return s.Breaker.do(ctx, func() error { return s.Store.AddAll(ctx, deltas) })
}

// Renew implements Leaser. While the store is down a renewal fails at
// once; the lease runs on in the store, and the renewal a third of a
// lease later tries again.
func (s *BreakerStore) Renew(ctx context.Context, key, slot string, lease time.Duration) error {
	return s.Breaker.do(ctx, func() error { return s.Store.Renew(ctx, key, slot, lease) })
}

// Release implements Leaser.
func (s *BreakerStore) Release(ctx context.Context, key, slot string) error {
	return s.Breaker.do(ctx, func() error { return s.Store.Release(ctx, key, slot) })
}

// Interface guards
var (
	_ SharedStore = (*BreakerStore)(nil)
	_ SharedStore = (*RedisStore)(nil)
)

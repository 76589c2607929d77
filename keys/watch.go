package keys

import (
	"context"
	"sync"
	"time"
)

// DefaultPoll is how often a Watcher checks the table's version when the
// store does not tell of changes, or may have missed one.
const DefaultPoll = 5 * time.Second

// Watcher keeps a process's copy of a Store's table current: it loads the
// table when its version changes, found by a poll every Poll, or at once
// when the store is a Notifier that signals; Sync loads it on demand.
type Watcher struct {
	Store Store
	// Poll is how often the version is checked; 0 means DefaultPoll.
	Poll time.Duration
	// OnChange receives each new table; it is called from one goroutine
	// at a time.
	OnChange func(Table)
	// OnError is told of a failed load or poll (nil: ignored); the next
	// poll tries again.
	OnError func(error)

	mu      sync.Mutex // one check at a time, so a later load is never older
	version int64
	loaded  bool
}

// Start loads the table once (within timeout; OnChange receives it, or
// OnError the failure) and then watches it until ctx ends.
func (w *Watcher) Start(ctx context.Context, timeout time.Duration) {
	w.check(ctx, timeout, true)
	go w.run(ctx, timeout)
}

// Sync loads the table now and hands it to OnChange before it returns
// (a write this process made, which must be in force when its answer
// goes). The error is the load's.
func (w *Watcher) Sync(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, err := w.Store.Load(ctx)
	if err != nil {
		return err
	}
	w.version, w.loaded = t.Version, true
	w.OnChange(t)
	return nil
}

func (w *Watcher) run(ctx context.Context, timeout time.Duration) {
	poll := w.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	var changes <-chan struct{}
	if n, ok := w.Store.(Notifier); ok {
		changes = n.Changes(ctx)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check(ctx, timeout, false)
		case <-changes:
			w.check(ctx, timeout, false)
		}
	}
}

// check loads the table if its version moved (or always, when force).
func (w *Watcher) check(ctx context.Context, timeout time.Duration, force bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !force && w.loaded {
		v, err := w.Store.Version(cctx)
		if err != nil {
			w.fail(ctx, err)
			return
		}
		if v == w.version {
			return
		}
	}
	t, err := w.Store.Load(cctx)
	if err != nil {
		w.fail(ctx, err)
		return
	}
	w.version, w.loaded = t.Version, true
	w.OnChange(t)
}

func (w *Watcher) fail(ctx context.Context, err error) {
	if w.OnError != nil && ctx.Err() == nil {
		w.OnError(err)
	}
}

package caddymodule

import (
	"slices"
	"sync"
)

// registry lists what the loaded handlers hold that a process-wide admin
// endpoint reads (the handlers themselves, their Redis ledgers, their key
// tables), the latest added last. A handler adds its own at Provision and
// takes it off at Cleanup, which Caddy calls when the config is unloaded
// or fails to load (diagnostics_admin.go says why not ctx.OnCancel). Safe
// for concurrent use; the zero value is empty and ready.
type registry[T comparable] struct {
	mu   sync.Mutex
	list []T
}

// add lists x until the returned function is called.
func (r *registry[T]) add(x T) (remove func()) {
	r.mu.Lock()
	r.list = append(r.list, x)
	r.mu.Unlock()
	return func() { r.removeIf(func(y T) bool { return y == x }) }
}

// removeIf takes off what match says.
func (r *registry[T]) removeIf(match func(T) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = slices.DeleteFunc(r.list, match)
}

// all is a copy of the list, the latest last.
func (r *registry[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// latest is the one added last, or the zero T when there is none.
func (r *registry[T]) latest() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var zero T
	if n := len(r.list); n > 0 {
		return r.list[n-1]
	}
	return zero
}

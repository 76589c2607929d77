package state

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Memory is a Store in the process's memory: bounded by bytes, least
// recently used records evicted first, each expiring TTL after it was
// last read or written.
type Memory struct {
	// MaxBytes bounds the records' total size (their bytes plus a small
	// fixed overhead each). 0: DefaultMaxBytes.
	MaxBytes int64
	// TTL is how long a record lives after it was last stored or read.
	// 0: DefaultTTL.
	TTL time.Duration
	// Clock: nil is the wall clock.
	Clock Clock

	mu    sync.Mutex
	items map[memKey]*list.Element // of *memEntry
	lru   list.List                // front: most recently used
	bytes int64
}

// The defaults of a Memory store.
const (
	DefaultMaxBytes = 256 << 20
	DefaultTTL      = 24 * time.Hour
)

type memKey struct{ owner, id string }

type memEntry struct {
	rec     Record
	expires time.Time
	size    int64
}

var _ Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Clock == nil {
		return time.Now()
	}
	return m.Clock.Now()
}

func (m *Memory) ttl() time.Duration {
	if m.TTL <= 0 {
		return DefaultTTL
	}
	return m.TTL
}

func (m *Memory) maxBytes() int64 {
	if m.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return m.MaxBytes
}

// Bytes returns what the stored records cost, as MaxBytes counts it.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// Len returns the number of records held (expired ones not yet swept
// included).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// Put implements Store. A record larger than MaxBytes is not kept.
func (m *Memory) Put(_ context.Context, rec Record) error {
	rec.Data = append([]byte(nil), rec.Data...)
	e := &memEntry{rec: rec, size: rec.size()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[memKey]*list.Element)
	}
	now := m.now()
	e.expires = now.Add(m.ttl())
	k := memKey{rec.Owner, rec.ID}
	if old, ok := m.items[k]; ok {
		m.remove(old)
	}
	if e.size > m.maxBytes() {
		return nil
	}
	m.items[k] = m.lru.PushFront(e)
	m.bytes += e.size
	m.evict(now)
	return nil
}

// evict drops expired records from the back of the list and then the
// least recently used until the total fits. m.mu is held.
func (m *Memory) evict(now time.Time) {
	for el := m.lru.Back(); el != nil; {
		e := el.Value.(*memEntry)
		prev := el.Prev()
		if m.bytes <= m.maxBytes() && now.Before(e.expires) {
			break
		}
		m.remove(el)
		el = prev
	}
}

func (m *Memory) remove(el *list.Element) {
	e := el.Value.(*memEntry)
	m.lru.Remove(el)
	delete(m.items, memKey{e.rec.Owner, e.rec.ID})
	m.bytes -= e.size
}

// lookup returns the live entry, touching it. m.mu is held.
func (m *Memory) lookup(owner, id string, now time.Time) (*memEntry, bool) {
	el, ok := m.items[memKey{owner, id}]
	if !ok {
		return nil, false
	}
	e := el.Value.(*memEntry)
	if !now.Before(e.expires) {
		m.remove(el)
		return nil, false
	}
	e.expires = now.Add(m.ttl())
	m.lru.MoveToFront(el)
	return e, true
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, owner, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.lookup(owner, id, m.now())
	if !ok {
		return Record{}, ErrNotFound
	}
	return e.rec, nil
}

// Chain implements Store.
func (m *Memory) Chain(_ context.Context, owner, id string, max int) ([]Record, error) {
	if max <= 0 {
		max = DefaultMaxChain
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []Record
	for cur := id; cur != ""; {
		if len(out) == max {
			return nil, ErrChainTooLong
		}
		e, ok := m.lookup(owner, cur, now)
		if !ok {
			return nil, ErrNotFound
		}
		out = append(out, e.rec)
		cur = e.rec.Previous
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[memKey{owner, id}]
	if !ok {
		return ErrNotFound
	}
	expired := !m.now().Before(el.Value.(*memEntry).expires)
	m.remove(el)
	if expired {
		return ErrNotFound
	}
	return nil
}

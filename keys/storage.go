package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// Storage is the part of a key-value storage StorageStore needs: what
// certmagic.Storage (Caddy's storage) provides. Load of a missing key
// fails with an error matching fs.ErrNotExist.
type Storage interface {
	Load(ctx context.Context, key string) ([]byte, error)
	Store(ctx context.Context, key string, value []byte) error
	Lock(ctx context.Context, name string) error
	Unlock(ctx context.Context, name string) error
}

// StorageStore is a Store kept as one JSON document (a Table) under Key in
// a Storage, written under the storage's lock named Key. Instances that
// share the storage (a shared file system, a storage module backed by a
// database) share the table; they notice changes by polling its version.
type StorageStore struct {
	Storage Storage
	Key     string
}

// Load implements Store; a missing document is an empty table.
func (s *StorageStore) Load(ctx context.Context) (Table, error) {
	b, err := s.Storage.Load(ctx, s.Key)
	if errors.Is(err, fs.ErrNotExist) {
		return Table{Entries: map[string]Entry{}}, nil
	}
	if err != nil {
		return Table{}, err
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return Table{}, fmt.Errorf("keys: %s: %w", s.Key, err)
	}
	if t.Entries == nil {
		t.Entries = map[string]Entry{}
	}
	return t, nil
}

// Version implements Store. It reads the whole document: the storage has
// nothing smaller.
func (s *StorageStore) Version(ctx context.Context) (int64, error) {
	t, err := s.Load(ctx)
	return t.Version, err
}

// change applies f to the table under the lock and writes it with the
// next version.
func (s *StorageStore) change(ctx context.Context, f func(*Table) error) (err error) {
	if err := s.Storage.Lock(ctx, s.Key); err != nil {
		return err
	}
	defer func() {
		if uerr := s.Storage.Unlock(context.WithoutCancel(ctx), s.Key); err == nil {
			err = uerr
		}
	}()
	t, err := s.Load(ctx)
	if err != nil {
		return err
	}
	if err := f(&t); err != nil {
		return err
	}
	t.Version++
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.Storage.Store(ctx, s.Key, b)
}

// Create implements Store.
func (s *StorageStore) Create(ctx context.Context, e Entry) error {
	return s.change(ctx, func(t *Table) error {
		if _, ok := t.Entries[e.Name]; ok {
			return ErrExists
		}
		t.Entries[e.Name] = e
		return nil
	})
}

// Update implements Store.
func (s *StorageStore) Update(ctx context.Context, name string, f func(*Entry) error) error {
	return s.change(ctx, func(t *Table) error {
		e, ok := t.Entries[name]
		if !ok {
			return ErrNotFound
		}
		if err := f(&e); err != nil {
			return err
		}
		e.Name = name
		t.Entries[name] = e
		return nil
	})
}

// Delete implements Store.
func (s *StorageStore) Delete(ctx context.Context, name string) error {
	return s.change(ctx, func(t *Table) error {
		if _, ok := t.Entries[name]; !ok {
			return ErrNotFound
		}
		delete(t.Entries, name)
		return nil
	})
}

// Interface guard
var _ Store = (*StorageStore)(nil)

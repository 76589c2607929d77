// Package keys keeps client keys created at run time: a table of named
// entries, each holding the SHA-256 of its key (never the key) and an
// opaque spec (the gateway's models and limits), with a version that
// changes on every write so that every process sharing the store can tell
// it must reload. It knows nothing of HTTP or Caddy.
//
// Two stores: RedisStore (shared by every instance on one server; a
// change is also published, so watchers reload at once) and StorageStore
// (one JSON document in a key-value storage such as Caddy's, under its
// lock; watchers find changes by polling). A Watcher keeps a process's
// copy of the table current.
//
// Keys are generated here (New): 32 random bytes, so their SHA-256 needs
// no salt or slow hash, and a lookup by hash leaks nothing useful.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Entry is one key of the table.
type Entry struct {
	// Name is the client's name, unique in the table.
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the key.
	SHA256 string `json:"sha256"`
	// Spec is what the gateway stores with the key (its models and
	// limits), opaque here.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Created is when the entry was created; Rotated when its key was
	// last replaced (zero: never).
	Created time.Time `json:"created"`
	Rotated time.Time `json:"rotated,omitzero"`
}

// Table is the whole table at one version.
type Table struct {
	Version int64            `json:"version"`
	Entries map[string]Entry `json:"entries"`
}

// Errors of a Store's writes; errors.Is matches them.
var (
	ErrExists   = errors.New("keys: an entry of that name exists")
	ErrNotFound = errors.New("keys: no entry of that name")
)

// Store keeps the table. Its writes are atomic: two processes creating
// the same name at once get one entry and one ErrExists.
type Store interface {
	// Load returns the table.
	Load(ctx context.Context) (Table, error)
	// Version returns the table's version, cheaply, for polling.
	Version(ctx context.Context) (int64, error)
	// Create adds e, or fails with ErrExists.
	Create(ctx context.Context, e Entry) error
	// Update replaces the entry named name with what f makes of it, or
	// fails with ErrNotFound (or f's error).
	Update(ctx context.Context, name string, f func(*Entry) error) error
	// Delete removes the entry, or fails with ErrNotFound.
	Delete(ctx context.Context, name string) error
}

// Notifier is a Store that tells of changes as they happen: Changes
// returns a channel that receives after each change (possibly merged),
// until ctx ends. It may miss changes (a dropped connection): watchers
// poll too.
type Notifier interface {
	Changes(ctx context.Context) <-chan struct{}
}

// keyPrefix starts every generated key, so a leaked one is recognisable
// (secret scanners) and never mistaken for a provider's.
const keyPrefix = "lk_"

// New returns a new random key and its hex SHA-256.
func New() (key, sha string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("keys: generating a key: %w", err)
	}
	key = keyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, Hash(key), nil
}

// Hash returns the hex SHA-256 of key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

package state

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"strings"
	"time"
)

// ErrNotFound is the error of a read, chain or deletion whose record does
// not exist, expired, was evicted, or belongs to another owner.
var ErrNotFound = errors.New("state: not found")

// Record is one stored turn.
type Record struct {
	// ID is the record's id, unique in the store (NewID mints one).
	ID string
	// Owner is the identity of the client the record belongs to.
	Owner string
	// Previous is the id of the turn this one continues, or "".
	Previous string
	// Created is when the turn was stored.
	Created time.Time
	// Data is the turn itself, in the caller's encoding. The store
	// keeps its own copy on Put; what Get and Chain return must not be
	// modified.
	Data []byte
}

// size is what the record costs a memory store: its bytes plus a fixed
// overhead for the bookkeeping.
func (r *Record) size() int64 {
	return int64(len(r.ID)+len(r.Owner)+len(r.Previous)+len(r.Data)) + recordOverhead
}

// recordOverhead approximates the memory a record costs beyond its bytes
// (the map entry, the list element, the struct).
const recordOverhead = 200

// Store keeps records. Errors other than ErrNotFound are the store's own
// (Redis unreachable): the caller decides whether to fail the request.
type Store interface {
	// Put stores rec (a copy of its Data). A record with the same owner
	// and id is replaced.
	Put(ctx context.Context, rec Record) error
	// Get returns the owner's record id and renews its TTL.
	Get(ctx context.Context, owner, id string) (Record, error)
	// Chain returns the owner's record id and its predecessors, oldest
	// first, renewing the TTL of each. It fails with ErrNotFound when
	// any of them is missing, and with ErrChainTooLong past max records
	// (max <= 0: DefaultMaxChain).
	Chain(ctx context.Context, owner, id string, max int) ([]Record, error)
	// Delete removes the owner's record id (not its predecessors).
	Delete(ctx context.Context, owner, id string) error
}

// ErrChainTooLong is the error of a Chain longer than its bound.
var ErrChainTooLong = errors.New("state: chain too long")

// DefaultMaxChain bounds a Chain when its caller does not.
const DefaultMaxChain = 10000

// Clock tells the time; tests use a fake one.
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns prefix followed by 160 random bits from crypto/rand, in
// lower-case base32: "resp_" + 32 characters.
func NewID(prefix string) string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return prefix + strings.ToLower(idEncoding.EncodeToString(b[:]))
}
